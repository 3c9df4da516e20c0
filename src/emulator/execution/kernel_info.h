// What the emulator knows about a host-compiled kernel before running it:
// its name and how much static __shared__ memory it declares.
//
// On the GPU ptxas counts static shared memory. Here every `__shared__` array
// is a block-scope thread_local, which the compiler names _ZZ<kernel>E<array>
// in the symbol table, so the kernel's static shared size is the sum of the
// thread-local symbols under its name. Arrays declared in __device__ helpers
// are not counted.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lockstep::emu {

// A thread-local variable of the kernel's ELF module: a __shared__ array
// (nothing else thread-local is legal in device code).
struct thread_local_symbol {
  std::string name;    // "kernel<16>::tile", for messages
  std::size_t offset;  // in the module's TLS block
  std::size_t size;
};

struct kernel_info {
  std::string name = "?";  // demangled, or "?" if unknown
  std::size_t static_shared_bytes = 0;
  std::size_t max_dynamic_shared_bytes = 48 * 1024;  // raised by cudaFuncSetAttribute

  // For check mode.
  std::string module_path;                         // the ELF file holding the kernel
  std::vector<thread_local_symbol> module_shared;  // every thread-local of that file, by offset
  std::size_t module_tls_bytes = 0;                // its TLS block's size
  bool instrumented = false;                       // the file holds code built for check mode
};

// Looked up once per kernel and cached; the reference stays valid.
kernel_info& kernel_info_for(const void* kernel);

}  // namespace lockstep::emu
