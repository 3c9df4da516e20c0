// lockstep._core: the emulator's options and the lecture kernels, for Python.
//
// The Python package (python/lockstep/__init__.py) checks arguments and gives
// the user-facing errors; the checks here only keep a direct call from reading
// or writing out of bounds.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "lecture_kernels.h"
#include "lockstep/emu/options.h"
#include "lockstep/errors.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// Inputs are NumPy arrays used in place: no conversion is allowed (the
// arguments are .noconvert()), so a wrong dtype or layout is refused rather
// than silently copied.
using image_in = nb::ndarray<const std::uint8_t, nb::ndim<3>, nb::c_contig, nb::device::cpu>;
using matrix_in = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
template <class T>
using numpy_matrix = nb::ndarray<nb::numpy, T, nb::ndim<2>, nb::c_contig>;

// A new (rows, cols) NumPy array that owns its buffer, filled with `fill`.
template <class T>
numpy_matrix<T> new_matrix(std::size_t rows, std::size_t cols, T fill) {
  T* data = new T[rows * cols];
  std::fill(data, data + rows * cols, fill);
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  return numpy_matrix<T>(data, {rows, cols}, owner);
}

// The kernels index with 32-bit int, as the lectures' kernels do.
void check_int_indexable(std::size_t elements, const char* what) {
  if (elements > static_cast<std::size_t>(INT_MAX))
    throw nb::value_error((std::string(what) + " is too large: the kernels index it with 32-bit int").c_str());
}

numpy_matrix<std::uint8_t> rgb_to_grayscale(const image_in& image, const std::string& launch) {
  if (launch != "1d" && launch != "2d") throw nb::value_error(("launch must be '1d' or '2d', got '" + launch + "'").c_str());
  if (image.shape(0) != 3) throw nb::value_error("image must have shape (3, height, width)");
  const std::size_t height = image.shape(1), width = image.shape(2);
  check_int_indexable(3 * height * width, "image");
  auto gray = new_matrix<std::uint8_t>(height, width, 0);
  if (gray.size() == 0) return gray;  // a launch needs at least one block
  {
    nb::gil_scoped_release no_gil;  // the kernel touches no Python object
    const int w = static_cast<int>(width), h = static_cast<int>(height);
    if (launch == "1d")
      lockstep::python::rgb_to_grayscale_1d(gray.data(), image.data(), w, h);
    else
      lockstep::python::rgb_to_grayscale_2d(gray.data(), image.data(), w, h);
  }
  return gray;
}

numpy_matrix<float> matmul(const matrix_in& a, const matrix_in& b, const std::string& algo) {
  auto* run = algo == "naive"           ? &lockstep::python::matmul_naive
              : algo == "tiled_static"  ? &lockstep::python::matmul_tiled_static
              : algo == "tiled_dynamic" ? &lockstep::python::matmul_tiled_dynamic
                                        : nullptr;
  if (!run)
    throw nb::value_error(("algo must be 'naive', 'tiled_static' or 'tiled_dynamic', got '" + algo + "'").c_str());
  const std::size_t m = a.shape(0), k = a.shape(1), n = b.shape(1);
  if (b.shape(0) != k) throw nb::value_error("matmul: inner dimensions differ");
  check_int_indexable(m * k, "a");
  check_int_indexable(k * n, "b");
  check_int_indexable(m * n, "the product");
  // NaN until written, so an element a kernel skips shows up in the result.
  auto c = new_matrix<float>(m, n, std::numeric_limits<float>::quiet_NaN());
  if (c.size() == 0) return c;
  {
    nb::gil_scoped_release no_gil;
    run(a.data(), b.data(), c.data(), static_cast<int>(m), static_cast<int>(n), static_cast<int>(k));
  }
  return c;
}

nb::dict emulator_options() {
  const lockstep::emu::options o = lockstep::emu::get_options();
  nb::dict d;
  d["workers"] = o.workers;
  d["order"] = lockstep::emu::to_string(o.order);
  d["seed"] = o.seed;
  d["stack_kib"] = o.stack_bytes / 1024;
  return d;
}

void set_emulator_options(std::optional<unsigned> workers, std::optional<std::string> order, std::optional<std::uint64_t> seed,
                          std::optional<std::size_t> stack_kib) {
  lockstep::emu::options o = lockstep::emu::get_options();
  if (workers) o.workers = *workers;
  if (order) {
    // Only the three names; the environment variable's "random:SEED" form is
    // spelled here as order="random", seed=SEED.
    if (*order == "forward") o.order = lockstep::emu::thread_order::forward;
    else if (*order == "reverse") o.order = lockstep::emu::thread_order::reverse;
    else if (*order == "random") o.order = lockstep::emu::thread_order::random;
    else throw nb::value_error(("order must be one of 'forward', 'reverse', 'random', got '" + *order + "'").c_str());
  }
  if (seed) o.seed = *seed;
  if (stack_kib) o.stack_bytes = *stack_kib * 1024;
  lockstep::emu::set_options(o);  // std::invalid_argument (stack too small) becomes ValueError
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "lockstep's compiled core: the CUDA emulator's options and the lecture kernels run on it.";

  // Translators are tried newest first, so the base class is registered first.
  nb::exception<lockstep::cuda_error> cuda_error(m, "CudaError", PyExc_RuntimeError);
  nb::exception<lockstep::launch_error>(m, "LaunchError", cuda_error);
  nb::exception<lockstep::kernel_error>(m, "KernelError", cuda_error);

  m.def("emulator_options", &emulator_options,
        "Return the emulator's options as a dict with keys workers, order, seed and stack_kib.");
  m.def("set_emulator_options", &set_emulator_options, "workers"_a = nb::none(), "order"_a = nb::none(),
        "seed"_a = nb::none(), "stack_kib"_a = nb::none(),
        "Change the emulator options that are given (not None); the others keep their values.\n\n"
        "workers: OS threads running blocks (0 = one per core). order: 'forward', 'reverse' or 'random',\n"
        "the order in which a block's threads run between barriers. seed: for order='random'.\n"
        "stack_kib: stack per emulated thread, at least 16. Raises ValueError for a bad value.");
  m.def("rgb_to_grayscale", &rgb_to_grayscale, "image"_a.noconvert(), "launch"_a = "2d",
        "Grayscale of a (3, H, W) C-contiguous uint8 image as a new (H, W) uint8 array, computed by\n"
        "kernels/grayscale.cu on the emulator with a '1d' or '2d' launch. Arguments are not checked\n"
        "beyond safety here; use lockstep.rgb_to_grayscale.");
  m.def("matmul", &matmul, "a"_a.noconvert(), "b"_a.noconvert(), "algo"_a = "tiled_static",
        "a @ b for C-contiguous float32 matrices as a new float32 array, computed by kernels/matmul.cu\n"
        "on the emulator with algo 'naive', 'tiled_static' or 'tiled_dynamic'. Arguments are not\n"
        "checked beyond safety here; use lockstep.matmul.");
}
