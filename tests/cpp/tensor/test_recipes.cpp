// The facts written once: the kernels the recipe tables list are the ones the
// built-in module holds, matmul_algos() and "auto" follow the tables, every
// op and dtype round-trips through its name, and every grayscale launch of
// the table gives the same bits.
#include <algorithm>
#include <set>

#include "lockstep/kernels/builtin_kernel_names.h"
#include "lockstep/kernels/grayscale_recipes.h"
#include "lockstep/kernels/matmul_recipes.h"
#include "lockstep/kernels/op_codes.h"
#include "tensor_test_util.h"

namespace tensor_testing {
namespace {

std::set<std::string> listed_kernels(lockstep::kernels::builtin_module module) {
  std::set<std::string> names;
  lockstep::kernels::for_each_builtin_kernel(
      module, [&](const std::string& name) { EXPECT_TRUE(names.insert("lockstep::kernels::" + name).second) << name << " is listed twice"; });
  return names;
}

TEST(Recipes, TheEmulatorModuleHoldsExactlyTheListedKernels) {
  const std::vector<std::string> held = lockstep::builtin_kernels(device::cpu()).names();
  EXPECT_EQ(std::set<std::string>(held.begin(), held.end()), listed_kernels(lockstep::kernels::builtin_module::emulator));
}

TEST(Recipes, TheGpuModuleAddsTheGpuOnlyKernels) {
  const std::set<std::string> emulator = listed_kernels(lockstep::kernels::builtin_module::emulator);
  const std::set<std::string> gpu = listed_kernels(lockstep::kernels::builtin_module::gpu);
  EXPECT_TRUE(std::includes(gpu.begin(), gpu.end(), emulator.begin(), emulator.end()));
  for (const lockstep::matmul_algo_info& algo : lockstep::matmul_algos()) {
    for (const auto& [type, kernel] : algo.kernels) {
      SCOPED_TRACE(algo.name + " " + kernel);
      EXPECT_TRUE(gpu.count("lockstep::kernels::" + kernel));
      EXPECT_EQ(emulator.count("lockstep::kernels::" + kernel), algo.gpu_only ? 0u : 1u);
    }
  }
}

TEST(Recipes, MatmulAlgosAreUniqueAndDescribeTheirLaunch) {
  std::set<std::string> names;
  for (const lockstep::matmul_algo_info& algo : lockstep::matmul_algos()) {
    SCOPED_TRACE(algo.name);
    EXPECT_TRUE(names.insert(algo.name).second) << "listed twice";
    EXPECT_FALSE(algo.dtypes.empty());
    if (algo.family == "reference") {
      EXPECT_TRUE(algo.kernels.empty());
      EXPECT_TRUE(algo.gpu_only);
      continue;
    }
    EXPECT_EQ(algo.kernels.size(), algo.dtypes.size());
    EXPECT_GT(algo.block.x * algo.block.y * algo.block.z, 0u);
    EXPECT_LE(algo.block.x * algo.block.y * algo.block.z, 1024u);
    EXPECT_GT(algo.tile_m, 0);
    EXPECT_GT(algo.tile_n, 0);
    EXPECT_EQ(algo.family == "simt", !algo.batched_kernel.empty());
  }
  EXPECT_FALSE(names.count("auto"));
}

TEST(Recipes, AutoPicksAnAlgoTheDeviceRuns) {
  std::set<std::string> names;
  for (const lockstep::matmul_algo_info& algo : lockstep::matmul_algos()) names.insert(algo.name);
  for (dtype t : {dtype::float32, dtype::bfloat16}) {
    const std::vector<std::string> candidates = lockstep::auto_matmul_candidates(t);
    ASSERT_FALSE(candidates.empty());
    for (const std::string& algo : candidates) EXPECT_TRUE(names.count(algo)) << algo;
    for (const device& d : devices_here()) {
      const std::string picked = lockstep::auto_matmul_algo(t, d);
      if (d.kind == device::kind_t::cpu && t == dtype::float32)
        EXPECT_EQ(picked, lockstep::kernels::matmul_auto_float32_emulator);
      else
        EXPECT_TRUE(std::find(candidates.begin(), candidates.end(), picked) != candidates.end()) << picked;
      if (d.kind == device::kind_t::cpu)
        for (const lockstep::matmul_algo_info& algo : lockstep::matmul_algos())
          if (algo.name == picked) EXPECT_FALSE(algo.gpu_only) << picked << " was picked for the emulator";
    }
  }
}

template <class Row, std::size_t N, class Op>
void expect_names_round_trip(const Row (&rows)[N], Op (*parse)(std::string_view)) {
  std::set<std::string> names;
  for (const Row& row : rows) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name << " is listed twice";
    EXPECT_EQ(parse(row.name), row.op) << row.name;
    EXPECT_STREQ(lockstep::op_name(row.op), row.name);
  }
}

TEST(Recipes, EveryOpRoundTripsThroughItsName) {
  expect_names_round_trip(lockstep::kernels::unary_ops, &lockstep::parse_unary_op);
  expect_names_round_trip(lockstep::kernels::binary_ops, &lockstep::parse_binary_op);
  expect_names_round_trip(lockstep::kernels::reduce_ops, &lockstep::parse_reduce_op);
  // The lists the tests enumerate independently have every op.
  EXPECT_EQ(std::size(lockstep::kernels::unary_ops), std::size(all_unary_ops));
  EXPECT_EQ(std::size(lockstep::kernels::binary_ops), std::size(all_binary_ops));
  EXPECT_EQ(std::size(lockstep::kernels::reduce_ops), std::size(all_reduce_ops));
}

TEST(Recipes, EveryDtypeRoundTripsThroughItsName) {
  for (dtype t : all_dtypes) {
    EXPECT_EQ(lockstep::parse_dtype(lockstep::dtype_name(t)), t);
    const dtype wide = lockstep::accumulate_dtype(t);
    EXPECT_EQ(lockstep::is_floating(wide), lockstep::is_floating(t)) << lockstep::dtype_name(t);
    EXPECT_GE(lockstep::itemsize(wide), lockstep::itemsize(t)) << lockstep::dtype_name(t);
  }
}

using GrayscaleLaunches = tensor_test<device>;

// Each launch against the default (tested against NumPy's arithmetic in
// test_grayscale.cpp), on an image whose planes are not 16-byte multiples and
// a batch; a launch without a batched kernel refuses the batch.
TEST_P(GrayscaleLaunches, EveryLaunchGivesTheSameBits) {
  const value_range any_byte{0, 255, true};
  for (const shape_t& shape : {shape_t{3, 19, 23}, shape_t{2, 3, 19, 23}}) {
    const random_view image = make_view(shape, layout_kind::contiguous, dtype::uint8, dev(), any_byte, rng);
    const std::vector<double> want = read_back(lockstep::rgb_to_grayscale(image.view));
    for (const lockstep::kernels::grayscale_recipe& r : lockstep::kernels::grayscale_recipes) {
      SCOPED_TRACE(std::string(r.launch) + " " + shape_text(shape));
      if (shape.size() == 4 && !r.batched_kernel) {
        EXPECT_TRUE(throws_with<std::invalid_argument>([&] { lockstep::rgb_to_grayscale(image.view, r.launch); }, {r.launch, "batch"}));
        continue;
      }
      const tensor grey = lockstep::rgb_to_grayscale(image.view, r.launch);
      EXPECT_TRUE(all_equal(read_back(grey), want, grey.shape()));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, GrayscaleLaunches, ::testing::ValuesIn(devices_here()), device_param_name());

}  // namespace
}  // namespace tensor_testing
