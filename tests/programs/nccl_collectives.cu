// A program using NCCL as multi-GPU programs do: one communicator over every
// device of the process (ncclCommInitAll, the calls in a group), then one rank
// per process (ncclCommInitRank, the unique id made before the processes fork,
// as MPI programs pass it with MPI_Bcast). Each collective is checked against a
// float64 reference over fresh random inputs, the outputs poisoned first; the
// lengths span several of the emulator's staging chunks. The other ranks'
// processes are this program started again (fork and exec) with the id. Runs on every device
// there is: on the emulator CTest gives it LOCKSTEP_EMU_DEVICES=3; on a GPU
// machine with one GPU, a communicator of one rank.
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "expect.h"

#define EXPECT_NCCL(call, expected)                                                                                            \
  do {                                                                                                                         \
    const ncclResult_t got = (call);                                                                                           \
    if (got != (expected)) {                                                                                                   \
      std::fprintf(stderr, "%s:%d: %s gave %s, expected %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(got), #expected); \
      ++failures;                                                                                                              \
    }                                                                                                                          \
  } while (0)

template <class T>
struct nccl_type;
template <>
struct nccl_type<float> {
  static constexpr ncclDataType_t value = ncclFloat;
  static constexpr double tolerance = 1e-6;
};
template <>
struct nccl_type<double> {
  static constexpr ncclDataType_t value = ncclDouble;
  static constexpr double tolerance = 1e-14;
};
template <>
struct nccl_type<__half> {
  static constexpr ncclDataType_t value = ncclHalf;
  static constexpr double tolerance = 4e-3;
};
template <>
struct nccl_type<__nv_bfloat16> {
  static constexpr ncclDataType_t value = ncclBfloat16;
  static constexpr double tolerance = 3e-2;
};
template <>
struct nccl_type<int> {
  static constexpr ncclDataType_t value = ncclInt32;
  static constexpr double tolerance = 0;
};
template <>
struct nccl_type<unsigned char> {
  static constexpr ncclDataType_t value = ncclUint8;
  static constexpr double tolerance = 0;
};

template <class T>
double to_double(T v) {
  return static_cast<double>(v);
}
template <>
double to_double(__half v) {
  return __half2float(v);
}
template <>
double to_double(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <class T>
T from_double(double v) {
  return static_cast<T>(v);
}
template <>
__half from_double(double v) {
  return __float2half(static_cast<float>(v));
}
template <>
__nv_bfloat16 from_double(double v) {
  return __float2bfloat16(static_cast<float>(v));
}

std::mt19937 rng(20261125);

// Values that keep products and sums representable: integers 1..3, floats in [0.5, 1.5).
template <class T>
std::vector<T> random_values(size_t n) {
  std::vector<T> v(n);
  std::uniform_real_distribution<double> real(0.5, 1.5);
  std::uniform_int_distribution<int> whole(1, 3);
  for (T& x : v) x = from_double<T>(nccl_type<T>::tolerance == 0 ? whole(rng) : real(rng));
  return v;
}

double combine(ncclRedOp_t op, double a, double b) {
  switch (op) {
    case ncclProd:
      return a * b;
    case ncclMax:
      return std::max(a, b);
    case ncclMin:
      return std::min(a, b);
    default:
      return a + b;
  }
}

// |got - want| within the type's tolerance, relative to the size of want (times the terms added).
template <class T>
bool close(T got, double want, int terms) {
  return std::fabs(to_double(got) - want) <= nccl_type<T>::tolerance * terms * std::max(1.0, std::fabs(want));
}

struct ranks {
  std::vector<ncclComm_t> comms;
  int n() const { return static_cast<int>(comms.size()); }
};

template <class T>
T* device_copy(const std::vector<T>& host, int device) {
  cudaSetDevice(device);
  T* p = nullptr;
  cudaMalloc(&p, host.size() * sizeof(T));
  cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  return p;
}

template <class T>
T* poisoned(size_t n, int device) {
  cudaSetDevice(device);
  T* p = nullptr;
  cudaMalloc(&p, n * sizeof(T));
  cudaMemset(p, 0xff, n * sizeof(T));
  return p;
}

template <class T>
std::vector<T> to_host(const T* p, size_t n) {
  std::vector<T> v(n);
  cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
  return v;
}

// AllReduce (each op), Reduce to the last rank, Broadcast from rank 1 % n,
// AllGather, ReduceScatter, and AllReduce in place, over `count` elements.
template <class T>
void check_collectives(const ranks& all, size_t count) {
  const int n = all.n();
  const ncclDataType_t type = nccl_type<T>::value;
  std::vector<std::vector<T>> inputs;
  std::vector<T*> send, recv;
  for (int r = 0; r < n; ++r) {
    inputs.push_back(random_values<T>(count * n));  // ReduceScatter sends n * count
    send.push_back(device_copy(inputs[r], r));
    recv.push_back(poisoned<T>(count * n, r));
  }
  const auto reference = [&](ncclRedOp_t op, size_t i) {
    double v = to_double(inputs[0][i]);
    for (int r = 1; r < n; ++r) v = combine(op, v, to_double(inputs[r][i]));
    return op == ncclAvg ? v / n : v;
  };
  for (ncclRedOp_t op : {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg}) {
    if (nccl_type<T>::tolerance == 0 && op == ncclAvg) continue;  // integer averages truncate; checked below for int
    EXPECT_NCCL(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < n; ++r) EXPECT_NCCL(ncclAllReduce(send[r], recv[r], count, type, op, all.comms[r], 0), ncclSuccess);
    EXPECT_NCCL(ncclGroupEnd(), ncclSuccess);
    for (int r = 0; r < n; ++r) {
      const std::vector<T> got = to_host(recv[r], count);
      size_t wrong = 0;
      for (size_t i = 0; i < count; ++i) wrong += !close(got[i], reference(op, i), n);
      EXPECT(wrong == 0);
      if (wrong) std::fprintf(stderr, "  AllReduce op %d, rank %d: %zu of %zu wrong\n", op, r, wrong, count);
    }
  }
  // Reduce: only the root's buffer is written.
  const int root = n - 1;
  for (int r = 0; r < n; ++r) cudaMemset(recv[r], 0xff, count * n * sizeof(T));
  EXPECT_NCCL(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < n; ++r) EXPECT_NCCL(ncclReduce(send[r], recv[r], count, type, ncclMax, root, all.comms[r], 0), ncclSuccess);
  EXPECT_NCCL(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < n; ++r) {
    const std::vector<T> got = to_host(recv[r], count);
    size_t wrong = 0;
    for (size_t i = 0; i < count; ++i) {
      const bool poison =
          std::vector<unsigned char>(sizeof(T), 0xff) ==
          std::vector<unsigned char>(reinterpret_cast<const unsigned char*>(&got[i]), reinterpret_cast<const unsigned char*>(&got[i]) + sizeof(T));
      wrong += r == root ? !close(got[i], reference(ncclMax, i), n) : !poison;
    }
    EXPECT(wrong == 0);
  }
  // Broadcast; AllGather; ReduceScatter.
  const int source = 1 % n;
  EXPECT_NCCL(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < n; ++r) EXPECT_NCCL(ncclBroadcast(send[r], recv[r], count, type, source, all.comms[r], 0), ncclSuccess);
  EXPECT_NCCL(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < n; ++r) EXPECT(std::memcmp(to_host(recv[r], count).data(), inputs[source].data(), count * sizeof(T)) == 0);
  EXPECT_NCCL(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < n; ++r) EXPECT_NCCL(ncclAllGather(send[r], recv[r], count, type, all.comms[r], 0), ncclSuccess);
  EXPECT_NCCL(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < n; ++r) {
    const std::vector<T> got = to_host(recv[r], count * n);
    size_t wrong = 0;
    for (int q = 0; q < n; ++q)
      for (size_t i = 0; i < count; ++i) wrong += to_double(got[q * count + i]) != to_double(inputs[q][i]);
    EXPECT(wrong == 0);
  }
  for (int r = 0; r < n; ++r) cudaMemset(recv[r], 0xff, count * n * sizeof(T));
  EXPECT_NCCL(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < n; ++r) EXPECT_NCCL(ncclReduceScatter(send[r], recv[r], count, type, ncclSum, all.comms[r], 0), ncclSuccess);
  EXPECT_NCCL(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < n; ++r) {
    const std::vector<T> got = to_host(recv[r], count);
    size_t wrong = 0;
    for (size_t i = 0; i < count; ++i) wrong += !close(got[i], reference(ncclSum, r * count + i), n);
    EXPECT(wrong == 0);
  }
  // In place: the send buffer is the receive buffer.
  EXPECT_NCCL(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < n; ++r) EXPECT_NCCL(ncclAllReduce(send[r], send[r], count, type, ncclSum, all.comms[r], 0), ncclSuccess);
  EXPECT_NCCL(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < n; ++r) {
    const std::vector<T> got = to_host(send[r], count);
    size_t wrong = 0;
    for (size_t i = 0; i < count; ++i) wrong += !close(got[i], reference(ncclSum, i), n);
    EXPECT(wrong == 0);
  }
  for (int r = 0; r < n; ++r) {
    cudaFree(send[r]);
    cudaFree(recv[r]);
  }
}

// Point-to-point in groups: a ring (each rank sends to the next and receives
// from the one before, at once), then all-to-all (each rank sends segment q of
// its buffer to rank q, itself included). Lengths span several channel chunks.
void check_send_recv(const ranks& all) {
  const int n = all.n();
  const size_t count = (size_t{3} << 18) + 5;  // 3 MiB + 20 bytes of floats
  std::vector<std::vector<float>> inputs;
  std::vector<float*> send, recv;
  for (int r = 0; r < n; ++r) {
    inputs.push_back(random_values<float>(count * n));
    send.push_back(device_copy(inputs[r], r));
    recv.push_back(poisoned<float>(count * n, r));
  }
  EXPECT_NCCL(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < n; ++r) {
    EXPECT_NCCL(ncclSend(send[r], count, ncclFloat, (r + 1) % n, all.comms[r], 0), ncclSuccess);
    EXPECT_NCCL(ncclRecv(recv[r], count, ncclFloat, (r + n - 1) % n, all.comms[r], 0), ncclSuccess);
  }
  EXPECT_NCCL(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < n; ++r) EXPECT(std::memcmp(to_host(recv[r], count).data(), inputs[(r + n - 1) % n].data(), count * sizeof(float)) == 0);
  const size_t segment = count / 4;
  EXPECT_NCCL(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < n; ++r)
    for (int q = 0; q < n; ++q) {
      EXPECT_NCCL(ncclSend(send[r] + q * segment, segment, ncclFloat, q, all.comms[r], 0), ncclSuccess);
      EXPECT_NCCL(ncclRecv(recv[r] + q * segment, segment, ncclFloat, q, all.comms[r], 0), ncclSuccess);
    }
  EXPECT_NCCL(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < n; ++r) {
    const std::vector<float> got = to_host(recv[r], segment * n);
    for (int q = 0; q < n; ++q) EXPECT(std::memcmp(got.data() + q * segment, inputs[q].data() + r * segment, segment * sizeof(float)) == 0);
  }
  for (int r = 0; r < n; ++r) {
    cudaFree(send[r]);
    cudaFree(recv[r]);
  }
}

// One rank of a communicator spread over processes: an AllReduce of (rank + 1)
// everywhere, whose sum is n (n + 1) / 2, and an integer average.
int process_rank(const ncclUniqueId& id, int n, int rank) {
  cudaSetDevice(rank);
  ncclComm_t comm = nullptr;
  EXPECT_NCCL(ncclCommInitRank(&comm, n, id, rank), ncclSuccess);
  int got_rank = -1, got_count = -1;
  EXPECT(ncclCommUserRank(comm, &got_rank) == ncclSuccess && got_rank == rank);
  EXPECT(ncclCommCount(comm, &got_count) == ncclSuccess && got_count == n);
  const size_t count = (size_t{3} << 20) + 11;
  float* data = device_copy(std::vector<float>(count, rank + 1.0f), rank);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  EXPECT_NCCL(ncclAllReduce(data, data, count, ncclFloat, ncclSum, comm, stream), ncclSuccess);
  EXPECT(cudaStreamSynchronize(stream) == cudaSuccess);
  const std::vector<float> sums = to_host(data, count);
  EXPECT(std::count(sums.begin(), sums.end(), n * (n + 1) / 2.0f) == static_cast<long>(count));
  int* whole = device_copy(std::vector<int>(n * 5, 10 * rank + 1), rank);
  EXPECT_NCCL(ncclReduceScatter(whole, whole + rank * 5, 5, ncclInt32, ncclAvg, comm, stream), ncclSuccess);
  cudaStreamSynchronize(stream);
  const std::vector<int> averages = to_host(whole + rank * 5, 5);
  EXPECT(averages == std::vector<int>(5, (10 * n * (n - 1) / 2 + n) / n));
  // Neighbours exchange across processes, both ways at once.
  float* mine = device_copy(std::vector<float>(count, 100.0f + rank), rank);
  float* left = poisoned<float>(count, rank);
  float* right = poisoned<float>(count, rank);
  EXPECT_NCCL(ncclGroupStart(), ncclSuccess);
  EXPECT_NCCL(ncclSend(mine, count, ncclFloat, (rank + 1) % n, comm, stream), ncclSuccess);
  EXPECT_NCCL(ncclSend(mine, count, ncclFloat, (rank + n - 1) % n, comm, stream), ncclSuccess);
  EXPECT_NCCL(ncclRecv(left, count, ncclFloat, (rank + n - 1) % n, comm, stream), ncclSuccess);
  EXPECT_NCCL(ncclRecv(right, count, ncclFloat, (rank + 1) % n, comm, stream), ncclSuccess);
  EXPECT_NCCL(ncclGroupEnd(), ncclSuccess);
  cudaStreamSynchronize(stream);
  const std::vector<float> from_left = to_host(left, count), from_right = to_host(right, count);
  EXPECT(std::count(from_left.begin(), from_left.end(), 100.0f + (rank + n - 1) % n) == static_cast<long>(count));
  EXPECT(std::count(from_right.begin(), from_right.end(), 100.0f + (rank + 1) % n) == static_cast<long>(count));
  cudaFree(mine);
  cudaFree(left);
  cudaFree(right);
  cudaFree(data);
  cudaFree(whole);
  cudaStreamDestroy(stream);
  EXPECT_NCCL(ncclCommDestroy(comm), ncclSuccess);
  return failures;
}

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "rank") {  // started by the first rank's process, below
    ncclUniqueId id;
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i) id.internal[i] = static_cast<char>(std::stoi(std::string(argv[4] + 2 * i, 2), nullptr, 16));
    return process_rank(id, std::atoi(argv[3]), std::atoi(argv[2])) == 0 ? 0 : 1;
  }
  int version = 0;
  EXPECT(ncclGetVersion(&version) == ncclSuccess && version >= 20000);
  int n = 0;
  EXPECT(cudaGetDeviceCount(&n) == cudaSuccess && n >= 1);

  ranks all;
  all.comms.resize(n);
  EXPECT_NCCL(ncclCommInitAll(all.comms.data(), n, nullptr), ncclSuccess);
  for (int r = 0; r < n; ++r) {
    int device = -1, rank = -1;
    EXPECT(ncclCommCuDevice(all.comms[r], &device) == ncclSuccess && device == r);
    EXPECT(ncclCommUserRank(all.comms[r], &rank) == ncclSuccess && rank == r);
  }
  check_collectives<float>(all, (size_t{5} << 18) + 3);  // 5 MiB + 12 bytes of floats: two chunks
  check_collectives<double>(all, 1000);
  check_collectives<__half>(all, 4099);
  check_collectives<__nv_bfloat16>(all, 257);
  check_collectives<int>(all, 77777);
  check_collectives<unsigned char>(all, 31);
  check_send_recv(all);

  // What NCCL refuses when called.
  float* buffer = nullptr;
  cudaSetDevice(0);
  cudaMalloc(&buffer, 64 * sizeof(float));
  EXPECT_NCCL(ncclBroadcast(buffer, buffer, 64, ncclFloat, n, all.comms[0], 0), ncclInvalidArgument);
  EXPECT_NCCL(ncclSend(buffer, 64, ncclFloat, n, all.comms[0], 0), ncclInvalidArgument);
  EXPECT_NCCL(ncclAllReduce(buffer, buffer, 64, ncclFloat, static_cast<ncclRedOp_t>(ncclNumOps), all.comms[0], 0), ncclInvalidArgument);
  EXPECT_NCCL(ncclAllReduce(buffer, buffer, 64, static_cast<ncclDataType_t>(ncclNumTypes), ncclSum, all.comms[0], 0), ncclInvalidArgument);
  EXPECT_NCCL(ncclAllReduce(buffer, buffer, 64, ncclFloat, ncclSum, nullptr, 0), ncclInvalidArgument);
  EXPECT_NCCL(ncclGroupEnd(), ncclInvalidUsage);
  cudaFree(buffer);
  for (ncclComm_t comm : all.comms) EXPECT_NCCL(ncclCommDestroy(comm), ncclSuccess);

  // One rank per process: the id made before the processes start.
  ncclUniqueId id;
  EXPECT_NCCL(ncclGetUniqueId(&id), ncclSuccess);
  std::string id_text;
  for (char c : id.internal) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(c));
    id_text += hex;
  }
  std::vector<pid_t> children;
  for (int rank = 1; rank < n; ++rank) {
    const pid_t child = fork();
    if (child == 0) {
      std::string rank_text = std::to_string(rank), count_text = std::to_string(n), rank_word = "rank";
      char* child_argv[] = {argv[0], rank_word.data(), rank_text.data(), count_text.data(), id_text.data(), nullptr};
      execv("/proc/self/exe", child_argv);
      _exit(127);
    }
    children.push_back(child);
  }
  process_rank(id, n, 0);
  for (pid_t child : children) {
    int status = 0;
    EXPECT(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::printf("%s: %d ranks, %d failures\n", failures ? "FAILED" : "PASSED", n, failures);
  return failures ? 1 : 0;
}
