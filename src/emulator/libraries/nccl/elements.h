// NCCL's element types and reduction operators over raw bytes.
#pragma once
#include <cstddef>

#include "lockstep/emu/nccl.h"

namespace lockstep::emu::nccl {

// Bytes of one element, or 0 for a type the emulator does not reduce (the FP8 types, values out of range).
std::size_t element_bytes(ncclDataType_t type);
const char* type_name(ncclDataType_t type);

// acc = in (first) or acc = acc op in, over n elements, in this order for
// every rank. ncclAvg, as NCCL does it: floating-point inputs are scaled by
// 1 / nranks as they are added; integer ones are summed and divided in
// finish_average.
void combine(void* acc, const void* in, std::size_t n, ncclDataType_t type, ncclRedOp_t op, int nranks, bool first);
void finish_average(void* acc, std::size_t n, ncclDataType_t type, int nranks);

}  // namespace lockstep::emu::nccl
