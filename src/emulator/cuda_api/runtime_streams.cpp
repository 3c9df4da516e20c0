// Streams and events (runtime_streams.h): work is complete when it is issued,
// so what is left is checking handles, running host callbacks in issue order
// and stamping events with the wall clock.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>

#include "lockstep/emu/runtime_api.h"
#include "runtime_calls.h"

struct CUstream_st {
  unsigned flags = 0;
  int priority = 0;
};

struct CUevent_st {
  unsigned flags = 0;
  bool recorded = false;
  std::chrono::steady_clock::time_point when{};
};

namespace lockstep::emu {
namespace {

// An H100's stream priorities: 0 the least urgent, -5 the most.
constexpr int least_priority = 0, greatest_priority = -5;

struct handles {
  std::mutex mutex;
  std::set<CUstream_st*> streams;
  std::set<CUevent_st*> events;
};
handles& live() {
  static handles h;
  return h;
}

bool valid_event(cudaEvent_t event) {
  if (!event) return false;
  std::lock_guard lock(live().mutex);
  return live().events.count(event) != 0;
}

}  // namespace

bool valid_stream(cudaStream_t stream) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return true;
  std::lock_guard lock(live().mutex);
  return live().streams.count(stream) != 0;
}

void destroy_streams_and_events() {
  std::lock_guard lock(live().mutex);
  for (CUstream_st* s : live().streams) delete s;
  for (CUevent_st* e : live().events) delete e;
  live().streams.clear();
  live().events.clear();
}

}  // namespace lockstep::emu

using lockstep::emu::live;
using lockstep::emu::record;
using lockstep::emu::valid_event;
using lockstep::emu::valid_stream;

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority) {
  if (!stream || (flags & ~static_cast<unsigned>(cudaStreamNonBlocking))) return record(cudaErrorInvalidValue);
  if (lockstep::emu::sticky_error()) return lockstep::emu::broken_context();
  auto* s = new CUstream_st;
  s->flags = flags;
  // Out-of-range priorities are clamped, as CUDA does.
  s->priority = priority > lockstep::emu::least_priority      ? lockstep::emu::least_priority
                : priority < lockstep::emu::greatest_priority ? lockstep::emu::greatest_priority
                                                              : priority;
  std::lock_guard lock(live().mutex);
  live().streams.insert(s);
  *stream = s;
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t* stream) { return cudaStreamCreateWithPriority(stream, cudaStreamDefault, 0); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) { return cudaStreamCreateWithPriority(stream, flags, 0); }

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return record(cudaErrorInvalidResourceHandle);
  std::lock_guard lock(live().mutex);
  if (!live().streams.erase(stream)) return record(cudaErrorInvalidResourceHandle);
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  return lockstep::emu::broken_context();
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  return lockstep::emu::broken_context();  // never cudaErrorNotReady: the work is done
}

cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int* flags) {
  if (!flags) return record(cudaErrorInvalidValue);
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  *flags = stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread ? 0u : stream->flags;
  return cudaSuccess;
}

cudaError_t cudaStreamGetPriority(cudaStream_t stream, int* priority) {
  if (!priority) return record(cudaErrorInvalidValue);
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  *priority = stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread ? 0 : stream->priority;
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  if (flags & ~static_cast<unsigned>(cudaEventWaitExternal)) return record(cudaErrorInvalidValue);
  if (!valid_stream(stream) || !valid_event(event)) return record(cudaErrorInvalidResourceHandle);
  return cudaSuccess;  // what the event marks is done already
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* user_data, unsigned int flags) {
  if (!callback || flags != 0) return record(cudaErrorInvalidValue);
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  // Everything issued before has finished: the callback's turn is now. It hears the context's error, as on a GPU.
  callback(stream, lockstep::emu::sticky_error(), user_data);
  return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user_data) {
  if (!fn) return record(cudaErrorInvalidValue);
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  if (lockstep::emu::sticky_error()) return lockstep::emu::broken_context();
  fn(user_data);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* least_priority, int* greatest_priority) {
  if (least_priority) *least_priority = lockstep::emu::least_priority;
  if (greatest_priority) *greatest_priority = lockstep::emu::greatest_priority;
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  constexpr unsigned known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
  if (!event || (flags & ~known)) return record(cudaErrorInvalidValue);
  // CUDA's rule: an interprocess event must not time.
  if ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)) return record(cudaErrorInvalidValue);
  if (lockstep::emu::sticky_error()) return lockstep::emu::broken_context();
  auto* e = new CUevent_st;
  e->flags = flags;
  std::lock_guard lock(live().mutex);
  live().events.insert(e);
  *event = e;
  return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
  if (flags & ~static_cast<unsigned>(cudaEventRecordExternal)) return record(cudaErrorInvalidValue);
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  std::lock_guard lock(live().mutex);
  if (!event || !live().events.count(event)) return record(cudaErrorInvalidResourceHandle);
  event->recorded = true;
  event->when = std::chrono::steady_clock::now();
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) { return cudaEventRecordWithFlags(event, stream, cudaEventRecordDefault); }

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (!valid_event(event)) return record(cudaErrorInvalidResourceHandle);
  return lockstep::emu::broken_context();
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (!valid_event(event)) return record(cudaErrorInvalidResourceHandle);
  return lockstep::emu::broken_context();  // recorded or not, nothing it marks is pending
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (!ms) return record(cudaErrorInvalidValue);
  std::lock_guard lock(live().mutex);
  if (!start || !end || !live().events.count(start) || !live().events.count(end)) return record(cudaErrorInvalidResourceHandle);
  // CUDA's answers: an event never recorded, or one that keeps no time, is an invalid handle here.
  if (!start->recorded || !end->recorded) return record(cudaErrorInvalidResourceHandle);
  if ((start->flags | end->flags) & cudaEventDisableTiming) return record(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  std::lock_guard lock(live().mutex);
  if (!event || !live().events.erase(event)) return record(cudaErrorInvalidResourceHandle);
  delete event;
  return cudaSuccess;
}

// Events between processes (runtime_ipc.h): the handle names the exporting
// process; opening it makes an event here, which (as every event on the
// emulator) has nothing to wait for.
namespace lockstep::emu {
namespace {
struct event_handle {
  char tag[8];  // event_tag: a handle from lockstep's emulator
  std::int32_t pid;
  std::uint64_t event;
};
static_assert(sizeof(event_handle) <= sizeof(cudaIpcEventHandle_t));
constexpr char event_tag[8] = "ls-ipce";
}  // namespace
}  // namespace lockstep::emu

cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t* handle, cudaEvent_t event) {
  if (!handle) return record(cudaErrorInvalidValue);
  if (!valid_event(event) || !(event->flags & cudaEventInterprocess)) return record(cudaErrorInvalidResourceHandle);
  lockstep::emu::event_handle h{};
  std::memcpy(h.tag, lockstep::emu::event_tag, sizeof h.tag);
  h.pid = static_cast<std::int32_t>(getpid());
  h.event = reinterpret_cast<std::uintptr_t>(event);
  std::memset(handle, 0, sizeof *handle);
  std::memcpy(handle->reserved, &h, sizeof h);
  return cudaSuccess;
}

cudaError_t cudaIpcOpenEventHandle(cudaEvent_t* event, cudaIpcEventHandle_t handle) {
  if (!event) return record(cudaErrorInvalidValue);
  lockstep::emu::event_handle h;
  std::memcpy(&h, handle.reserved, sizeof h);
  // A handle no process gave: what an H100 answers (bench/RESULTS.md).
  if (std::memcmp(h.tag, lockstep::emu::event_tag, sizeof h.tag) != 0) return record(cudaErrorMapBufferObjectFailed);
  if (h.pid == getpid()) return record(cudaErrorDeviceUninitialized);  // as on a GPU: not in the process that made it
  return cudaEventCreateWithFlags(event, cudaEventDisableTiming | cudaEventInterprocess);
}

// Graphs (runtime_graphs.h): not provided.
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  if (!status) return record(cudaErrorInvalidValue);
  if (!valid_stream(stream)) return record(cudaErrorInvalidResourceHandle);
  *status = cudaStreamCaptureStatusNone;
  return cudaSuccess;
}
cudaError_t cudaStreamBeginCapture(cudaStream_t, cudaStreamCaptureMode) { return record(cudaErrorNotSupported); }
cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t*) { return record(cudaErrorNotSupported); }
cudaError_t cudaGraphCreate(cudaGraph_t*, unsigned int) { return record(cudaErrorNotSupported); }
cudaError_t cudaGraphInstantiate(cudaGraphExec_t*, cudaGraph_t, unsigned long long) { return record(cudaErrorNotSupported); }
cudaError_t cudaGraphLaunch(cudaGraphExec_t, cudaStream_t) { return record(cudaErrorNotSupported); }
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t) { return record(cudaErrorNotSupported); }
cudaError_t cudaGraphDestroy(cudaGraph_t) { return record(cudaErrorNotSupported); }
