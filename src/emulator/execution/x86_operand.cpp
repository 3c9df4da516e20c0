#include "x86_operand.h"

namespace lockstep::emu {

namespace {

// One-byte opcodes with a ModRM byte that may name memory (the ALU forms,
// movsxd, imul, the immediate groups, test/xchg/mov, the shift groups, x87,
// the unary groups). The 0F map has one for nearly every opcode.
bool one_byte_has_modrm(unsigned op) {
  if (op < 0x40) return (op & 7) < 4;
  return op == 0x63 || op == 0x69 || op == 0x6b || (op >= 0x80 && op <= 0x8f && op != 0x8d) || op == 0xc0 || op == 0xc1 || op == 0xc6 || op == 0xc7 ||
         (op >= 0xd0 && op <= 0xd3) || (op >= 0xd8 && op <= 0xdf) || op == 0xf6 || op == 0xf7 || op == 0xfe || op == 0xff;
}

// 0F-map opcodes without ModRM: syscall, ud2, rdtsc, cpuid, jcc rel32, bswap...
bool two_byte_has_modrm(unsigned op) {
  return !(op == 0x05 || op == 0x06 || op == 0x07 || op == 0x08 || op == 0x09 || op == 0x0b || (op >= 0x30 && op <= 0x37) ||
           (op >= 0x80 && op <= 0x8f) || op == 0xa0 || op == 0xa1 || op == 0xa2 || op == 0xa8 || op == 0xa9 || op == 0xaa ||
           (op >= 0xc8 && op <= 0xcf) || op == 0x77);
}

}  // namespace

std::optional<x86_memory_operand> decode_memory_operand(const unsigned char* code, std::size_t size, const std::uint64_t (&registers)[16]) {
  std::size_t i = 0;
  auto next = [&](unsigned& byte) {
    if (i >= size) return false;
    byte = code[i++];
    return true;
  };
  unsigned byte = 0;
  bool address_32 = false;
  // Legacy prefixes. fs/gs overrides add a segment base the handler did not
  // record: thread-locals, never the kernel's pointers.
  for (;;) {
    if (!next(byte)) return std::nullopt;
    if (byte == 0x64 || byte == 0x65) return std::nullopt;
    if (byte == 0x67)
      address_32 = true;
    else if (!(byte == 0x66 || byte == 0xf2 || byte == 0xf3 || byte == 0xf0 || byte == 0x2e || byte == 0x36 || byte == 0x3e || byte == 0x26))
      break;
  }
  unsigned rex_x = 0, rex_b = 0;
  x86_memory_operand operand;
  if (byte == 0xc5 || byte == 0xc4) {  // VEX: the opcode map follows, always with ModRM
    operand.vector = true;
    unsigned p1 = 0, p2 = 0;
    if (!next(p1)) return std::nullopt;
    if (byte == 0xc4) {
      rex_x = (~p1 >> 6) & 1;
      rex_b = (~p1 >> 5) & 1;
      if (!next(p2)) return std::nullopt;
    } else {
      p2 = p1;
    }
    operand.vector_bytes = (p2 >> 2) & 1 ? 32 : 16;
    if (!next(byte)) return std::nullopt;  // the opcode
  } else {
    if ((byte & 0xf0) == 0x40) {  // REX
      rex_x = (byte >> 1) & 1;
      rex_b = byte & 1;
      if (!next(byte)) return std::nullopt;
    }
    if (byte == 0x62) return std::nullopt;  // EVEX: disp8 is scaled by the operand size; not decoded
    if (byte == 0x0f) {
      if (!next(byte)) return std::nullopt;
      if (byte == 0x38 || byte == 0x3a) {
        if (!next(byte)) return std::nullopt;
      } else if (!two_byte_has_modrm(byte)) {
        return std::nullopt;
      }
      operand.vector = true;
      operand.vector_bytes = 16;
    } else if (!one_byte_has_modrm(byte)) {
      return std::nullopt;
    }
  }
  unsigned modrm = 0;
  if (!next(modrm)) return std::nullopt;
  const unsigned mod = modrm >> 6, rm = modrm & 7;
  if (mod == 3) return std::nullopt;  // a register operand
  std::uint64_t address = 0;
  if (rm == 4) {
    unsigned sib = 0;
    if (!next(sib)) return std::nullopt;
    const unsigned scale = sib >> 6, index = ((sib >> 3) & 7) | rex_x << 3, base = (sib & 7) | rex_b << 3;
    if (index != 4) address += registers[index] << scale;
    if ((base & 7) == 5 && mod == 0) {
      unsigned b[4];
      for (auto& x : b)
        if (!next(x)) return std::nullopt;
      address += static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24)));
    } else {
      address += registers[base];
    }
  } else if (rm == 5 && mod == 0) {
    return std::nullopt;  // rip-relative: the program's own constants, which the compiler aligns
  } else {
    address += registers[rm | rex_b << 3];
  }
  if (mod == 1) {
    unsigned d = 0;
    if (!next(d)) return std::nullopt;
    address += static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int8_t>(d)));
  } else if (mod == 2) {
    unsigned b[4];
    for (auto& x : b)
      if (!next(x)) return std::nullopt;
    address += static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24)));
  }
  if (address_32) address &= 0xffffffffu;
  operand.address = static_cast<std::uintptr_t>(address);
  return operand;
}

}  // namespace lockstep::emu
