// The hashes that name the kernel cache's files.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "toolchain/hash.h"

namespace {

using lockstep::toolchain::hash_hex;
using lockstep::toolchain::hex64;

TEST(Hash, Is32HexDigitsOfTwoDifferentHalves) {
  const std::string hash = hash_hex("__global__ void k() {}");
  ASSERT_EQ(hash.size(), 32u);
  EXPECT_EQ(hash.find_first_not_of("0123456789abcdef"), std::string::npos) << hash;
  EXPECT_NE(hash.substr(0, 16), hash.substr(16));
  EXPECT_EQ(hash, hash_hex("__global__ void k() {}"));
}

TEST(Hash, DiffersForSmallChanges) {
  const std::vector<std::string> texts{"", "a", "b", "ab", "ba", std::string("a\0", 2), "12345678", "123456789", "12345679"};
  std::set<std::string> hashes;
  for (const std::string& text : texts) hashes.insert(hash_hex(text));
  EXPECT_EQ(hashes.size(), texts.size());
}

TEST(Hash, IsTheSameOnEveryMachineAndRun) {
  // Cache files are named by these: a change of the function orphans every cache.
  EXPECT_EQ(hash_hex(""), "b802940b49ba6386445c3ca50549e10b");
  EXPECT_EQ(hash_hex("__global__ void k() {}"), "735cc710e29611f9d6a942ae6db91851");
}

TEST(Hash, Hex64WritesSixteenDigits) {
  EXPECT_EQ(hex64(0), "0000000000000000");
  EXPECT_EQ(hex64(0x0123456789abcdefULL), "0123456789abcdef");
  EXPECT_EQ(hex64(~0ULL), "ffffffffffffffff");
}

}  // namespace
