// What every NCCL entry point of liblockstep_nccl shares: turning a failure
// into NCCL's result, with the line ncclGetLastError gives back.
#pragma once
#include <string>

#include "communicator.h"

namespace lockstep::emu::nccl {

// Records `message` as the last error (of `comm` too, when there is one),
// prints it on stderr as "lockstep NCCL: <call>: <message>", and returns `result`.
ncclResult_t report(const char* call, ncclComm_t comm, ncclResult_t result, const std::string& message);

// Runs `body`, turning a thrown failure into its result through report.
template <class F>
ncclResult_t guarded(const char* call, ncclComm_t comm, F&& body) {
  try {
    body();
    return ncclSuccess;
  } catch (const failure& f) {
    return report(call, comm, f.result, f.message);
  }
}

}  // namespace lockstep::emu::nccl
