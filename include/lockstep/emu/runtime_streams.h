// Streams and events on the emulator. Launches and copies run to the end
// when they are issued, so everything queued on any stream is complete
// before the call that queued it returns: queries answer "done", waits return
// at once, host callbacks run when they are enqueued (after all the work
// before them, as CUDA orders them), and an event records the wall-clock time
// at which it is recorded. Handles are checked: a destroyed or never-created
// stream or event gives cudaErrorInvalidResourceHandle, as on a GPU.
#pragma once
#include "lockstep/emu/runtime_types.h"

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaEventInterprocess 0x04
#define cudaEventRecordDefault 0x00
#define cudaEventRecordExternal 0x01
#define cudaEventWaitDefault 0x00
#define cudaEventWaitExternal 0x01

using cudaStreamCallback_t = void (*)(cudaStream_t stream, cudaError_t status, void* user_data);
using cudaHostFn_t = void (*)(void* user_data);

cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int* flags);
cudaError_t cudaStreamGetPriority(cudaStream_t stream, int* priority);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags = 0);
cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* user_data, unsigned int flags);
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user_data);
// Priorities run from 0 (least) to -5 (greatest), as on an H100; the emulator runs work in issue order regardless.
cudaError_t cudaDeviceGetStreamPriorityRange(int* least_priority, int* greatest_priority);

cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags);
// cuda_runtime.h's C++ overload.
inline cudaError_t cudaEventCreate(cudaEvent_t* event, unsigned int flags) { return cudaEventCreateWithFlags(event, flags); }
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream = nullptr, unsigned int flags = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
// Milliseconds of wall-clock time between the two records.
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t event);

namespace lockstep::emu {
// Whether `stream` names a live stream or the default one (null, cudaStreamLegacy, cudaStreamPerThread).
bool valid_stream(cudaStream_t stream);
}  // namespace lockstep::emu
