// NVRTC, CUDA's run-time compiler, loaded with dlopen on first use so that
// liblockstep builds and loads where no CUDA toolkit is installed.
//
// Where it is looked for, in order: $LOCKSTEP_NVRTC (a path), libnvrtc.so.13,
// libnvrtc.so.12, libnvrtc.so, $CUDA_HOME/lib64/libnvrtc.so,
// /usr/local/cuda/lib64/libnvrtc.so.
#pragma once
#include <string>
#include <vector>

namespace lockstep::detail {

struct nvrtc_output {
  std::string cubin;                       // an ELF image for cuModuleLoadData
  std::vector<std::string> lowered_names;  // the mangled name of each name expression, in order
  std::string log;                         // warnings, if any
};

// Compiles `source_text` (messages name it `source_name`); `options` are
// NVRTC's ("-arch=sm_90" makes it emit CUBIN; "-I<dir>", "-std=c++17", ...).
// Each name expression ("saxpy", "k<16>", "ns::k") is instantiated and its
// lowered name returned. Throws compile_error with NVRTC's log, or
// device_unavailable when NVRTC cannot be loaded.
nvrtc_output compile_with_nvrtc(const std::string& source_text, const std::string& source_name, const std::vector<std::string>& options,
                                const std::vector<std::string>& name_expressions);

// "13.0": the loaded NVRTC's version, for cache keys. Throws device_unavailable.
std::string nvrtc_version();

}  // namespace lockstep::detail
