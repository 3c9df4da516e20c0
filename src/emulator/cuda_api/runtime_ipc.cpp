// CUDA IPC memory handles (lockstep/emu/runtime_ipc.h): a handle names the
// memory file behind an allocation's pages by the exporter's pid and
// descriptor (shared_pages.h); the importer maps the file.
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "check/device_memory.h"
#include "execution/message_text.h"
#include "execution/shared_pages.h"
#include "lockstep/emu/runtime_ipc.h"
#include "runtime_calls.h"

namespace lockstep::emu {
namespace {

// What a cudaIpcMemHandle_t holds here.
struct memory_handle {
  char tag[8];  // memory_tag: a handle from lockstep's emulator
  std::int32_t pid, fd;
  std::uint64_t offset;  // of the allocation's start in the file
  std::uint64_t bytes;   // the allocation's size
  std::uint64_t serial;  // the exporter's count: a descriptor number may be used again
};
static_assert(sizeof(memory_handle) <= sizeof(cudaIpcMemHandle_t));
constexpr char memory_tag[8] = "ls-ipcm";

struct opened_memory {
  void* ptr;
  int references;
};

struct ipc_state {
  std::mutex mutex;
  std::map<const void*, memory_handle> exported;  // by allocation start
  std::uint64_t exports = 0;
  std::map<std::tuple<int, int, std::uint64_t>, opened_memory> opened;  // by the exporter's pid, fd and serial
};
ipc_state& state() {
  static ipc_state s;
  return s;
}

}  // namespace
}  // namespace lockstep::emu

using lockstep::emu::record;
using lockstep::emu::refuse;
using lockstep::emu::state;

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t* handle, void* ptr) {
  if (!handle || !ptr) return record(cudaErrorInvalidValue);
  if (lockstep::emu::sticky_error()) return lockstep::emu::broken_context();
  const void* begin = nullptr;
  std::size_t bytes = 0;
  if (!lockstep::emu::check::allocation_range(ptr, begin, bytes))
    return refuse("cudaIpcGetMemHandle", cudaErrorInvalidValue,
                  lockstep::emu::hex_text(reinterpret_cast<std::uintptr_t>(ptr)) + " is not in memory that cudaMalloc gave",
                  __builtin_return_address(0));
  auto& s = state();
  std::unique_lock lock(s.mutex);
  lockstep::emu::memory_handle h{};
  if (auto found = s.exported.find(begin); found != s.exported.end()) {
    h = found->second;
  } else {
    std::size_t offset = 0;
    const int fd = lockstep::emu::share_pages(const_cast<void*>(begin), bytes, offset);
    if (fd < 0) return record(cudaErrorMemoryAllocation);
    std::memcpy(h.tag, lockstep::emu::memory_tag, sizeof h.tag);
    h.pid = static_cast<std::int32_t>(getpid());
    h.fd = fd;
    h.offset = offset;
    h.bytes = bytes;
    h.serial = ++s.exports;
    s.exported.emplace(begin, h);
    lock.unlock();  // release() takes the registry's lock, then this one
    // cudaFree makes the pages private again before the heap takes them back.
    lockstep::emu::check::on_release(begin, [begin, bytes, fd] {
      lockstep::emu::unshare_pages(const_cast<void*>(begin), bytes, fd);
      std::lock_guard again(state().mutex);
      state().exported.erase(begin);
    });
  }
  std::memset(handle, 0, sizeof *handle);
  std::memcpy(handle->reserved, &h, sizeof h);
  return cudaSuccess;
}

cudaError_t cudaIpcOpenMemHandle(void** ptr, cudaIpcMemHandle_t handle, unsigned int flags) {
  // The flag is required, as an H100 requires it (bench/RESULTS.md).
  if (!ptr || flags != cudaIpcMemLazyEnablePeerAccess) return record(cudaErrorInvalidValue);
  if (lockstep::emu::sticky_error()) return lockstep::emu::broken_context();
  lockstep::emu::memory_handle h;
  std::memcpy(&h, handle.reserved, sizeof h);
  if (std::memcmp(h.tag, lockstep::emu::memory_tag, sizeof h.tag) != 0)
    return refuse("cudaIpcOpenMemHandle", cudaErrorInvalidValue, "the handle is not one that cudaIpcGetMemHandle gave", __builtin_return_address(0));
  // As on a GPU: a process cannot open its own handles.
  if (h.pid == getpid())
    return refuse("cudaIpcOpenMemHandle", cudaErrorDeviceUninitialized, "the handle was made by this process, which cannot open its own handles",
                  __builtin_return_address(0));
  auto& s = state();
  std::lock_guard lock(s.mutex);
  const auto key = std::make_tuple(h.pid, h.fd, h.serial);
  if (auto open = s.opened.find(key); open != s.opened.end()) {
    ++open->second.references;
    *ptr = open->second.ptr;
    return cudaSuccess;
  }
  const int fd = lockstep::emu::open_other_process_file(h.pid, h.fd);
  if (fd < 0)
    return refuse("cudaIpcOpenMemHandle", cudaErrorMapBufferObjectFailed,
                  "cannot reach the memory of process " + std::to_string(h.pid) + " (it has ended or freed the memory, or is another user's)",
                  __builtin_return_address(0));
  void* mapped = lockstep::emu::map_file(fd, 0, h.offset + h.bytes);
  close(fd);
  if (!mapped) return record(cudaErrorMapBufferObjectFailed);
  void* begin = static_cast<char*>(mapped) + h.offset;
  const std::size_t span = h.offset + h.bytes;
  lockstep::emu::check::add_mapping(begin, h.bytes, [mapped, span] { lockstep::emu::unmap_file(mapped, span); });
  s.opened.emplace(key, lockstep::emu::opened_memory{begin, 1});
  *ptr = begin;
  return cudaSuccess;
}

cudaError_t cudaIpcCloseMemHandle(void* ptr) {
  auto& s = state();
  std::unique_lock lock(s.mutex);
  for (auto it = s.opened.begin(); it != s.opened.end(); ++it) {
    if (it->second.ptr != ptr) continue;
    if (--it->second.references == 0) {
      s.opened.erase(it);
      lock.unlock();
      lockstep::emu::check::release(ptr);
    }
    return cudaSuccess;
  }
  return refuse("cudaIpcCloseMemHandle", cudaErrorInvalidValue,
                lockstep::emu::hex_text(reinterpret_cast<std::uintptr_t>(ptr)) + " was not given by cudaIpcOpenMemHandle",
                __builtin_return_address(0));
}
