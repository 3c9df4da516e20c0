// CUDA features the emulator does not provide, recognized where a build
// fails because of them, so the message names the feature and the line
// instead of leaving the user with "was not declared" or an assembler error.
#pragma once
#include <span>
#include <string>
#include <string_view>

namespace lockstep::driver {

// How an entry of the list stands to what lockstep provides.
enum class feature_family {
  // Not provided: lockstep's headers declare nothing of this name (at most a
  // header of it that says so with #error).
  not_provided,
  // CUDA graphs: lockstep/emu/runtime_graphs.h declares the calls programs
  // make most, each returning cudaErrorNotSupported, so such programs compile.
  graphs,
  // The driver API's calls that lockstep/emu/driver_api.h does not declare:
  // the remainder of a family that is partly emulated.
  driver_api_remainder,
  // Provided through the CUDA toolkit's own headers (cuRAND, Thrust).
  from_toolkit,
};

struct unsupported_feature {
  std::string_view name_prefix;  // an identifier the compiler names, or its beginning
  std::string_view what;
  feature_family family = feature_family::not_provided;
};

// Every entry, for the tests that hold the list to what lockstep declares.
std::span<const unsupported_feature> unsupported_features();

// The entry a name (or a missing header's base name) belongs to, or null.
const unsupported_feature* unsupported_feature_of(std::string name);

// Inline PTX (`asm("mov.u32 %0, %%laneid;" ...)`) in a CUDA source's
// preprocessed, rewritten text: "file:line: inline PTX ...", one line per use,
// or "" when there is none. The host compiler would take PTX for x86 assembly.
std::string inline_ptx_uses(const std::string& preprocessed);

// For a failed compile or link: a line per unsupported feature the compiler's
// output names ("file:line: cufftExecC2C: cuFFT is not emulated"), or "".
std::string explain_unsupported(const std::string& compiler_output);

}  // namespace lockstep::driver
