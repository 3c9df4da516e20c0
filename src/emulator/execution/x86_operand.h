// The memory operand of one x86-64 instruction, for fault reports.
//
// A general-protection fault (an aligned SSE/AVX access at a misaligned
// address, or any access at a non-canonical address such as
// 0xdeadbeefdeadbeef) reaches the signal handler as SIGSEGV with address 0:
// the address has to be recomputed from the instruction's ModRM/SIB bytes and
// the registers at the fault. Covers the legacy and VEX encodings a compiler
// emits for loads and stores; anything else is reported as unknown.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

namespace lockstep::emu {

struct x86_memory_operand {
  std::uintptr_t address = 0;
  bool vector = false;        // an SSE/AVX instruction (0F map or VEX): may need its operand aligned
  unsigned vector_bytes = 0;  // 16, or 32 for a 256-bit VEX instruction
};

// code: the instruction's bytes (at most `size`); registers: rax, rcx, rdx,
// rbx, rsp, rbp, rsi, rdi, r8-r15 at the fault.
std::optional<x86_memory_operand> decode_memory_operand(const unsigned char* code, std::size_t size, const std::uint64_t (&registers)[16]);

// Whether an address can exist at all (x86-64's 48-bit canonical form).
inline bool is_canonical(std::uintptr_t address) {
  const auto top = static_cast<std::int64_t>(address) >> 47;
  return top == 0 || top == -1;
}

}  // namespace lockstep::emu
