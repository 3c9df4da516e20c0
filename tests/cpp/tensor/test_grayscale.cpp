// rgb_to_grayscale: the lecture's kernel, 1-D and 2-D launches, vectorized
// (bit-exact against the kernels' float arithmetic, aligned or not), batches,
// channels-last and strided images, against the lecture's reference
// floor(0.2989 r + 0.5870 g + 0.1140 b) in double; and the errors.
#include <cmath>

#include "tensor_test_util.h"

namespace tensor_testing {
namespace {

using lockstep::shape_error;
using Grayscale = tensor_test<device>;

const value_range any_byte{0, 255};

// Grey levels of (..., 3, H, W) images given row-major, as (..., H, W).
std::vector<double> grayscale_reference(const std::vector<double>& rgb, const shape_t& shape) {
  const std::int64_t pixels = shape[shape.size() - 2] * shape.back(), images = element_count(shape) / std::max<std::int64_t>(3 * pixels, 1);
  std::vector<double> grey;
  for (std::int64_t image = 0; image < images; ++image) {
    const double* planes = rgb.data() + image * 3 * pixels;
    for (std::int64_t p = 0; p < pixels; ++p)
      grey.push_back(std::floor(0.2989 * planes[p] + 0.5870 * planes[p + pixels] + 0.1140 * planes[p + 2 * pixels]));
  }
  return grey;
}

// The kernel computes in float: a pixel whose exact grey level is within
// float rounding of an integer may come out 1 lower or higher. That is rare
// (about 1 in 10^4 pixels); more, or any larger difference, is a bug.
void expect_grayscale(const random_view& image, const std::string& launch, const device& d) {
  const shape_t& shape = image.view.shape();
  shape_t grey_shape = shape;
  grey_shape.erase(grey_shape.end() - 3);
  const tensor grey = lockstep::rgb_to_grayscale(image.view, launch);
  ASSERT_TRUE(is_new_output(grey, grey_shape, dtype::uint8, d));
  const std::vector<double> want = grayscale_reference(elements(image.source, image.view), shape);
  const std::vector<double> got = read_back(grey);
  EXPECT_TRUE(all_within(got, want, std::vector<double>(want.size(), 1.0), grey_shape));
  std::size_t off_by_one = 0;
  for (std::size_t i = 0; i < want.size(); ++i) off_by_one += got[i] != want[i];
  EXPECT_LE(off_by_one, 1 + want.size() / 1000) << "pixels 1 away from the reference";
}

TEST_P(Grayscale, OneImageBothLaunches) {
  for (const shape_t& shape : {shape_t{3, 1, 1}, shape_t{3, 17, 33}, shape_t{3, 16, 16}, shape_t{3, 45, 255}}) {
    for (const std::string launch : {"1d", "2d"}) {
      SCOPED_TRACE(shape_text(shape) + " " + launch);
      expect_grayscale(make_view(shape, layout_kind::contiguous, dtype::uint8, dev(), any_byte, rng), launch, dev());
    }
  }
}

TEST_P(Grayscale, Batches) {
  for (const shape_t& shape : {shape_t{3, 3, 17, 33}, shape_t{1, 3, 1, 1}, shape_t{2, 3, 40, 7}}) {
    SCOPED_TRACE(shape_text(shape));
    expect_grayscale(make_view(shape, layout_kind::contiguous, dtype::uint8, dev(), any_byte, rng), "2d", dev());
  }
}

TEST_P(Grayscale, ChannelsLastAndStridedImages) {
  const std::int64_t h = 19, w = 23;
  {
    SCOPED_TRACE("(H, W, 3) permuted to (3, H, W)");
    random_view image;
    image.source = random_tensor({h, w, 3}, dtype::uint8, dev(), any_byte, rng);
    image.view = image.source.t.permute({2, 0, 1});
    for (const std::string launch : {"1d", "2d"}) expect_grayscale(image, launch, dev());
  }
  {
    SCOPED_TRACE("(B, H, W, 3) permuted to (B, 3, H, W)");
    random_view batch;
    batch.source = random_tensor({2, h, w, 3}, dtype::uint8, dev(), any_byte, rng);
    batch.view = batch.source.t.permute({0, 3, 1, 2});
    expect_grayscale(batch, "2d", dev());
  }
  for (layout_kind layout : {layout_kind::transposed, layout_kind::strided_slice, layout_kind::expanded}) {
    SCOPED_TRACE(layout_name(layout));
    expect_grayscale(make_view({3, h, w}, layout, dtype::uint8, dev(), any_byte, rng), "2d", dev());
    expect_grayscale(make_view({2, 3, h, w}, layout, dtype::uint8, dev(), any_byte, rng), "2d", dev());
  }
}

// The kernels' arithmetic, (0.2989 r + 0.5870 g) + 0.1140 b in float with
// each operation rounded (no FMA), truncated: every launch gives these bits.
std::vector<double> grayscale_float(const std::vector<double>& rgb, const shape_t& shape) {
  const std::int64_t pixels = shape[shape.size() - 2] * shape.back(), images = element_count(shape) / std::max<std::int64_t>(3 * pixels, 1);
  std::vector<double> grey;
  for (std::int64_t image = 0; image < images; ++image) {
    const double* planes = rgb.data() + image * 3 * pixels;
    for (std::int64_t p = 0; p < pixels; ++p) {
      volatile float r = 0.2989f * static_cast<float>(planes[p]), g = 0.5870f * static_cast<float>(planes[p + pixels]);
      volatile float rg = r + g, b = 0.1140f * static_cast<float>(planes[p + 2 * pixels]);
      volatile float sum = rg + b;
      grey.push_back(static_cast<unsigned char>(sum));
    }
  }
  return grey;
}

// Planes of 16n pixels (16-byte path), 4n (4-byte) and others (1-byte);
// single images and batches; every launch bit-identical to the reference.
TEST_P(Grayscale, VectorizedIsBitExact) {
  for (const shape_t& shape : {shape_t{3, 1, 1}, shape_t{3, 7, 13}, shape_t{3, 64, 64}, shape_t{3, 33, 1000}, shape_t{3, 2, 6}, shape_t{3, 4, 32},
                               shape_t{3, 3, 7, 13}, shape_t{2, 3, 4, 8}, shape_t{5, 3, 2, 6}}) {
    SCOPED_TRACE(shape_text(shape));
    const random_view image = make_view(shape, layout_kind::contiguous, dtype::uint8, dev(), any_byte, rng);
    const std::vector<double> want = grayscale_float(elements(image.source, image.view), shape);
    shape_t grey_shape = shape;
    grey_shape.erase(grey_shape.end() - 3);
    const tensor grey = lockstep::rgb_to_grayscale(image.view, "vectorized");
    ASSERT_TRUE(is_new_output(grey, grey_shape, dtype::uint8, dev()));
    EXPECT_TRUE(all_equal(read_back(grey), want, grey_shape));
    EXPECT_TRUE(all_equal(read_back(lockstep::rgb_to_grayscale(image.view)), want, grey_shape)) << "the default launch";
    EXPECT_TRUE(all_equal(read_back(lockstep::rgb_to_grayscale(image.view, "2d")), want, grey_shape));
    if (shape.size() == 3) EXPECT_TRUE(all_equal(read_back(lockstep::rgb_to_grayscale(image.view, "1d")), want, grey_shape));
  }
}

TEST_P(Grayscale, VectorizedOffA16ByteBoundaryAndStrided) {
  const std::int64_t h = 8, w = 16;
  for (std::int64_t start : {1, 4, 8}) {
    SCOPED_TRACE("contiguous image starting " + std::to_string(start) + " bytes in");
    random_view image;
    image.source = random_tensor({start + 3 * h * w}, dtype::uint8, dev(), any_byte, rng);
    image.view = image.source.t.slice(0, start, start + 3 * h * w).reshape({3, h, w});
    ASSERT_TRUE(image.view.is_contiguous());
    EXPECT_TRUE(all_equal(read_back(lockstep::rgb_to_grayscale(image.view, "vectorized")),
                          grayscale_float(elements(image.source, image.view), {3, h, w}), {h, w}));
  }
  for (layout_kind layout : {layout_kind::transposed, layout_kind::strided_slice, layout_kind::expanded}) {
    SCOPED_TRACE(layout_name(layout));
    expect_grayscale(make_view({3, 19, 23}, layout, dtype::uint8, dev(), any_byte, rng), "vectorized", dev());
    expect_grayscale(make_view({2, 3, 19, 23}, layout, dtype::uint8, dev(), any_byte, rng), "vectorized", dev());
  }
}

TEST_P(Grayscale, EmptyImages) {
  EXPECT_TRUE(is_new_output(lockstep::rgb_to_grayscale(tensor::empty({3, 0, 5}, dtype::uint8, dev()), "1d"), {0, 5}, dtype::uint8, dev()));
  EXPECT_TRUE(is_new_output(lockstep::rgb_to_grayscale(tensor::empty({0, 3, 4, 5}, dtype::uint8, dev())), {0, 4, 5}, dtype::uint8, dev()));
}

TEST_P(Grayscale, ErrorsSayWhatIsWrong) {
  const tensor image = tensor::empty({3, 4, 5}, dtype::uint8, dev());
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { lockstep::rgb_to_grayscale(image.to(dtype::float32)); }, {"uint8", "float32"}));
  EXPECT_TRUE(throws_with<shape_error>(
      [&] {
        lockstep::rgb_to_grayscale(tensor::empty({4, 4, 5}, dtype::uint8, dev()));
      },
      {"(3, H, W)", "(4, 4, 5)"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::rgb_to_grayscale(image.select(0, 0)); }, {"(3, H, W)", "(4, 5)"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::rgb_to_grayscale(tensor::empty({2, 4, 4, 5}, dtype::uint8, dev())); }, {"(B, 3, H, W)"}));
  EXPECT_TRUE(throws_with<shape_error>([&] { lockstep::rgb_to_grayscale(image.unsqueeze(0).unsqueeze(0)); }, {"(1, 1, 3, 4, 5)"}));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { lockstep::rgb_to_grayscale(image.unsqueeze(0), "1d"); }, {"batch", "2-D launch"}));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { lockstep::rgb_to_grayscale(image, "3d"); }, {"\"3d\"", "\"vectorized\"", "\"1d\"", "\"2d\""}));
}

INSTANTIATE_TEST_SUITE_P(Devices, Grayscale, ::testing::ValuesIn(devices_here()), device_param_name());

}  // namespace
}  // namespace tensor_testing
