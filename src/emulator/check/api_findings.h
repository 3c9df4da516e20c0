// memcheck's findings outside kernels: CUDA runtime calls that fail because
// of what the program passed (a double cudaFree, a pointer cudaMalloc never
// gave, a cudaMemcpy past an allocation's end). The call still returns its
// error code; in check mode (memcheck on) the failure is also a finding,
// printed at once with the caller's line, written where lockstep-check reads
// findings (LOCKSTEP_CHECK_REPORT), and kept for take_api_findings().
#pragma once
#include <string>

#include "lockstep/errors.h"

namespace lockstep::emu::check {

// `call` failed with `code` for the reason `why`; `caller` is the return
// address of the call (__builtin_return_address(0) in the API function).
void api_call_failed(const char* call, cudaError_t code, const std::string& why, const void* caller);

}  // namespace lockstep::emu::check
