// Memory pools and stream attributes (lockstep/emu/runtime_pools.h).
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "lockstep/emu/runtime_pools.h"
#include "runtime_calls.h"

struct CUmemPoolHandle_st {
  bool reuse_follow_event_dependencies = true, reuse_allow_opportunistic = true, reuse_allow_internal_dependencies = true;
  unsigned long long release_threshold = 0, used_high = 0;
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
  if (props->handleTypes != cudaMemHandleTypeNone) return record(cudaErrorNotSupported);  // no memory shared between processes
  const std::lock_guard lock(pools_mutex);
  *pool = new CUmemPoolHandle_st;
  created_pools().insert(*pool);
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
  {
    const std::lock_guard lock(pools_mutex);
    if (!valid_pool(pool)) return record(cudaErrorInvalidValue);
  }
  return cudaMallocAsync(ptr, bytes, stream);
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
