// Hashes that name files: stable across runs, machines and byte orders.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace lockstep::toolchain {

// A 128-bit hash (two independent 64-bit halves) as 32 lowercase hex digits.
// Not cryptographic: users of it that cannot afford a collision compare the
// hashed text itself (the kernel cache stores its full key).
std::string hash_hex(std::string_view bytes);

// `value` as 16 lowercase hex digits.
std::string hex64(std::uint64_t value);

}  // namespace lockstep::toolchain
