// NVRTC loaded at run time. Its C API is declared here rather than taken from
// <nvrtc.h>, so that no toolkit is needed to build; the signatures and the
// NVRTC_SUCCESS value are those of the CUDA 13 toolkit's nvrtc.h (unchanged
// since CUDA 11).
#include "nvrtc.h"

#include <cstdlib>
#include <memory>
#include <type_traits>

#include "lockstep/errors.h"
#include "runtime/cuda_driver.h"

namespace lockstep::detail {
namespace {

using nvrtcResult = int;
constexpr nvrtcResult NVRTC_SUCCESS = 0;
using nvrtcProgram = struct nvrtc_program_st*;

struct nvrtc_api {
  const char* (*nvrtcGetErrorString)(nvrtcResult result);
  nvrtcResult (*nvrtcVersion)(int* major, int* minor);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram* program, const char* source, const char* name, int header_count, const char* const* headers,
                                    const char* const* include_names);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram* program);
  nvrtcResult (*nvrtcAddNameExpression)(nvrtcProgram program, const char* name_expression);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram program, int option_count, const char* const* options);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram program, std::size_t* bytes);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram program, char* log);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram program, std::size_t* bytes);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram program, char* cubin);
  nvrtcResult (*nvrtcGetLoweredName)(nvrtcProgram program, const char* name_expression, const char** lowered_name);
};

struct loaded_nvrtc {
  nvrtc_api api{};
  std::string unavailable_reason;  // "" when usable
};

std::vector<std::string> library_candidates() {
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("LOCKSTEP_NVRTC"); path && *path) candidates.push_back(path);
  for (const char* soname : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) candidates.push_back(soname);
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) candidates.push_back(std::string(home) + "/lib64/libnvrtc.so");
  candidates.push_back("/usr/local/cuda/lib64/libnvrtc.so");
  return candidates;
}

// Fills `api`; returns the names it could not find, "" when all were there.
std::string resolve_entry_points(void* library, nvrtc_api& api) {
  std::string missing;
  auto need = [&](auto& function, const char* name) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(cu::find_symbol(library, {name}, missing));
  };
  need(api.nvrtcGetErrorString, "nvrtcGetErrorString");
  need(api.nvrtcVersion, "nvrtcVersion");
  need(api.nvrtcCreateProgram, "nvrtcCreateProgram");
  need(api.nvrtcDestroyProgram, "nvrtcDestroyProgram");
  need(api.nvrtcAddNameExpression, "nvrtcAddNameExpression");
  need(api.nvrtcCompileProgram, "nvrtcCompileProgram");
  need(api.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize");
  need(api.nvrtcGetProgramLog, "nvrtcGetProgramLog");
  need(api.nvrtcGetCUBINSize, "nvrtcGetCUBINSize");
  need(api.nvrtcGetCUBIN, "nvrtcGetCUBIN");
  need(api.nvrtcGetLoweredName, "nvrtcGetLoweredName");
  return missing;
}

loaded_nvrtc load_nvrtc() {
  loaded_nvrtc nvrtc;
  std::string attempts;
  void* library = cu::open_first_library(library_candidates(), attempts);
  if (!library) {
    nvrtc.unavailable_reason = "NVRTC, CUDA's run-time compiler, is needed to compile kernels for a GPU but could not be loaded (" + attempts +
                               "). Install the CUDA toolkit's NVRTC (the toolkit, or `pip install nvidia-cuda-nvrtc-cu12`), or set "
                               "LOCKSTEP_NVRTC to the path of libnvrtc.so.";
  } else if (std::string missing = resolve_entry_points(library, nvrtc.api); !missing.empty()) {
    nvrtc.unavailable_reason = "the NVRTC library that was loaded lacks " + missing +
                               " (CUDA 11.1 or newer is needed); install a newer one or set LOCKSTEP_NVRTC to its path.";
  }
  return nvrtc;
}

// Loaded on first use, once; never unloaded.
const nvrtc_api& nvrtc() {
  static const loaded_nvrtc loaded = load_nvrtc();
  if (!loaded.unavailable_reason.empty()) throw device_unavailable(loaded.unavailable_reason);
  return loaded.api;
}

struct program_deleter {
  void operator()(nvrtc_program_st* program) const { nvrtc().nvrtcDestroyProgram(&program); }
};
using program_ptr = std::unique_ptr<nvrtc_program_st, program_deleter>;

}  // namespace

nvrtc_output compile_with_nvrtc(const std::string& source_text, const std::string& source_name, const std::vector<std::string>& options,
                                const std::vector<std::string>& name_expressions) {
  const nvrtc_api& api = nvrtc();
  const std::string failure = "NVRTC could not compile " + source_name;
  auto fail_unless = [&](nvrtcResult result, const char* step, const std::string& log) {
    if (result != NVRTC_SUCCESS) throw compile_error(failure + " (" + step + ": " + api.nvrtcGetErrorString(result) + ")", log);
  };

  nvrtcProgram raw = nullptr;
  fail_unless(api.nvrtcCreateProgram(&raw, source_text.c_str(), source_name.c_str(), 0, nullptr, nullptr), "nvrtcCreateProgram", "");
  const program_ptr program(raw);
  for (const std::string& expression : name_expressions)
    fail_unless(api.nvrtcAddNameExpression(raw, expression.c_str()), "nvrtcAddNameExpression", "");

  std::vector<const char*> option_pointers;
  for (const std::string& option : options) option_pointers.push_back(option.c_str());
  const nvrtcResult compiled = api.nvrtcCompileProgram(raw, static_cast<int>(option_pointers.size()), option_pointers.data());

  nvrtc_output output;
  std::size_t log_bytes = 0;  // counts the terminating NUL
  if (api.nvrtcGetProgramLogSize(raw, &log_bytes) == NVRTC_SUCCESS && log_bytes > 1) {
    output.log.resize(log_bytes);
    api.nvrtcGetProgramLog(raw, output.log.data());
    output.log.resize(log_bytes - 1);
  }
  if (compiled != NVRTC_SUCCESS) throw compile_error(failure, output.log);

  std::size_t cubin_bytes = 0;
  fail_unless(api.nvrtcGetCUBINSize(raw, &cubin_bytes), "nvrtcGetCUBINSize", output.log);
  if (cubin_bytes == 0)  // NVRTC made PTX only: a virtual architecture was asked for
    throw compile_error(failure + ": NVRTC produced no CUBIN; pass a real GPU architecture such as -arch=sm_90, not compute_90", output.log);
  output.cubin.resize(cubin_bytes);
  fail_unless(api.nvrtcGetCUBIN(raw, output.cubin.data()), "nvrtcGetCUBIN", output.log);

  for (const std::string& expression : name_expressions) {
    const char* lowered = nullptr;  // owned by the program
    fail_unless(api.nvrtcGetLoweredName(raw, expression.c_str(), &lowered), "nvrtcGetLoweredName", output.log);
    output.lowered_names.emplace_back(lowered);
  }
  return output;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtc().nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace lockstep::detail
