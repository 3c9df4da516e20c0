// The shared memory segment behind a communicator: joining it, its barrier,
// and noticing a rank whose process ended while the others wait for it.
#include "communicator.h"

#include <fcntl.h>
#include <immintrin.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <thread>

namespace lockstep::emu::nccl {
namespace {

constexpr char id_prefix[] = "lockstep-nccl:";

std::string segment_name(const ncclUniqueId& id) {
  const std::size_t length = strnlen(id.internal, sizeof id.internal);
  if (length == sizeof id.internal || std::strncmp(id.internal, id_prefix, sizeof id_prefix - 1) != 0)
    throw failure{ncclInvalidArgument, "the unique id was not made by this emulator's ncclGetUniqueId, or was not passed whole"};
  return std::string(id.internal + sizeof id_prefix - 1, length - (sizeof id_prefix - 1));
}

std::string system_error(const char* call, const std::string& name) { return std::string(call) + "(" + name + ") failed: " + std::strerror(errno); }

bool process_ended(int pid) { return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace

std::size_t channels_offset(int nranks) {
  const std::size_t ids_end = sizeof(segment_header) + static_cast<std::size_t>(nranks) * sizeof(std::atomic<int>);
  return (ids_end + alignof(std::atomic<long long>) - 1) / alignof(std::atomic<long long>) * alignof(std::atomic<long long>);
}

std::size_t header_bytes(int nranks) {
  const std::size_t bytes = channels_offset(nranks) + static_cast<std::size_t>(nranks) * nranks * sizeof(std::atomic<long long>);
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

ncclUniqueId new_unique_id() {
  static std::atomic<unsigned> serial{0};
  std::random_device entropy;
  char name[96];
  std::snprintf(name, sizeof name, "%s/lockstep-nccl-%d-%u-%08x%08x", id_prefix, static_cast<int>(getpid()), serial.fetch_add(1), entropy(),
                entropy());
  ncclUniqueId id{};
  std::memcpy(id.internal, name, std::strlen(name));
  return id;
}

}  // namespace lockstep::emu::nccl

using lockstep::emu::nccl::failure;

std::atomic<int>* ncclComm::process_ids() const {
  return reinterpret_cast<std::atomic<int>*>(static_cast<unsigned char*>(mapping) + sizeof(lockstep::emu::nccl::segment_header));
}

std::atomic<long long>& ncclComm::channel_state(int from, int to) const {
  auto* states = reinterpret_cast<std::atomic<long long>*>(static_cast<unsigned char*>(mapping) + lockstep::emu::nccl::channels_offset(nranks));
  return states[from * nranks + to];
}

unsigned char* ncclComm::channel_data(int from, int to) const {
  return slot(nranks) /* the channels follow the last slot */ + static_cast<std::size_t>(from * nranks + to) * lockstep::emu::nccl::channel_bytes;
}

unsigned char* ncclComm::slot(int r) const {
  return static_cast<unsigned char*>(mapping) + lockstep::emu::nccl::header_bytes(nranks) +
         static_cast<std::size_t>(r) * lockstep::emu::nccl::slot_bytes;
}

ncclComm* ncclComm::join(const ncclUniqueId& id, int nranks, int rank) {
  using namespace lockstep::emu::nccl;
  auto comm = std::make_unique<ncclComm>();
  comm->rank = rank;
  comm->nranks = nranks;
  comm->name = segment_name(id);
  const int fd = shm_open(comm->name.c_str(), O_CREAT | O_RDWR, 0600);
  if (fd < 0) throw failure{ncclSystemError, system_error("shm_open", comm->name)};
  comm->mapping_bytes =
      header_bytes(nranks) + static_cast<std::size_t>(nranks) * slot_bytes + static_cast<std::size_t>(nranks) * nranks * channel_bytes;
  struct stat status {};
  // Every rank grows the segment to the size its rank count needs; growing
  // keeps what is there, so the order in which ranks arrive does not matter.
  const bool sized = fstat(fd, &status) == 0 &&
                     (static_cast<std::size_t>(status.st_size) >= comm->mapping_bytes || ftruncate(fd, static_cast<off_t>(comm->mapping_bytes)) == 0);
  if (sized) comm->mapping = mmap(nullptr, comm->mapping_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const std::string why = sized && comm->mapping != MAP_FAILED ? "" : system_error(sized ? "mmap" : "ftruncate", comm->name);
  close(fd);
  if (!why.empty()) {
    comm->mapping = nullptr;
    throw failure{ncclSystemError, why};
  }
  segment_header& header = comm->header();
  int expected = 0;
  if (!header.nranks.compare_exchange_strong(expected, nranks) && expected != nranks)
    throw failure{ncclInvalidArgument, "rank " + std::to_string(rank) + " was told the communicator has " + std::to_string(nranks) +
                                           " ranks, but a rank before it was told " + std::to_string(expected)};
  if (comm->process_ids()[rank].exchange(static_cast<int>(getpid())) != 0)
    throw failure{ncclInvalidArgument, "rank " + std::to_string(rank) + " joined this communicator before (each rank joins once)"};
  // The last rank in removes the name; the ranks keep their mappings.
  if (header.joined.fetch_add(1) + 1 == nranks) shm_unlink(comm->name.c_str());
  return comm.release();
}

ncclComm::~ncclComm() {
  if (!mapping) return;
  // A rank that leaves before every rank joined removes the name, which
  // would otherwise outlive the processes: that communicator cannot work.
  if (header().joined.load() < nranks) shm_unlink(name.c_str());
  munmap(mapping, mapping_bytes);
}

void ncclComm::abort() {
  int none = 0;
  header().failed_rank.compare_exchange_strong(none, rank + 1);
}

void ncclComm::check_peers() const {
  lockstep::emu::nccl::segment_header& h = header();
  if (const int failed = h.failed_rank.load(); failed != 0)
    throw failure{ncclRemoteError, "rank " + std::to_string(failed - 1) + " of this communicator aborted or its process ended"};
  for (int r = 0; r < nranks; ++r)
    if (const int pid = process_ids()[r].load(); lockstep::emu::nccl::process_ended(pid)) {
      int none = 0;
      h.failed_rank.compare_exchange_strong(none, r + 1);
      throw failure{ncclRemoteError, "rank " + std::to_string(r) + " (process " + std::to_string(pid) + ") ended while this rank waited for it"};
    }
}

void ncclComm::wait_until(const std::function<bool()>& done) const {
  using clock = std::chrono::steady_clock;
  const clock::time_point start = clock::now();
  clock::time_point next_check = start + std::chrono::milliseconds(100), next_note = start + std::chrono::seconds(60);
  for (unsigned spins = 0; !done(); ++spins) {
    if (spins < 256) {
      _mm_pause();
      continue;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(spins < 4096 ? 0 : 50));
    if (const clock::time_point now = clock::now(); now >= next_check) {
      check_peers();
      next_check = now + std::chrono::milliseconds(100);
      if (now >= next_note) {
        std::fprintf(stderr, "lockstep NCCL: rank %d has waited %lld s for the other %d ranks (%d of them have joined)\n", rank,
                     static_cast<long long>(std::chrono::duration_cast<std::chrono::seconds>(now - start).count()), nranks - 1,
                     header().joined.load() - 1);
        next_note = now + std::chrono::seconds(60);
      }
    }
  }
}

void ncclComm::barrier() {
  lockstep::emu::nccl::segment_header& h = header();
  check_peers();
  const unsigned generation = h.barrier_generation.load(std::memory_order_acquire);
  if (h.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == nranks) {
    h.arrived.store(0, std::memory_order_relaxed);
    h.barrier_generation.store(generation + 1, std::memory_order_release);
    return;
  }
  wait_until([&] { return h.barrier_generation.load(std::memory_order_acquire) != generation; });
}
