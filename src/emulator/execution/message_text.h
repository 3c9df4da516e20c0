// How the emulator's messages write addresses and coordinates, the same in
// fault reports, check-mode findings and scheduler errors.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

#include "lockstep/emu/vector_types.h"

namespace lockstep::emu {

// 0x55d61a1de890
inline std::string hex_text(std::uintptr_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(v));
  return text;
}

// (36, 0, 0)
inline std::string coordinates_text(const uint3& v) {
  char text[48];
  std::snprintf(text, sizeof text, "(%u, %u, %u)", v.x, v.y, v.z);
  return text;
}

}  // namespace lockstep::emu
