// A program written for two GPUs, as the CUDA samples' simpleP2P is: device
// count and ordinals, the current device per host thread, peer access
// enabled, refused and disabled, memory on each device copied with
// cudaMemcpyPeer and cudaMemcpyDefault, and a kernel on one device reading
// the other's memory, and which device each allocation is on. Needs two devices: on the emulator LOCKSTEP_EMU_DEVICES=2
// (as CTest runs it); a machine with fewer devices fails it.
#include <thread>
#include <vector>

#include "expect.h"

__global__ void add_from_peer(float* mine, const float* peers, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) mine[i] += peers[i];
}

int main() {
  int count = 0;
  EXPECT(cudaGetDeviceCount(&count) == cudaSuccess && count >= 2);
  if (count < 2) return 1;
  EXPECT_ERROR(cudaSetDevice(count), cudaErrorInvalidDevice);
  cudaDeviceProp zero{}, one{};
  EXPECT(cudaGetDeviceProperties(&zero, 0) == cudaSuccess && cudaGetDeviceProperties(&one, 1) == cudaSuccess);
  EXPECT(zero.pciBusID != one.pciBusID || zero.pciDomainID != one.pciDomainID || zero.pciDeviceID != one.pciDeviceID);

  // The current device belongs to the host thread.
  EXPECT(cudaSetDevice(1) == cudaSuccess);
  int device = -1;
  std::thread([&] { cudaGetDevice(&device); }).join();
  EXPECT(device == 0);
  EXPECT(cudaGetDevice(&device) == cudaSuccess && device == 1);

  int can = -1;
  EXPECT(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaSuccess && can == 1);
  EXPECT(cudaDeviceCanAccessPeer(&can, 1, 1) == cudaSuccess && can == 0);
  EXPECT_ERROR(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessUnsupported);  // itself, as an H100 answers
  (void)cudaGetLastError();
  EXPECT(cudaDeviceEnablePeerAccess(0, 0) == cudaSuccess);
  EXPECT_ERROR(cudaDeviceEnablePeerAccess(0, 0), cudaErrorPeerAccessAlreadyEnabled);
  (void)cudaGetLastError();

  const int n = 1000;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = float(i);
  float *on_zero = nullptr, *on_one = nullptr;
  EXPECT(cudaSetDevice(0) == cudaSuccess);
  EXPECT(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
  EXPECT(cudaMalloc(&on_zero, n * sizeof(float)) == cudaSuccess);
  EXPECT(cudaMemcpy(on_zero, host.data(), n * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
  EXPECT(cudaSetDevice(1) == cudaSuccess);
  EXPECT(cudaMalloc(&on_one, n * sizeof(float)) == cudaSuccess);
  EXPECT(cudaMemcpyPeer(on_one, 1, on_zero, 0, n * sizeof(float)) == cudaSuccess);
  add_from_peer<<<(n + 127) / 128, 128>>>(on_one, on_zero, n);  // on device 1, reading device 0's memory
  EXPECT(cudaDeviceSynchronize() == cudaSuccess);
  std::vector<float> back(n, -1.0f);
  EXPECT(cudaMemcpy(back.data(), on_one, n * sizeof(float), cudaMemcpyDefault) == cudaSuccess);
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += back[i] != 2.0f * float(i);
  EXPECT(wrong == 0);
  // Each allocation reports the device it was made on, whichever is current.
  cudaPointerAttributes zero_attributes{}, one_attributes{};
  EXPECT(cudaPointerGetAttributes(&zero_attributes, on_zero + 10) == cudaSuccess);
  EXPECT(cudaPointerGetAttributes(&one_attributes, on_one) == cudaSuccess);
  EXPECT(zero_attributes.type == cudaMemoryTypeDevice && zero_attributes.device == 0);
  EXPECT(one_attributes.type == cudaMemoryTypeDevice && one_attributes.device == 1);

  EXPECT(cudaDeviceDisablePeerAccess(0) == cudaSuccess);
  EXPECT_ERROR(cudaDeviceDisablePeerAccess(0), cudaErrorPeerAccessNotEnabled);
  (void)cudaGetLastError();
  EXPECT(cudaFree(on_one) == cudaSuccess);
  EXPECT(cudaSetDevice(0) == cudaSuccess);
  EXPECT(cudaDeviceDisablePeerAccess(1) == cudaSuccess);
  EXPECT(cudaFree(on_zero) == cudaSuccess);
  std::printf("two_devices: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
