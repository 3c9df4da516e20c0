// The bench's kernels as OpenCL C, run by PoCL (OpenCL on the CPU): the
// comparison the emulator is measured against beside plain C++. The OpenCL
// library is loaded at run time (libOpenCL.so.1, the ICD loader), so the bench
// builds and runs where none is installed and says so.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace opencl_reference {

// An argument of a kernel: a buffer (by index into the session's buffers),
// a value's bytes, or `local_bytes` of local memory.
struct argument {
  int buffer = -1;
  std::vector<unsigned char> value;
  std::size_t local_bytes = 0;
};
template <class T>
argument value(const T& v) {
  argument a;
  a.value.resize(sizeof(T));
  __builtin_memcpy(a.value.data(), &v, sizeof(T));
  return a;
}
inline argument buffer(int index) { return {index, {}, 0}; }
inline argument local(std::size_t bytes) { return {-1, {}, bytes}; }

class session {
 public:
  // PoCL's first CPU device with at most `compute_units` (0: all) OS
  // threads, with the bench's kernels built (opencl_reference.cpp); null, with
  // `why_not` set, when there is no OpenCL library or CPU device.
  static std::unique_ptr<session> open(unsigned compute_units, std::string& why_not);
  virtual ~session() = default;
  virtual std::string device_name() const = 0;
  // A device buffer holding `bytes` from `host` (or uninitialised): its index.
  virtual int upload(const void* host, std::size_t bytes) = 0;
  virtual void download(int buffer, void* host, std::size_t bytes) = 0;
  // Median seconds of `repeats` runs (after one warm-up) of `kernel` over
  // `global` work items in groups of `local` (1 to 3 dims).
  virtual double time(const std::string& kernel, const std::vector<std::size_t>& global, const std::vector<std::size_t>& local,
                      const std::vector<argument>& arguments, int repeats) = 0;
  virtual void release_buffers() = 0;
};

}  // namespace opencl_reference
