// The fault kernels of tests/cpp/fault_kernels.cuh on a GPU: which CUDA error
// each gives, beside the one the emulator's message names for it
// (tests/cpp/test_faults.cu asserts those). Each case runs in a child process,
// as a fault ends the CUDA context; a case still running after 20 s is
// killed and reported as hung. Not part of CTest: it needs a GPU.
//
//   gpu_fault_kinds            prints one line per case and a closing count
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fault_kernels.cuh"

using namespace fault_kernels;

namespace {

template <class T>
T* device_array(std::size_t n, int byte = 0) {
  T* p = nullptr;
  cudaMalloc(&p, n * sizeof(T));
  cudaMemset(p, byte, n * sizeof(T));
  return p;
}

template <class T>
T* device_copy(const std::vector<T>& host) {
  T* p = device_array<T>(host.size());
  cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  return p;
}

// The error of the launch just made: at launch, else at synchronization.
cudaError_t outcome() {
  const cudaError_t launched = cudaGetLastError();
  if (launched != cudaSuccess) return launched;
  return cudaDeviceSynchronize();
}

cudaError_t read_through_case(const float* p) {
  float* in = device_array<float>(threads * blocks);
  float* out = device_array<float>(threads * blocks);
  read_through<<<blocks, threads>>>(p, in, out);
  return outcome();
}

struct fault_case {
  const char* name;
  const char* emulator;  // the error the emulator's kernel_error carries
  cudaError_t (*run)();
};

const fault_case cases[] = {
    {"null pointer read", "cudaErrorIllegalAddress", [] { return read_through_case(nullptr); }},
    {"null pointer write", "cudaErrorIllegalAddress",
     [] {
       write_through<<<blocks, threads>>>(nullptr, device_array<float>(threads * blocks));
       return outcome();
     }},
    {"wild pointer 0x100000000000", "cudaErrorIllegalAddress",
     [] { return read_through_case(reinterpret_cast<const float*>(std::uintptr_t{0x100000000000})); }},
    {"garbage pointer 0xdeadbeefdeadbeef", "cudaErrorIllegalAddress",
     [] { return read_through_case(reinterpret_cast<const float*>(std::uintptr_t{0xdeadbeefdeadbeef})); }},
    {"store 64 MiB past a 1 KiB array", "cudaErrorIllegalAddress",
     [] {
       store_past<<<blocks, threads>>>(device_array<float>(256), 256, 16ll << 20);
       return outcome();
     }},
    {"integer division by zero", "cudaErrorLaunchFailure (the CPU traps; a GPU gives an unspecified value)",
     [] {
       std::vector<int> den(threads * blocks, 3);
       den[faulting_block * threads + faulting_thread] = 0;
       divide<<<blocks, threads>>>(device_copy(std::vector<int>(threads * blocks, 100)), device_copy(den), device_array<int>(threads * blocks));
       return outcome();
     }},
    {"deep recursion, with a barrier", "cudaErrorIllegalAddress (stack overflow)",
     [] {
       deep_recursion_with_barrier<<<1, threads>>>(device_array<int>(threads), 1 << 20);
       return outcome();
     }},
    {"deep recursion, no barrier", "cudaErrorIllegalAddress (stack overflow)",
     [] {
       deep_recursion<<<1, threads>>>(device_array<int>(threads), 1 << 20);
       return outcome();
     }},
    {"384 KiB local array", "cudaErrorIllegalAddress (stack overflow at the default 256 KiB)",
     [] {
       large_local_array<<<1, threads>>>(device_copy(std::vector<int>(threads, 7)), device_array<int>(threads));
       return outcome();
     }},
    {"misaligned float4 load", "cudaErrorMisalignedAddress",
     [] {
       misaligned_float4<<<1, 32>>>(device_array<float>(32), device_array<float4>(4));
       return outcome();
     }},
    {"extern __shared__ with 0 dynamic bytes", "cudaErrorIllegalAddress",
     [] {
       reverse_in_shared<<<2, 32>>>(device_array<float>(64), device_array<float>(64));
       return outcome();
     }},
    {"extern __shared__ past 64 dynamic bytes", "cudaErrorIllegalAddress",
     [] {
       reverse_in_shared<<<2, 32, 64>>>(device_array<float>(64), device_array<float>(64));
       return outcome();
     }},
    {"__trap()", "cudaErrorLaunchFailure",
     [] {
       trap_in_one_thread<<<blocks, threads>>>(device_array<int>(threads * blocks));
       return outcome();
     }},
    {"failed assert", "cudaErrorAssert",
     [] {
       std::vector<int> values(threads * blocks, 1);
       values[faulting_block * threads + faulting_thread] = 99;
       assert_below<<<blocks, threads>>>(device_copy(values), 10);
       return outcome();
     }},
    {"infinite loop", "cudaErrorLaunchTimeout (with a time limit set; none by default)",
     [] {
       spin_until_set<<<4, 32>>>(device_array<int>(1), device_array<int>(1));
       return outcome();
     }},
};

}  // namespace

int main() {
  int differ = 0;
  std::printf("| case | emulator | GPU |\n|---|---|---|\n");
  for (const fault_case& c : cases) {
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) return 2;
    std::fflush(stdout);
    const pid_t child = fork();
    if (child == 0) {  // CUDA starts here, fresh in each child
      close(pipe_fds[0]);
      const char* name = cudaGetErrorName(c.run());
      if (write(pipe_fds[1], name, std::strlen(name)) < 0) _exit(3);
      _exit(0);
    }
    close(pipe_fds[1]);
    int status = 0;
    bool hung = true;
    for (int waited = 0; waited < 2000; ++waited) {  // 20 s
      if (waitpid(child, &status, WNOHANG) == child) {
        hung = false;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::string gpu;
    if (hung) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      gpu = "still running after 20 s (killed)";
    } else {
      char text[128] = {};
      const ssize_t n = read(pipe_fds[0], text, sizeof text - 1);
      gpu = n > 0 ? std::string(text, static_cast<std::size_t>(n))
                  : "the child died (" + std::string(WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no error name") + ")";
    }
    close(pipe_fds[0]);
    const std::string emulator = c.emulator;
    if (emulator.compare(0, gpu.size(), gpu) != 0 || (emulator.size() > gpu.size() && emulator[gpu.size()] != ' ')) ++differ;
    std::printf("| %s | %s | %s |\n", c.name, c.emulator, gpu.c_str());
  }
  std::printf("\n%d of %zu cases give another error on the GPU than the emulator names\n", differ, sizeof cases / sizeof cases[0]);
  return 0;
}
