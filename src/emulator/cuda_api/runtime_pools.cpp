// Memory pools and stream attributes (lockstep/emu/runtime_pools.h), and
// pools shared between processes (runtime_ipc.h).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "check/device_memory.h"
#include "execution/shared_pages.h"
#include "lockstep/emu/runtime_ipc.h"
#include "runtime_calls.h"

namespace {

// The memory of a pool made with cudaMemHandleTypePosixFileDescriptor: one
// memory file, in page-sized extents, that importing processes map too. Its
// allocations keep it alive past cudaMemPoolDestroy, as CUDA's do.
struct pool_file {
  std::mutex mutex;
  int fd = -1;
  std::size_t bytes = 0;                       // the file's size
  std::map<std::size_t, std::size_t> free;     // extents given back: offset -> bytes
  std::map<const void*, std::size_t> offsets;  // this process's allocations from the file
  explicit pool_file(int descriptor) : fd(descriptor) {}
  ~pool_file() { close(fd); }
  pool_file(const pool_file&) = delete;
  pool_file& operator=(const pool_file&) = delete;

  // An extent of `rounded` bytes (a multiple of the page): a freed one that fits, else the file grows. SIZE_MAX if it cannot.
  std::size_t take(std::size_t rounded) {
    for (auto it = free.begin(); it != free.end(); ++it) {
      if (it->second < rounded) continue;
      const std::size_t offset = it->first, left = it->second - rounded;
      free.erase(it);
      if (left) free[offset + rounded] = left;
      return offset;
    }
    if (ftruncate(fd, static_cast<off_t>(bytes + rounded)) != 0) return SIZE_MAX;
    bytes += rounded;
    return bytes - rounded;
  }
};

// Names a file across processes: a descriptor passed to another process is another number for the same inode.
std::uint64_t file_identity(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_ino) : 0;
}

// What a cudaMemPoolPtrExportData holds here.
struct pointer_export {
  char tag[8];  // pointer_tag
  std::uint64_t file, offset, bytes;
};
static_assert(sizeof(pointer_export) <= sizeof(cudaMemPoolPtrExportData));
constexpr char pointer_tag[8] = "ls-pool";

}  // namespace

struct CUmemPoolHandle_st {
  bool reuse_follow_event_dependencies = true, reuse_allow_opportunistic = true, reuse_allow_internal_dependencies = true;
  unsigned long long release_threshold = 0, used_high = 0;
  std::shared_ptr<pool_file> file;  // set for pools shared between processes
  bool imported = false;            // from another process (cudaMemPoolImportFromShareableHandle)
};

namespace {

using lockstep::emu::record;
using lockstep::emu::valid_device;

std::mutex pools_mutex;
CUmemPoolHandle_st default_pool;
cudaMemPool_t current_pool = &default_pool;
std::set<cudaMemPool_t>& created_pools() {
  static std::set<cudaMemPool_t> pools;
  return pools;
}
bool valid_pool(cudaMemPool_t pool) { return pool == &default_pool || created_pools().count(pool) != 0; }

std::map<cudaStream_t, std::map<int, cudaLaunchAttributeValue>>& stream_attributes() {
  static std::map<cudaStream_t, std::map<int, cudaLaunchAttributeValue>> attributes;
  return attributes;
}

}  // namespace

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  if (!pool) return record(cudaErrorInvalidValue);
  if (!valid_device(device)) return record(cudaErrorInvalidDevice);
  *pool = &default_pool;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device) {
  if (!pool) return record(cudaErrorInvalidValue);
  if (!valid_device(device)) return record(cudaErrorInvalidDevice);
  const std::lock_guard lock(pools_mutex);
  *pool = current_pool;
  return cudaSuccess;
}

cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool) {
  if (!valid_device(device)) return record(cudaErrorInvalidDevice);
  const std::lock_guard lock(pools_mutex);
  if (!valid_pool(pool)) return record(cudaErrorInvalidValue);
  current_pool = pool;
  return cudaSuccess;
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* props) {
  if (!pool || !props || props->allocType != cudaMemAllocationTypePinned) return record(cudaErrorInvalidValue);
  if (props->location.type != cudaMemLocationTypeDevice || !valid_device(props->location.id)) return record(cudaErrorInvalidValue);
  if (props->handleTypes & ~cudaMemHandleTypePosixFileDescriptor) return record(cudaErrorNotSupported);  // Windows and fabric handles
  auto* created = new CUmemPoolHandle_st;
  if (props->handleTypes == cudaMemHandleTypePosixFileDescriptor) {
    const int fd = lockstep::emu::new_memory_file("lockstep-pool", 0);
    if (fd < 0) {
      delete created;
      return record(cudaErrorMemoryAllocation);
    }
    created->file = std::make_shared<pool_file>(fd);
  }
  const std::lock_guard lock(pools_mutex);
  created_pools().insert(created);
  *pool = created;
  return cudaSuccess;
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) {
  const std::lock_guard lock(pools_mutex);
  if (pool == &default_pool || created_pools().erase(pool) == 0) return record(cudaErrorInvalidValue);
  if (current_pool == pool) current_pool = &default_pool;
  delete pool;
  return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attribute, void* value) {
  if (!value) return record(cudaErrorInvalidValue);
  const std::lock_guard lock(pools_mutex);
  if (!valid_pool(pool)) return record(cudaErrorInvalidValue);
  const int flag = *static_cast<int*>(value);
  switch (attribute) {
    case cudaMemPoolReuseFollowEventDependencies:
      pool->reuse_follow_event_dependencies = flag != 0;
      return cudaSuccess;
    case cudaMemPoolReuseAllowOpportunistic:
      pool->reuse_allow_opportunistic = flag != 0;
      return cudaSuccess;
    case cudaMemPoolReuseAllowInternalDependencies:
      pool->reuse_allow_internal_dependencies = flag != 0;
      return cudaSuccess;
    case cudaMemPoolAttrReleaseThreshold:
      pool->release_threshold = *static_cast<unsigned long long*>(value);
      return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemHigh:
      // Only resetting to zero is allowed, as in CUDA.
      if (*static_cast<unsigned long long*>(value) != 0) return record(cudaErrorInvalidValue);
      pool->used_high = 0;
      return cudaSuccess;
    default:
      return record(cudaErrorInvalidValue);
  }
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attribute, void* value) {
  if (!value) return record(cudaErrorInvalidValue);
  const std::lock_guard lock(pools_mutex);
  if (!valid_pool(pool)) return record(cudaErrorInvalidValue);
  const unsigned long long live = lockstep::emu::allocated_bytes();
  pool->used_high = std::max(pool->used_high, live);
  switch (attribute) {
    case cudaMemPoolReuseFollowEventDependencies:
      *static_cast<int*>(value) = pool->reuse_follow_event_dependencies;
      return cudaSuccess;
    case cudaMemPoolReuseAllowOpportunistic:
      *static_cast<int*>(value) = pool->reuse_allow_opportunistic;
      return cudaSuccess;
    case cudaMemPoolReuseAllowInternalDependencies:
      *static_cast<int*>(value) = pool->reuse_allow_internal_dependencies;
      return cudaSuccess;
    case cudaMemPoolAttrReleaseThreshold:
      *static_cast<unsigned long long*>(value) = pool->release_threshold;
      return cudaSuccess;
    case cudaMemPoolAttrReservedMemCurrent:
    case cudaMemPoolAttrUsedMemCurrent:
      *static_cast<unsigned long long*>(value) = live;
      return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemHigh:
      *static_cast<unsigned long long*>(value) = pool->used_high;
      return cudaSuccess;
    default:
      return record(cudaErrorInvalidValue);
  }
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, std::size_t) {
  const std::lock_guard lock(pools_mutex);
  return valid_pool(pool) ? cudaSuccess : record(cudaErrorInvalidValue);
}

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const cudaMemAccessDesc* descriptors, std::size_t count) {
  if (!descriptors && count) return record(cudaErrorInvalidValue);
  for (std::size_t i = 0; i < count; ++i)
    if (descriptors[i].location.type != cudaMemLocationTypeDevice || !valid_device(descriptors[i].location.id)) return record(cudaErrorInvalidDevice);
  const std::lock_guard lock(pools_mutex);
  return valid_pool(pool) ? cudaSuccess : record(cudaErrorInvalidValue);
}

cudaError_t cudaMemPoolGetAccess(cudaMemAccessFlags* flags, cudaMemPool_t pool, cudaMemLocation* location) {
  if (!flags || !location) return record(cudaErrorInvalidValue);
  const std::lock_guard lock(pools_mutex);
  if (!valid_pool(pool)) return record(cudaErrorInvalidValue);
  *flags = location->type == cudaMemLocationTypeDevice && valid_device(location->id) ? cudaMemAccessFlagsProtReadWrite : cudaMemAccessFlagsProtNone;
  return cudaSuccess;
}

cudaError_t cudaMallocFromPoolAsync(void** ptr, std::size_t bytes, cudaMemPool_t pool, cudaStream_t stream) {
  if (!ptr) return record(cudaErrorInvalidValue);
  if (!lockstep::emu::valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  std::shared_ptr<pool_file> file;
  {
    const std::lock_guard lock(pools_mutex);
    if (!valid_pool(pool) || pool->imported) return record(cudaErrorInvalidValue);  // an imported pool only maps what its owner exports
    file = pool->file;
  }
  if (!file) return cudaMalloc(ptr, bytes);
  if (lockstep::emu::sticky_error()) return lockstep::emu::broken_context();
  if (bytes > lockstep::emu::device_memory_bytes - lockstep::emu::allocated_bytes()) return record(cudaErrorMemoryAllocation);
  const std::size_t rounded = lockstep::emu::whole_pages(bytes);
  void* mapped = nullptr;
  std::size_t offset = 0;
  {
    const std::lock_guard lock(file->mutex);
    offset = file->take(rounded);
    if (offset == SIZE_MAX || !(mapped = lockstep::emu::map_file(file->fd, offset, rounded))) {
      if (offset != SIZE_MAX) file->free[offset] = rounded;
      return record(cudaErrorMemoryAllocation);
    }
    file->offsets[mapped] = offset;
  }
  lockstep::emu::count_allocated(static_cast<std::ptrdiff_t>(bytes));
  lockstep::emu::check::add_mapping(mapped, bytes, [file, mapped, offset, rounded, bytes] {
    lockstep::emu::unmap_file(mapped, rounded);
    lockstep::emu::count_allocated(-static_cast<std::ptrdiff_t>(bytes));
    const std::lock_guard lock(file->mutex);
    file->offsets.erase(mapped);
    file->free[offset] = rounded;
  });
  *ptr = mapped;
  return cudaSuccess;
}

cudaError_t cudaMemPoolExportToShareableHandle(void* handle, cudaMemPool_t pool, cudaMemAllocationHandleType type, unsigned int flags) {
  if (!handle || flags != 0) return record(cudaErrorInvalidValue);
  const std::lock_guard lock(pools_mutex);
  if (!valid_pool(pool) || !pool->file || pool->imported || type != cudaMemHandleTypePosixFileDescriptor) return record(cudaErrorInvalidValue);
  const int fd = dup(pool->file->fd);  // the caller's to pass on and close
  if (fd < 0) return record(cudaErrorOperatingSystem);
  *static_cast<int*>(handle) = fd;
  return cudaSuccess;
}

cudaError_t cudaMemPoolImportFromShareableHandle(cudaMemPool_t* pool, void* handle, cudaMemAllocationHandleType type, unsigned int flags) {
  if (!pool || flags != 0 || type != cudaMemHandleTypePosixFileDescriptor) return record(cudaErrorInvalidValue);
  const int fd = dup(static_cast<int>(reinterpret_cast<std::intptr_t>(handle)));  // the caller closes its own
  if (fd < 0) return record(cudaErrorInvalidValue);
  auto* imported = new CUmemPoolHandle_st;
  imported->file = std::make_shared<pool_file>(fd);
  imported->imported = true;
  const std::lock_guard lock(pools_mutex);
  created_pools().insert(imported);
  *pool = imported;
  return cudaSuccess;
}

cudaError_t cudaMemPoolExportPointer(cudaMemPoolPtrExportData* data, void* ptr) {
  if (!data || !ptr) return record(cudaErrorInvalidValue);
  const std::lock_guard lock(pools_mutex);
  for (cudaMemPool_t pool : created_pools()) {
    if (!pool->file || pool->imported) continue;
    const std::lock_guard file_lock(pool->file->mutex);
    const auto found = pool->file->offsets.find(ptr);
    if (found == pool->file->offsets.end()) continue;
    const void* begin = nullptr;
    std::size_t bytes = 0;
    lockstep::emu::check::allocation_range(ptr, begin, bytes);
    pointer_export e{};
    std::memcpy(e.tag, pointer_tag, sizeof e.tag);
    e.file = file_identity(pool->file->fd);
    e.offset = found->second;
    e.bytes = bytes;
    std::memset(data, 0, sizeof *data);
    std::memcpy(data->reserved, &e, sizeof e);
    return cudaSuccess;
  }
  return record(cudaErrorInvalidValue);  // not the start of an allocation from an exportable pool
}

cudaError_t cudaMemPoolImportPointer(void** ptr, cudaMemPool_t pool, cudaMemPoolPtrExportData* data) {
  if (!ptr || !data) return record(cudaErrorInvalidValue);
  pointer_export e;
  std::memcpy(&e, data->reserved, sizeof e);
  std::shared_ptr<pool_file> file;
  {
    const std::lock_guard lock(pools_mutex);
    if (!valid_pool(pool) || !pool->imported) return record(cudaErrorInvalidValue);
    file = pool->file;
  }
  // The data must name an allocation of this pool's file (a program may try several pools).
  if (std::memcmp(e.tag, pointer_tag, sizeof e.tag) != 0 || e.file != file_identity(file->fd)) return record(cudaErrorInvalidValue);
  const std::size_t rounded = lockstep::emu::whole_pages(e.bytes);
  void* mapped = lockstep::emu::map_file(file->fd, e.offset, rounded);
  if (!mapped) return record(cudaErrorInvalidValue);
  lockstep::emu::check::add_mapping(mapped, e.bytes, [file, mapped, rounded] { lockstep::emu::unmap_file(mapped, rounded); });
  *ptr = mapped;
  return cudaSuccess;
}

cudaError_t cudaStreamSetAttribute(cudaStream_t stream, cudaStreamAttrID attribute, const cudaStreamAttrValue* value) {
  if (!value) return record(cudaErrorInvalidValue);
  if (!lockstep::emu::valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  if (attribute != cudaLaunchAttributeAccessPolicyWindow && attribute != cudaLaunchAttributeSynchronizationPolicy &&
      attribute != cudaLaunchAttributePriority)
    return record(cudaErrorInvalidValue);
  if (attribute == cudaLaunchAttributeAccessPolicyWindow) {
    const cudaAccessPolicyWindow& w = value->accessPolicyWindow;
    if (w.hitRatio < 0.0f || w.hitRatio > 1.0f || w.hitProp > cudaAccessPropertyPersisting || w.missProp > cudaAccessPropertyPersisting)
      return record(cudaErrorInvalidValue);
    int max_window = 0;
    cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, 0);
    if (w.num_bytes > static_cast<std::size_t>(max_window)) return record(cudaErrorInvalidValue);
  }
  const std::lock_guard lock(pools_mutex);
  stream_attributes()[stream][attribute] = *value;
  return cudaSuccess;
}

cudaError_t cudaStreamGetAttribute(cudaStream_t stream, cudaStreamAttrID attribute, cudaStreamAttrValue* value) {
  if (!value) return record(cudaErrorInvalidValue);
  if (!lockstep::emu::valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  const std::lock_guard lock(pools_mutex);
  std::memset(value, 0, sizeof *value);
  const auto& kept = stream_attributes()[stream];
  if (const auto found = kept.find(attribute); found != kept.end()) *value = found->second;
  if (attribute == cudaLaunchAttributeSynchronizationPolicy && kept.find(attribute) == kept.end()) value->syncPolicy = cudaSyncPolicyAuto;
  return cudaSuccess;
}

cudaError_t cudaCtxResetPersistingL2Cache() { return cudaSuccess; }
