// Fiber stacks: guarded ones, and the unguarded ones of large cooperative
// launches, whose canary tells release() about an overflow.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "execution/stack_pool.h"

using lockstep::emu::stack_pool;

namespace {

constexpr std::size_t stack_bytes = 64 * 1024;

TEST(StackPool, UnguardedStacksDoNotOverlapAndAreReused) {
  stack_pool pool(stack_bytes, false);
  EXPECT_FALSE(pool.guarded());
  std::vector<char*> stacks;
  for (int i = 0; i < 600; ++i) stacks.push_back(static_cast<char*>(pool.acquire()));  // more than one slab
  std::vector<char*> sorted = stacks;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < sorted.size(); ++i) ASSERT_GE(sorted[i] - sorted[i - 1], std::ptrdiff_t(stack_bytes));
  // Every byte of every stack can be used; a thread that stayed inside its stack passes.
  for (char* s : stacks) std::memset(s + 8, 0x5a, stack_bytes - 8);
  for (char* s : stacks) EXPECT_TRUE(pool.release(s));
  EXPECT_EQ(pool.acquire(), stacks.back());
  EXPECT_EQ(pool.stack_guarded_at(reinterpret_cast<std::uintptr_t>(stacks[0]) - 1), nullptr);
}

TEST(StackPool, UnguardedOverflowIsSeenAtRelease) {
  stack_pool pool(stack_bytes, false);
  char* a = static_cast<char*>(pool.acquire());
  char* b = static_cast<char*>(pool.acquire());
  std::memset(b - 512, 0x11, 512 + 64);  // an overflow of b's frames past its bottom
  EXPECT_FALSE(pool.release(b));
  EXPECT_TRUE(pool.release(a));
}

TEST(StackPool, GuardedStacksHaveGuards) {
  stack_pool pool(stack_bytes);
  EXPECT_TRUE(pool.guarded());
  char* s = static_cast<char*>(pool.acquire());
  EXPECT_EQ(pool.stack_guarded_at(reinterpret_cast<std::uintptr_t>(s) - 1), s);
  EXPECT_TRUE(pool.release(s));
}

}  // namespace
