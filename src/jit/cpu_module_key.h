// The JIT cache's key of a module built for the cpu device: everything the
// built shared object depends on, so that a change to any of them builds it
// again and nothing else does (tests/cpp/unit/test_cpu_module_key.cpp).
#pragma once
#include <string>
#include <vector>

namespace lockstep::jit {

// host: host_build::host_key() (the compiler and the CPU); headers: the
// fingerprint of lockstep's headers; flags and link_inputs: the host
// compiler's arguments, in order; tu: the translation unit; split: whether
// its kernels are split into region loops (the region-loop compiler's
// version and libclang's presence then count too).
std::string cpu_module_key(const std::string& host, const std::string& headers, const std::vector<std::string>& flags,
                           const std::vector<std::string>& link_inputs, const std::string& tu, bool split);

}  // namespace lockstep::jit
