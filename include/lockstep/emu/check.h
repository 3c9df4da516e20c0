// Check mode: the emulator as a sanitizer of CUDA kernels, without a GPU.
//
// Kernel code compiled for check mode (-g -fsanitize=thread,bounds,alignment: check_compile_flags(),
// compile flags only: liblockstep answers the calls they insert; see
// lockstep_check_sources in cmake/lockstep.cmake and the lockstep-check tool)
// reports, while checking is on (options::checks, or LOCKSTEP_CHECK=1):
//   memcheck   accesses outside live device allocations, outside the shared
//              arrays or the dynamic shared size, misaligned ones, use of
//              freed buffers;
//   racecheck  two threads touching one shared (or global) byte between
//              barriers where at least one writes;
//   synccheck  barriers reached by only part of a block, threads exiting while
//              others wait at a barrier, warp collectives whose mask does not
//              match the lanes arriving;
//   initcheck  reads of shared memory or device allocations nothing wrote.
// A launch with findings throws check_error listing them (the first 20, each
// with how often it repeated) after the launch, or as soon as a thread makes
// an access that would corrupt memory (memcheck, which stops its block).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/emu/vector_types.h"
#include "lockstep/errors.h"

namespace lockstep::emu {

// The four tools, as bits of options::checks.
enum class check_tool : unsigned { memcheck = 1, racecheck = 2, synccheck = 4, initcheck = 8 };
inline constexpr unsigned all_checks = 15;
// The checks that watch memory accesses, which need kernel code compiled for check mode.
inline constexpr unsigned memory_checks =
    static_cast<unsigned>(check_tool::memcheck) | static_cast<unsigned>(check_tool::racecheck) | static_cast<unsigned>(check_tool::initcheck);

enum class hazard : std::uint8_t { none, read_after_write, write_after_read, write_after_write };

struct source_line {
  std::string file;  // as the compiler saw it; empty when unknown (no debug info)
  unsigned line = 0;
  std::string function;     // demangled
  std::string str() const;  // "file:line" or "?"
};

struct check_report {
  check_tool tool = check_tool::memcheck;
  hazard race = hazard::none;  // racecheck only
  std::string kernel;
  uint3 block{0, 0, 0}, thread{0, 0, 0};
  std::uintptr_t address = 0;  // 0 for synccheck
  std::size_t size = 0;        // bytes accessed
  bool write = false;
  std::string memory;  // where `address` lies: "shared k()::tile + 8", "cudaMalloc'd 1024 bytes at 0x... + 1024"
  std::string what;    // the finding in words
  source_line at;      // the access, barrier or collective
  source_line other;   // the other side of a race or a divergent barrier, if any
  uint3 other_thread{0, 0, 0};
  std::size_t repeats = 1;  // identical findings (same kind and lines) folded into this one

  // "memcheck", "racecheck read-after-write", "synccheck", "initcheck", ...
  std::string kind() const;
  std::string str() const;  // one paragraph, as listed in check_error::what()
};

const char* to_string(check_tool tool);
const char* to_string(hazard race);

// What a checked launch throws when it found something. code() is
// cudaErrorIllegalAddress when a memcheck finding stopped it, else
// cudaErrorLaunchFailure.
class check_error : public kernel_error {
 public:
  check_error(cudaError_t code, const std::string& what, std::vector<check_report> reports, std::size_t total)
      : kernel_error(code, what), reports_(std::move(reports)), total_(total) {}
  const std::vector<check_report>& reports() const noexcept { return reports_; }
  std::size_t total() const noexcept { return total_; }  // all findings, repeats included

 private:
  std::vector<check_report> reports_;
  std::size_t total_;
};

// Regions of a device allocation no kernel may touch, as AddressSanitizer's
// manual poisoning: a program that carves several arrays out of one
// cudaMalloc leaves a gap after each and poisons it, and an index running off
// one array into the gap is a memcheck finding (it would otherwise land in
// memory the program owns). Effective on allocations made in check mode; a
// no-op elsewhere (normal mode, host memory), so the calls can stay in.
// unpoison_region makes bytes usable again (before the allocation is reused).
void poison_region(const void* address, std::size_t bytes);
void unpoison_region(const void* address, std::size_t bytes);

// CUDA runtime calls that fail because of what the program passed them (a
// double cudaFree, freeing a pointer cudaMalloc never gave, a cudaMemcpy or
// cudaMemset past an allocation's end) still return their error code; with
// memcheck on, each is also a finding (kernel empty, `at` the calling line),
// printed to stderr when it happens and kept until taken here.
std::vector<check_report> take_api_findings();

// The compiler flags that build kernel code for check mode (to add to a
// compile step, never to a link step): what lockstep_check_sources and
// lockstep-check use, for other builders (a JIT).
std::vector<std::string> check_compile_flags();

// Memory that kernels may use as device memory although cudaMalloc did not
// give it (a NumPy array handed to a kernel). Checked launches treat it as an
// initialised allocation named `name`; everything else that is neither a
// device allocation, shared memory, the thread's own stack nor the program's
// static data is reported. Unregister before the memory goes away.
void register_host_memory(const void* address, std::size_t bytes, const std::string& name);
void unregister_host_memory(const void* address);

}  // namespace lockstep::emu
