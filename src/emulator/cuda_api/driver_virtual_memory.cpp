// The driver API's virtual memory management on the emulator, with the
// process's own: a reserved range is inaccessible address space, a physical
// allocation is an anonymous memory file, mapping it places the file's pages
// in the range, and cuMemSetAccess opens them for reading and writing. As on a
// GPU, mapped memory is unusable until access is set.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "check/device_memory.h"
#include "driver_calls.h"

namespace {

// What an H100 answers for both CU_MEM_ALLOC_GRANULARITY_MINIMUM and _RECOMMENDED.
constexpr std::size_t granularity_bytes = std::size_t{2} << 20;

struct physical_allocation {
  int fd;
  std::size_t bytes;
};

std::mutex vm_mutex;
std::unordered_map<CUmemGenericAllocationHandle, physical_allocation>& allocations() {
  static std::unordered_map<CUmemGenericAllocationHandle, physical_allocation> all;
  return all;
}
CUmemGenericAllocationHandle next_handle = 1;

bool valid_property(const CUmemAllocationProp* prop) {
  return prop && prop->type == CU_MEM_ALLOCATION_TYPE_PINNED && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
         lockstep::emu::check_device(prop->location.id) == CUDA_SUCCESS;
}
bool aligned(std::uintptr_t value) { return value % granularity_bytes == 0; }

}  // namespace

using lockstep::emu::pointer;

CUresult cuMemGetAllocationGranularity(std::size_t* granularity, const CUmemAllocationProp* prop, CUmemAllocationGranularity_flags) {
  if (!granularity || !valid_property(prop)) return CUDA_ERROR_INVALID_VALUE;
  *granularity = granularity_bytes;
  return CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr* ptr, std::size_t bytes, std::size_t alignment, CUdeviceptr, unsigned long long flags) {
  if (!ptr || bytes == 0 || !aligned(bytes) || flags != 0 || (alignment & (alignment - 1)) != 0) return CUDA_ERROR_INVALID_VALUE;
  alignment = alignment < granularity_bytes ? granularity_bytes : alignment;
  // Reserve more than asked, then give back what lies outside the aligned range.
  void* raw = mmap(nullptr, bytes + alignment, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  const auto begin = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t start = (begin + alignment - 1) / alignment * alignment;
  if (start > begin) munmap(raw, start - begin);
  if (const std::uintptr_t end = begin + bytes + alignment; end > start + bytes) munmap(reinterpret_cast<void*>(start + bytes), end - start - bytes);
  *ptr = start;
  return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, std::size_t bytes) {
  if (!aligned(ptr) || !aligned(bytes) || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  return munmap(pointer(ptr), bytes) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, std::size_t bytes, const CUmemAllocationProp* prop, unsigned long long flags) {
  if (!handle || bytes == 0 || !aligned(bytes) || flags != 0 || !valid_property(prop)) return CUDA_ERROR_INVALID_VALUE;
  const int fd = memfd_create("lockstep-cuMemCreate", MFD_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  const std::lock_guard lock(vm_mutex);
  *handle = next_handle++;
  allocations().emplace(*handle, physical_allocation{fd, bytes});
  return CUDA_SUCCESS;
}

// The pages stay in every range they are mapped into; the handle goes.
CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  const std::lock_guard lock(vm_mutex);
  const auto found = allocations().find(handle);
  if (found == allocations().end()) return CUDA_ERROR_INVALID_VALUE;
  close(found->second.fd);
  allocations().erase(found);
  return CUDA_SUCCESS;
}

CUresult cuMemMap(CUdeviceptr ptr, std::size_t bytes, std::size_t offset, CUmemGenericAllocationHandle handle, unsigned long long flags) {
  if (!aligned(ptr) || !aligned(bytes) || !aligned(offset) || bytes == 0 || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  const std::lock_guard lock(vm_mutex);
  const auto found = allocations().find(handle);
  if (found == allocations().end() || offset + bytes > found->second.bytes) return CUDA_ERROR_INVALID_VALUE;
  if (mmap(pointer(ptr), bytes, PROT_NONE, MAP_SHARED | MAP_FIXED, found->second.fd, static_cast<off_t>(offset)) == MAP_FAILED)
    return CUDA_ERROR_INVALID_VALUE;
  lockstep::emu::check::add_host_memory(pointer(ptr), bytes, "cuMemMap'd memory");  // check mode: kernels may use it
  return CUDA_SUCCESS;
}

CUresult cuMemUnmap(CUdeviceptr ptr, std::size_t bytes) {
  if (!aligned(ptr) || !aligned(bytes) || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  lockstep::emu::check::remove_host_memory(pointer(ptr));
  // Back to reserved address space.
  return mmap(pointer(ptr), bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED ? CUDA_ERROR_INVALID_VALUE
                                                                                                                            : CUDA_SUCCESS;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, std::size_t bytes, const CUmemAccessDesc* descriptors, std::size_t count) {
  if (!descriptors || count == 0 || !aligned(ptr) || !aligned(bytes)) return CUDA_ERROR_INVALID_VALUE;
  // The one device's entry decides; other devices' entries name devices that do not exist.
  int protection = -1;
  for (std::size_t i = 0; i < count; ++i) {
    const CUmemAccessDesc& d = descriptors[i];
    if (d.location.type != CU_MEM_LOCATION_TYPE_DEVICE || lockstep::emu::check_device(d.location.id) != CUDA_SUCCESS)
      return CUDA_ERROR_INVALID_DEVICE;
    protection = d.flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? PROT_READ | PROT_WRITE
                 : d.flags == CU_MEM_ACCESS_FLAGS_PROT_READ    ? PROT_READ
                                                               : PROT_NONE;
  }
  return mprotect(pointer(ptr), bytes, protection) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
