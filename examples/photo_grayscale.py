"""A real photograph to grayscale with the lecture's kernel, on the GPU when
there is one, else on lockstep's CPU emulator; writes a PNG.

    pip install ".[examples]"      # Pillow and scikit-image
    python examples/photo_grayscale.py                        # scikit-image's sample photo (a cat)
    python examples/photo_grayscale.py photo.jpg -o gray.png  # your own
    python examples/photo_grayscale.py --device cpu

The photo is decoded with Pillow into a (H, W, 3) array; lockstep reads it
in place as a channels-first (3, H, W) view, with no copy on the CPU. The
result is checked against NumPy before it is written.
"""

import argparse
import sys
import time

import numpy as np

import lockstep


def load_photo(path):
    """(H, W, 3) uint8 RGB: the file at ``path``, or scikit-image's bundled photo of a cat."""
    if path:
        from PIL import Image

        with Image.open(path) as photo:
            return np.asarray(photo.convert("RGB")), path
    import skimage.data

    return skimage.data.chelsea(), "skimage.data.chelsea()"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("photo", nargs="?", help="an image file Pillow can read (default: scikit-image's sample photo)")
    parser.add_argument("-o", "--output", default="grayscale.png", help="the PNG to write (default: %(default)s)")
    parser.add_argument(
        "--device", default="cuda:0" if lockstep.cuda_available() else "cpu", help='"cpu" (the emulator) or "cuda:N" (default: %(default)s)'
    )
    parser.add_argument("--launch", choices=["1d", "2d"], default="2d", help="the kernel's launch shape (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        from PIL import Image

        rgb, name = load_photo(args.photo)
    except ImportError as missing:
        print(f'{missing}: this example needs Pillow and scikit-image: pip install ".[examples]"', file=sys.stderr)
        return 2

    hwc = lockstep.asarray(rgb, device=args.device)  # in place on "cpu", one copy to a GPU
    chw = hwc.permute([2, 0, 1])  # the kernel's channels-first layout, as a view
    lockstep.rgb_to_grayscale(chw, launch=args.launch)  # warm up: loads the kernels
    lockstep.synchronize(args.device)
    start = time.perf_counter()
    gray = lockstep.rgb_to_grayscale(chw, launch=args.launch)
    lockstep.synchronize(args.device)
    seconds = time.perf_counter() - start
    result = gray.to("cpu").numpy()

    reference = np.floor(rgb.astype(np.float64) @ np.array([0.2989, 0.5870, 0.1140])).astype(np.uint8)
    diff = np.abs(result.astype(np.int16) - reference.astype(np.int16))
    Image.fromarray(result).save(args.output)  # 2-D uint8: mode "L"
    print(
        f"{name}: {rgb.shape[1]}x{rgb.shape[0]} RGB -> {args.output} ({args.device}, {lockstep.device(args.device).name_of_hardware}, "
        f"{args.launch} launch, {seconds * 1e3:.2f} ms); mean grey {result.mean():.1f}, max difference from NumPy {diff.max()}"
    )
    if diff.max() > 1 or np.count_nonzero(diff) > diff.size // 1000:
        print("the result differs from NumPy's", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
