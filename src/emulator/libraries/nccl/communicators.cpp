// Communicators: unique ids, init (one rank, or every device of this process
// at once), destroy and abort, the queries, and NCCL's error strings.
#include <cstdio>
#include <memory>
#include <mutex>
#include <vector>

#include "calls.h"

namespace lockstep::emu::nccl {
namespace {

std::mutex last_error_mutex;
std::string last_error;  // of the last failed call without a communicator

void check_rank(int nranks, int rank) {
  if (nranks < 1) throw failure{ncclInvalidArgument, "nranks is " + std::to_string(nranks) + "; a communicator has at least 1 rank"};
  if (rank < 0 || rank >= nranks) throw failure{ncclInvalidArgument, "rank " + std::to_string(rank) + " is outside 0.." + std::to_string(nranks - 1)};
}

int current_device() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) throw failure{ncclUnhandledCudaError, "cudaGetDevice failed"};
  return device;
}

ncclComm* init_rank(int nranks, const ncclUniqueId& id, int rank) {
  check_rank(nranks, rank);
  const int device = current_device();
  ncclComm* comm = ncclComm::join(id, nranks, rank);
  comm->device = device;
  return comm;
}

}  // namespace

ncclResult_t report(const char* call, ncclComm_t comm, ncclResult_t result, const std::string& message) {
  std::fprintf(stderr, "lockstep NCCL: %s: %s (%s)\n", call, message.c_str(), ncclGetErrorString(result));
  const std::lock_guard lock(last_error_mutex);
  last_error = message;
  if (comm) comm->last_error = message;
  return result;
}

}  // namespace lockstep::emu::nccl

using namespace lockstep::emu::nccl;

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  if (!version) return report("ncclGetVersion", nullptr, ncclInvalidArgument, "version is null");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  if (!uniqueId) return report("ncclGetUniqueId", nullptr, ncclInvalidArgument, "uniqueId is null");
  *uniqueId = new_unique_id();
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  if (!comm) return report("ncclCommInitRank", nullptr, ncclInvalidArgument, "comm is null");
  *comm = nullptr;
  return guarded("ncclCommInitRank", nullptr, [&] { *comm = init_rank(nranks, commId, rank); });
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t*) {
  return ncclCommInitRank(comm, nranks, commId, rank);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  if (!comms) return report("ncclCommInitAll", nullptr, ncclInvalidArgument, "comms is null");
  std::vector<std::unique_ptr<ncclComm>> made;
  return guarded("ncclCommInitAll", nullptr, [&] {
    check_rank(ndev, 0);
    int count = 0;
    cudaGetDeviceCount(&count);
    const ncclUniqueId id = new_unique_id();
    for (int r = 0; r < ndev; ++r) {
      const int d = devlist ? devlist[r] : r;
      if (d < 0 || d >= count)
        throw failure{ncclInvalidArgument, "device " + std::to_string(d) + " of rank " + std::to_string(r) + " does not exist (the emulator has " +
                                               std::to_string(count) + "; LOCKSTEP_EMU_DEVICES sets how many)"};
      made.emplace_back(ncclComm::join(id, ndev, r));
      made.back()->device = d;
    }
    for (int r = 0; r < ndev; ++r) comms[r] = made[r].release();
  });
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return comm ? ncclSuccess : report("ncclCommFinalize", nullptr, ncclInvalidArgument, "comm is null");
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  delete comm;  // null is allowed, as in NCCL
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm) comm->abort();
  delete comm;
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  if (!comm || !asyncError) return report("ncclCommGetAsyncError", comm, ncclInvalidArgument, "comm or asyncError is null");
  *asyncError = comm->header().failed_rank.load() != 0 ? ncclRemoteError : ncclSuccess;
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (!comm || !count) return report("ncclCommCount", comm, ncclInvalidArgument, "comm or count is null");
  *count = comm->nranks;
  return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (!comm || !device) return report("ncclCommCuDevice", comm, ncclInvalidArgument, "comm or device is null");
  *device = comm->device;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (!comm || !rank) return report("ncclCommUserRank", comm, ncclInvalidArgument, "comm or rank is null");
  *rank = comm->rank;
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error";
    case ncclSystemError:
      return "unhandled system error";
    case ncclInternalError:
      return "internal error";
    case ncclInvalidArgument:
      return "invalid argument";
    case ncclInvalidUsage:
      return "invalid usage";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}

const char* ncclGetLastError(ncclComm_t comm) {
  static thread_local std::string copy;
  const std::lock_guard lock(last_error_mutex);
  copy = comm ? comm->last_error : last_error;
  return copy.c_str();
}

}  // extern "C"
