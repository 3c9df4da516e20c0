#include "toolchain/hash.h"

#include <algorithm>

namespace lockstep::toolchain {
namespace {

std::uint64_t rotate_left(std::uint64_t x, int bits) { return (x << bits) | (x >> (64 - bits)); }

// MurmurHash3's finalizer: every input bit affects every output bit.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// Little-endian whatever the machine, so that hashes (file names) are the
// same everywhere.
std::uint64_t load_little_endian(const unsigned char* bytes, std::size_t count) {
  std::uint64_t word = 0;
  for (std::size_t i = count; i-- > 0;) word = (word << 8) | bytes[i];
  return word;
}

std::uint64_t hash64(std::string_view text, std::uint64_t seed) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  std::uint64_t state = seed ^ mix(text.size() + seed);
  for (std::size_t at = 0; at < text.size(); at += 8) {
    const std::size_t count = std::min<std::size_t>(8, text.size() - at);
    state = rotate_left(state ^ mix(load_little_endian(bytes + at, count) + seed), 27) * 0x9e3779b97f4a7c15ULL + 0x52dce729;
  }
  return mix(state);
}

}  // namespace

std::string hex64(std::uint64_t value) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) text[i] = digits[value & 15];
  return text;
}

std::string hash_hex(std::string_view bytes) { return hex64(hash64(bytes, 0x243f6a8885a308d3ULL)) + hex64(hash64(bytes, 0x13198a2e03707344ULL)); }

}  // namespace lockstep::toolchain
