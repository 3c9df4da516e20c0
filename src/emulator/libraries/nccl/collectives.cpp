// The collectives, point-to-point sends and receives, and groups of them.
// Every rank moves a collective's data through its staging slot in chunks; a
// reduction is split among the ranks, each reducing its part of the chunk over
// all slots in rank order (so every rank gets the same bits, as from NCCL) and
// publishing it in its own slot for the others. A send fills its channel to
// the peer a chunk at a time as the receive empties it; a group's sends and
// receives progress together, so that ranks may send to each other at once.
#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "calls.h"
#include "check/device_memory.h"
#include "elements.h"

namespace lockstep::emu::nccl {
namespace {

enum class collective { all_reduce, broadcast, reduce, all_gather, reduce_scatter, send, recv };

struct operation {
  const char* call;
  collective what;
  const unsigned char* send;
  unsigned char* recv;
  std::size_t count;  // per rank: the sendcount of AllGather, the recvcount of ReduceScatter
  ncclDataType_t type;
  ncclRedOp_t op;
  int root;  // the peer of a send or receive
  ncclComm_t comm;
  cudaStream_t stream;
};

thread_local int group_depth = 0;
thread_local std::vector<operation> pending;

// Rank r's share [first, last) of n elements.
std::size_t share_begin(std::size_t n, int nranks, int r) { return n * static_cast<std::size_t>(r) / static_cast<std::size_t>(nranks); }

void check_buffer(const char* name, const void* buffer, std::size_t bytes) {
  if (bytes == 0) return;
  if (!buffer) throw failure{ncclInvalidArgument, std::string(name) + " is null"};
  if (const std::size_t room = check::bytes_to_end(buffer); bytes > room)
    throw failure{ncclInvalidArgument, std::string(name) + " spans " + std::to_string(bytes) + " bytes, " + std::to_string(bytes - room) +
                                           " past the end of its cudaMalloc'd allocation"};
}

void validate(const operation& o) {
  if (!o.comm) throw failure{ncclInvalidArgument, "comm is null"};
  const std::size_t bytes = element_bytes(o.type), n = o.comm->nranks;
  if (bytes == 0) throw failure{ncclInvalidArgument, std::string(type_name(o.type)) + " is not a type the emulator reduces or moves"};
  const bool reduces = o.what == collective::all_reduce || o.what == collective::reduce || o.what == collective::reduce_scatter;
  if (reduces && (o.op < ncclSum || o.op >= ncclNumOps))
    throw failure{ncclInvalidArgument, "op " + std::to_string(static_cast<int>(o.op)) + " is not ncclSum, ncclProd, ncclMax, ncclMin or ncclAvg"};
  const bool rooted = o.what == collective::broadcast || o.what == collective::reduce;
  const bool peered = o.what == collective::send || o.what == collective::recv;
  if ((rooted || peered) && (o.root < 0 || o.root >= o.comm->nranks))
    throw failure{ncclInvalidArgument,
                  std::string(peered ? "peer " : "root ") + std::to_string(o.root) + " is outside 0.." + std::to_string(o.comm->nranks - 1)};
  const bool is_root = o.comm->rank == o.root;
  const std::size_t count = o.count * bytes;
  switch (o.what) {
    case collective::all_reduce:
      check_buffer("sendbuff", o.send, count);
      check_buffer("recvbuff", o.recv, count);
      break;
    case collective::broadcast:
      if (is_root) check_buffer("sendbuff", o.send, count);
      check_buffer("recvbuff", o.recv, count);
      break;
    case collective::reduce:
      check_buffer("sendbuff", o.send, count);
      if (is_root) check_buffer("recvbuff", o.recv, count);
      break;
    case collective::all_gather:
      check_buffer("sendbuff", o.send, count);
      check_buffer("recvbuff", o.recv, count * n);
      break;
    case collective::reduce_scatter:
      check_buffer("sendbuff", o.send, count * n);
      check_buffer("recvbuff", o.recv, count);
      break;
    case collective::send:
      check_buffer("sendbuff", o.send, count);
      break;
    case collective::recv:
      check_buffer("recvbuff", o.recv, count);
      break;
  }
}

bool point_to_point(const operation& o) { return o.what == collective::send || o.what == collective::recv; }

void wait_for_stream(const operation& o) {
  if (const cudaError_t e = cudaStreamSynchronize(o.stream); e != cudaSuccess)
    throw failure{ncclUnhandledCudaError, std::string("the stream's earlier work failed: ") + cudaGetErrorString(e)};
}

// Sends and receives of one rank, progressing together until all are done;
// each channel carries one operation at a time, in the order they were called.
void run_point_to_point(const std::vector<const operation*>& calls) {
  for (const operation* o : calls) wait_for_stream(*o);
  ncclComm& c = *calls.front()->comm;
  std::vector<std::size_t> moved(calls.size(), 0), totals;
  for (const operation* o : calls) totals.push_back(o->count * element_bytes(o->type));
  const auto step = [&] {
    bool any = false;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      const operation& o = *calls[i];
      bool earlier = false;
      for (std::size_t j = 0; j < i && !earlier; ++j) earlier = calls[j]->what == o.what && calls[j]->root == o.root && moved[j] < totals[j];
      if (earlier || moved[i] == totals[i]) continue;
      if (o.what == collective::send) {
        std::atomic<long long>& state = c.channel_state(c.rank, o.root);
        if (state.load(std::memory_order_acquire) != 0) continue;
        const std::size_t bytes = std::min(channel_bytes, totals[i] - moved[i]);
        std::memcpy(c.channel_data(c.rank, o.root), o.send + moved[i], bytes);
        state.store(static_cast<long long>(bytes), std::memory_order_release);
        moved[i] += bytes;
      } else {
        std::atomic<long long>& state = c.channel_state(o.root, c.rank);
        const long long bytes = state.load(std::memory_order_acquire);
        if (bytes == 0) continue;
        if (moved[i] + bytes > totals[i])
          throw failure{ncclInvalidUsage, "rank " + std::to_string(o.root) + " sent more than the " + std::to_string(totals[i]) +
                                              " bytes this rank's ncclRecv from it expects"};
        std::memcpy(o.recv + moved[i], c.channel_data(o.root, c.rank), static_cast<std::size_t>(bytes));
        state.store(0, std::memory_order_release);
        moved[i] += static_cast<std::size_t>(bytes);
      }
      any = true;
    }
    return any;
  };
  c.wait_until([&] {
    while (step()) {
    }
    for (std::size_t i = 0; i < calls.size(); ++i)
      if (moved[i] < totals[i]) return false;
    return true;
  });
  for (std::size_t i = 0; i < calls.size(); ++i)
    if (calls[i]->what == collective::recv && totals[i] > 0) check::mark_written(calls[i]->recv, totals[i]);
}

// AllReduce and Reduce: every rank reduces its share of the chunk, then
// everyone (or the root) gathers the shares.
void reduce_chunk(const operation& o, std::size_t offset, std::size_t n, std::vector<unsigned char>& scratch) {
  ncclComm& c = *o.comm;
  const std::size_t bytes = element_bytes(o.type);
  std::memcpy(c.slot(c.rank), o.send + offset * bytes, n * bytes);
  c.barrier();
  const std::size_t first = share_begin(n, c.nranks, c.rank), last = share_begin(n, c.nranks, c.rank + 1);
  scratch.resize((last - first) * bytes);
  for (int r = 0; r < c.nranks; ++r) combine(scratch.data(), c.slot(r) + first * bytes, last - first, o.type, o.op, c.nranks, r == 0);
  if (o.op == ncclAvg) finish_average(scratch.data(), last - first, o.type, c.nranks);
  std::memcpy(c.slot(c.rank) + first * bytes, scratch.data(), scratch.size());
  c.barrier();
  if (o.what == collective::all_reduce || c.rank == o.root)
    for (int r = 0; r < c.nranks; ++r) {
      const std::size_t begin = share_begin(n, c.nranks, r), end = share_begin(n, c.nranks, r + 1);
      std::memcpy(o.recv + (offset + begin) * bytes, c.slot(r) + begin * bytes, (end - begin) * bytes);
    }
  c.barrier();
}

void run(const operation& o) {
  if (point_to_point(o)) return run_point_to_point({&o});
  wait_for_stream(o);
  ncclComm& c = *o.comm;
  const std::size_t bytes = element_bytes(o.type), n = c.nranks;
  const std::size_t chunk = slot_bytes / bytes / (o.what == collective::reduce_scatter ? n : 1);
  std::vector<unsigned char> scratch;
  for (std::size_t offset = 0; offset < o.count; offset += chunk) {
    const std::size_t part = std::min(chunk, o.count - offset), part_bytes = part * bytes;
    switch (o.what) {
      case collective::all_reduce:
      case collective::reduce:
        reduce_chunk(o, offset, part, scratch);
        break;
      case collective::broadcast:
        if (c.rank == o.root) std::memcpy(c.slot(o.root), o.send + offset * bytes, part_bytes);
        c.barrier();
        std::memcpy(o.recv + offset * bytes, c.slot(o.root), part_bytes);
        c.barrier();
        break;
      case collective::all_gather:
        std::memcpy(c.slot(c.rank), o.send + offset * bytes, part_bytes);
        c.barrier();
        for (int r = 0; r < c.nranks; ++r) std::memcpy(o.recv + (r * o.count + offset) * bytes, c.slot(r), part_bytes);
        c.barrier();
        break;
      case collective::reduce_scatter:
        for (int q = 0; q < c.nranks; ++q) std::memcpy(c.slot(c.rank) + q * part_bytes, o.send + (q * o.count + offset) * bytes, part_bytes);
        c.barrier();
        for (int r = 0; r < c.nranks; ++r) combine(o.recv + offset * bytes, c.slot(r) + c.rank * part_bytes, part, o.type, o.op, c.nranks, r == 0);
        if (o.op == ncclAvg) finish_average(o.recv + offset * bytes, part, o.type, c.nranks);
        c.barrier();
        break;
      case collective::send:
      case collective::recv:
        break;  // run_point_to_point
    }
  }
  const bool writes = o.what != collective::reduce || c.rank == o.root;
  if (writes && o.count > 0) check::mark_written(o.recv, o.count * bytes * (o.what == collective::all_gather ? n : 1));
}

ncclResult_t submit(const operation& o) {
  return guarded(o.call, o.comm, [&] {
    validate(o);
    if (group_depth > 0)
      pending.push_back(o);
    else
      run(o);
  });
}

// A group's calls, each communicator's in order on a thread of its own (the
// ranks of one process must run at once to meet); one communicator's inline.
// Consecutive sends and receives of a communicator run together.
ncclResult_t run_group(std::vector<operation> calls) {
  std::vector<ncclComm_t> comms;
  for (const operation& o : calls)
    if (std::find(comms.begin(), comms.end(), o.comm) == comms.end()) comms.push_back(o.comm);
  std::vector<ncclResult_t> results(comms.size(), ncclSuccess);
  const auto run_comm = [&](std::size_t i) {
    if (comms.size() > 1) cudaSetDevice(comms[i]->device);
    std::vector<const operation*> sends_and_receives;
    const auto flush = [&] {
      if (!sends_and_receives.empty() && results[i] == ncclSuccess)
        results[i] = guarded(sends_and_receives.front()->call, comms[i], [&] { run_point_to_point(sends_and_receives); });
      sends_and_receives.clear();
    };
    for (const operation& o : calls) {
      if (o.comm != comms[i]) continue;
      if (point_to_point(o)) {
        sends_and_receives.push_back(&o);
        continue;
      }
      flush();
      if (results[i] == ncclSuccess) results[i] = guarded(o.call, o.comm, [&] { run(o); });
    }
    flush();
  };
  if (comms.size() <= 1) {
    if (!comms.empty()) run_comm(0);
  } else {
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < comms.size(); ++i) threads.emplace_back(run_comm, i);
    for (std::thread& t : threads) t.join();
  }
  for (const ncclResult_t r : results)
    if (r != ncclSuccess) return r;
  return ncclSuccess;
}

}  // namespace
}  // namespace lockstep::emu::nccl

using namespace lockstep::emu::nccl;

extern "C" {

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  return submit({"ncclAllReduce", collective::all_reduce, static_cast<const unsigned char*>(sendbuff), static_cast<unsigned char*>(recvbuff), count,
                 datatype, op, 0, comm, stream});
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  return submit({"ncclBroadcast", collective::broadcast, static_cast<const unsigned char*>(sendbuff), static_cast<unsigned char*>(recvbuff), count,
                 datatype, ncclSum, root, comm, stream});
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return submit({"ncclBcast", collective::broadcast, static_cast<const unsigned char*>(buff), static_cast<unsigned char*>(buff), count, datatype,
                 ncclSum, root, comm, stream});
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                        cudaStream_t stream) {
  return submit({"ncclReduce", collective::reduce, static_cast<const unsigned char*>(sendbuff), static_cast<unsigned char*>(recvbuff), count,
                 datatype, op, root, comm, stream});
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return submit({"ncclAllGather", collective::all_gather, static_cast<const unsigned char*>(sendbuff), static_cast<unsigned char*>(recvbuff),
                 sendcount, datatype, ncclSum, 0, comm, stream});
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  return submit({"ncclReduceScatter", collective::reduce_scatter, static_cast<const unsigned char*>(sendbuff), static_cast<unsigned char*>(recvbuff),
                 recvcount, datatype, op, 0, comm, stream});
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm, cudaStream_t stream) {
  return submit({"ncclSend", collective::send, static_cast<const unsigned char*>(sendbuff), nullptr, count, datatype, ncclSum, peer, comm, stream});
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm, cudaStream_t stream) {
  return submit({"ncclRecv", collective::recv, nullptr, static_cast<unsigned char*>(recvbuff), count, datatype, ncclSum, peer, comm, stream});
}

ncclResult_t ncclGroupStart() {
  ++group_depth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (group_depth == 0) return report("ncclGroupEnd", nullptr, ncclInvalidUsage, "ncclGroupEnd without a ncclGroupStart before it");
  if (--group_depth > 0) return ncclSuccess;
  return run_group(std::exchange(pending, {}));
}

}  // extern "C"
