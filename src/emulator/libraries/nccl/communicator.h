// What an NCCL communicator is on the emulator: one rank's view of a shared
// memory segment that every rank of the communicator maps, named by the
// unique id. The segment holds a header (the ranks' processes, a barrier, the
// states of the point-to-point channels), one staging slot per rank, and one
// channel per ordered pair of ranks. A collective moves its data through the
// slots in chunks, the ranks meeting at the barrier between the steps; a send
// puts a chunk in its channel and the receive takes it out. Untouched pages of
// the segment cost no memory.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "lockstep/emu/nccl.h"

namespace lockstep::emu::nccl {

// Bytes of one rank's staging slot: a collective's chunk.
inline constexpr std::size_t slot_bytes = std::size_t{4} << 20;
// Bytes of one point-to-point channel: a send's chunk.
inline constexpr std::size_t channel_bytes = std::size_t{1} << 20;

// The segment's first bytes, zero when the first rank creates it. Only
// lock-free atomics, which work between processes mapping the same pages.
struct segment_header {
  std::atomic<int> nranks;   // set by the first rank to join; others must agree
  std::atomic<int> joined;   // ranks that have joined
  std::atomic<int> arrived;  // ranks at the current barrier
  std::atomic<unsigned> barrier_generation;
  std::atomic<int> failed_rank;  // a rank whose process ended or that aborted, + 1; 0 while none
  // Followed by nranks process ids (0 until that rank joins), then for each
  // channel (from, to) the bytes of the chunk it holds (0: empty).
};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<unsigned>::is_always_lock_free);

// An error with the line NCCL's caller gets from ncclGetLastError.
struct failure {
  ncclResult_t result;
  std::string message;
};

}  // namespace lockstep::emu::nccl

struct ncclComm {
  int rank = 0;
  int nranks = 1;
  int device = 0;
  std::string name;  // the shared memory segment's name
  void* mapping = nullptr;
  std::size_t mapping_bytes = 0;
  std::string last_error;

  lockstep::emu::nccl::segment_header& header() const { return *static_cast<lockstep::emu::nccl::segment_header*>(mapping); }
  std::atomic<int>* process_ids() const;  // nranks entries after the header
  unsigned char* slot(int r) const;       // rank r's staging slot
  std::atomic<long long>& channel_state(int from, int to) const;
  unsigned char* channel_data(int from, int to) const;

  // Joins the segment `id` names as `rank` of `nranks`.
  static ncclComm* join(const ncclUniqueId& id, int nranks, int rank);
  ~ncclComm();
  // Waits until every rank has arrived.
  void barrier();
  // Waits until done() holds. Both throw a failure if a rank's process ended
  // or a rank aborted, and say on stderr every minute that they still wait.
  void wait_until(const std::function<bool()>& done) const;
  void check_peers() const;
  // Marks this rank failed, so that the others stop waiting for it.
  void abort();
};

namespace lockstep::emu::nccl {

// Where the channel states start, and the header's room, rounded so that the slots start page-aligned.
std::size_t channels_offset(int nranks);
std::size_t header_bytes(int nranks);
// A fresh id naming a segment that does not exist yet.
ncclUniqueId new_unique_id();

}  // namespace lockstep::emu::nccl
