// Memory and events shared between processes, as CUDA's IPC samples share
// them: the program starts itself again as a child (fork and exec), passes it
// an IPC memory handle, an IPC event handle and an exportable pool's
// descriptor (over a Unix socket, as descriptors travel) with one of its
// allocations, and the child changes the parent's memory through them.
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "expect.h"

constexpr int n = 1 << 20;        // floats in the cudaMalloc'd buffer (4 MiB)
constexpr int pooled_n = 100000;  // floats in the pool's allocation
constexpr int small_n = 25;       // floats in an allocation smaller than a page

__global__ void fill(float* x, int count, float scale) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) x[i] = scale * i;
}
__global__ void twice_plus_one(float* x, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) x[i] = 2.0f * x[i] + 1.0f;
}

struct message {
  cudaIpcMemHandle_t memory, small_memory;
  cudaIpcEventHandle_t event;
  cudaMemPoolPtrExportData pooled;
};

// Whether the device array holds value(i) at every i.
template <class Value>
bool holds(const float* device, int count, Value value) {
  std::vector<float> host(count);
  if (cudaMemcpy(host.data(), device, count * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) return false;
  for (int i = 0; i < count; ++i)
    if (host[i] != value(i)) return false;
  return true;
}
// fill's values, as the parent left them.
bool filled(const float* device, int count, float scale) {
  return holds(device, count, [=](int i) { return scale * i; });
}
// The child's work (twice_plus_one) on fill's values.
bool changed_by_child(const float* device, int count, float scale) {
  return holds(device, count, [=](int i) { return 2.0f * (scale * i) + 1.0f; });
}

// A one-byte message with room for one descriptor, as SCM_RIGHTS passes them.
struct descriptor_message {
  char byte = 0;
  iovec io{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr header{};
  descriptor_message() {
    header.msg_iov = &io;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = sizeof control;
  }
  descriptor_message(const descriptor_message&) = delete;
  descriptor_message& operator=(const descriptor_message&) = delete;
};

void send_descriptor(int socket, int fd) {
  descriptor_message m;
  cmsghdr* c = CMSG_FIRSTHDR(&m.header);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  EXPECT(sendmsg(socket, &m.header, 0) == 1);
}

int receive_descriptor(int socket) {
  descriptor_message m;
  if (recvmsg(socket, &m.header, 0) != 1) return -1;
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m.header)), sizeof fd);
  return fd;
}

int child(int socket) {
  message m;
  if (read(socket, &m, sizeof m) != static_cast<ssize_t>(sizeof m)) return 2;
  const int pool_fd = receive_descriptor(socket);
  EXPECT(pool_fd >= 0);
  cudaStream_t stream;
  EXPECT_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);

  float* shared = nullptr;
  EXPECT_ERROR(cudaIpcOpenMemHandle((void**)&shared, m.memory, cudaIpcMemLazyEnablePeerAccess), cudaSuccess);
  // Opened again: the same pointer, closed once per opening.
  float* again = nullptr;
  EXPECT_ERROR(cudaIpcOpenMemHandle((void**)&again, m.memory, cudaIpcMemLazyEnablePeerAccess), cudaSuccess);
  EXPECT(again == shared);
  EXPECT_ERROR(cudaIpcCloseMemHandle(again), cudaSuccess);
  cudaEvent_t event;
  EXPECT_ERROR(cudaIpcOpenEventHandle(&event, m.event), cudaSuccess);
  EXPECT_ERROR(cudaStreamWaitEvent(stream, event, 0), cudaSuccess);
  EXPECT(filled(shared, n, 0.5f));
  twice_plus_one<<<(n + 255) / 256, 256, 0, stream>>>(shared, n);
  EXPECT_ERROR(cudaGetLastError(), cudaSuccess);
  EXPECT_ERROR(cudaEventRecord(event, stream), cudaSuccess);
  EXPECT_ERROR(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_ERROR(cudaIpcCloseMemHandle(shared), cudaSuccess);

  float* small = nullptr;
  EXPECT_ERROR(cudaIpcOpenMemHandle((void**)&small, m.small_memory, cudaIpcMemLazyEnablePeerAccess), cudaSuccess);
  EXPECT(filled(small, small_n, 3.0f));
  twice_plus_one<<<1, 32, 0, stream>>>(small, small_n);
  EXPECT_ERROR(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_ERROR(cudaIpcCloseMemHandle(small), cudaSuccess);

  cudaMemPool_t pool;
  EXPECT_ERROR(cudaMemPoolImportFromShareableHandle(&pool, (void*)(std::intptr_t)pool_fd, cudaMemHandleTypePosixFileDescriptor, 0), cudaSuccess);
  close(pool_fd);
  float* pooled = nullptr;
  EXPECT_ERROR(cudaMemPoolImportPointer((void**)&pooled, pool, &m.pooled), cudaSuccess);
  EXPECT(filled(pooled, pooled_n, 0.25f));
  twice_plus_one<<<(pooled_n + 255) / 256, 256, 0, stream>>>(pooled, pooled_n);
  EXPECT_ERROR(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_ERROR(cudaFreeAsync(pooled, stream), cudaSuccess);
  EXPECT_ERROR(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_ERROR(cudaMemPoolDestroy(pool), cudaSuccess);

  EXPECT_ERROR(cudaEventDestroy(event), cudaSuccess);
  EXPECT_ERROR(cudaStreamDestroy(stream), cudaSuccess);
  return failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "child") == 0) return child(std::atoi(argv[2]));

  int attribute = 0;
  EXPECT_ERROR(cudaDeviceGetAttribute(&attribute, cudaDevAttrIpcEventSupport, 0), cudaSuccess);
  EXPECT(attribute == 1);
  EXPECT_ERROR(cudaDeviceGetAttribute(&attribute, cudaDevAttrMemoryPoolSupportedHandleTypes, 0), cudaSuccess);
  EXPECT((attribute & cudaMemHandleTypePosixFileDescriptor) != 0);

  float *shared = nullptr, *small = nullptr;
  EXPECT_ERROR(cudaMalloc(&shared, n * sizeof(float)), cudaSuccess);
  EXPECT_ERROR(cudaMalloc(&small, small_n * sizeof(float)), cudaSuccess);
  fill<<<(n + 255) / 256, 256>>>(shared, n, 0.5f);
  fill<<<1, 32>>>(small, small_n, 3.0f);
  message m;
  std::memset(&m, 0, sizeof m);
  EXPECT_ERROR(cudaIpcGetMemHandle(&m.memory, shared), cudaSuccess);
  EXPECT_ERROR(cudaIpcGetMemHandle(&m.small_memory, small), cudaSuccess);
  // The memory is unchanged by being exported.
  EXPECT(filled(shared, n, 0.5f));
  EXPECT(filled(small, small_n, 3.0f));

  // Handles a process cannot give or open.
  float host_memory[4];
  cudaIpcMemHandle_t refused;
  EXPECT_ERROR(cudaIpcGetMemHandle(&refused, host_memory), cudaErrorInvalidValue);
  void* own = nullptr;
  EXPECT_ERROR(cudaIpcOpenMemHandle(&own, m.memory, cudaIpcMemLazyEnablePeerAccess), cudaErrorDeviceUninitialized);
  EXPECT_ERROR(cudaIpcOpenMemHandle(&own, m.memory, 0), cudaErrorInvalidValue);  // the flag is required
  cudaIpcMemHandle_t zero_handle;
  std::memset(&zero_handle, 0, sizeof zero_handle);
  EXPECT_ERROR(cudaIpcOpenMemHandle(&own, zero_handle, cudaIpcMemLazyEnablePeerAccess), cudaErrorInvalidValue);
  EXPECT_ERROR(cudaIpcCloseMemHandle(shared), cudaErrorInvalidValue);  // not opened from a handle
  cudaIpcEventHandle_t zero_event;
  std::memset(&zero_event, 0, sizeof zero_event);
  cudaEvent_t never;
  EXPECT_ERROR(cudaIpcOpenEventHandle(&never, zero_event), cudaErrorMapBufferObjectFailed);
  cudaMemPoolPtrExportData not_pooled;
  EXPECT_ERROR(cudaMemPoolExportPointer(&not_pooled, shared), cudaErrorInvalidValue);
  cudaEvent_t timed;
  EXPECT_ERROR(cudaEventCreate(&timed), cudaSuccess);
  cudaIpcEventHandle_t refused_event;
  EXPECT_ERROR(cudaIpcGetEventHandle(&refused_event, timed), cudaErrorInvalidResourceHandle);
  EXPECT_ERROR(cudaEventDestroy(timed), cudaSuccess);
  cudaGetLastError();

  cudaEvent_t event;
  EXPECT_ERROR(cudaEventCreate(&event, cudaEventDisableTiming | cudaEventInterprocess), cudaSuccess);
  EXPECT_ERROR(cudaIpcGetEventHandle(&m.event, event), cudaSuccess);
  cudaEvent_t own_event;
  EXPECT_ERROR(cudaIpcOpenEventHandle(&own_event, m.event), cudaErrorDeviceUninitialized);
  cudaGetLastError();

  cudaStream_t stream;
  EXPECT_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cudaMemPoolProps props;
  std::memset(&props, 0, sizeof props);
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool;
  EXPECT_ERROR(cudaMemPoolCreate(&pool, &props), cudaSuccess);
  float* pooled = nullptr;
  EXPECT_ERROR(cudaMallocAsync((void**)&pooled, pooled_n * sizeof(float), pool, stream), cudaSuccess);
  fill<<<(pooled_n + 255) / 256, 256, 0, stream>>>(pooled, pooled_n, 0.25f);
  int pool_fd = -1;
  EXPECT_ERROR(cudaMemPoolExportToShareableHandle(&pool_fd, pool, cudaMemHandleTypePosixFileDescriptor, 0), cudaSuccess);
  EXPECT_ERROR(cudaMemPoolExportPointer(&m.pooled, pooled), cudaSuccess);
  EXPECT_ERROR(cudaStreamSynchronize(stream), cudaSuccess);

  int sockets[2];
  EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sockets) == 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(sockets[0]);
    char fd_text[16];
    std::snprintf(fd_text, sizeof fd_text, "%d", sockets[1]);
    char child_word[] = "child";
    char* child_argv[] = {argv[0], child_word, fd_text, nullptr};
    execv("/proc/self/exe", child_argv);
    _exit(127);
  }
  close(sockets[1]);
  EXPECT(write(sockets[0], &m, sizeof m) == static_cast<ssize_t>(sizeof m));
  send_descriptor(sockets[0], pool_fd);
  close(pool_fd);
  int status = 0;
  EXPECT(waitpid(pid, &status, 0) == pid);
  EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  close(sockets[0]);

  EXPECT_ERROR(cudaEventSynchronize(event), cudaSuccess);
  EXPECT(changed_by_child(shared, n, 0.5f));
  EXPECT(changed_by_child(small, small_n, 3.0f));
  EXPECT(changed_by_child(pooled, pooled_n, 0.25f));

  EXPECT_ERROR(cudaEventDestroy(event), cudaSuccess);
  EXPECT_ERROR(cudaFreeAsync(pooled, stream), cudaSuccess);
  EXPECT_ERROR(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_ERROR(cudaMemPoolDestroy(pool), cudaSuccess);
  EXPECT_ERROR(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_ERROR(cudaFree(shared), cudaSuccess);
  EXPECT_ERROR(cudaFree(small), cudaSuccess);
  // The heap is whole after the shared pages went back to it.
  std::vector<float*> more(64);
  for (float*& p : more) EXPECT_ERROR(cudaMalloc(&p, small_n * sizeof(float)), cudaSuccess);
  for (float* p : more) fill<<<1, 32>>>(p, small_n, 1.0f);
  for (float* p : more) EXPECT(filled(p, small_n, 1.0f));
  for (float* p : more) EXPECT_ERROR(cudaFree(p), cudaSuccess);
  EXPECT_ERROR(cudaDeviceSynchronize(), cudaSuccess);
  std::printf("interprocess_memory: %d failures\n", failures);
  return failures ? 1 : 0;
}
