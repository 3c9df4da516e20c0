// What a cuBLAS handle holds on the emulator, and the helpers every routine
// of liblockstep_cublas shares: the status a call without a BLAS answers, and
// the record check mode keeps of which device bytes were written.
#pragma once
#include <cstddef>
#include <string>

#include "lockstep/emu/cublas.h"
#include "lockstep/emu/cublas_lt.h"

// The handle types cublas_api.h and cublasLt.h leave opaque. Calls run
// synchronously on the calling thread, so the stream is only stored and
// handed back; the math mode picks TF32 inputs, as on the GPU.
struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  cublasMath_t math_mode = CUBLAS_DEFAULT_MATH;
  cublasAtomicsMode_t atomics_mode = CUBLAS_ATOMICS_NOT_ALLOWED;
};

struct cublasLtContext {};

namespace lockstep::emu::cublas {

// NOT_INITIALIZED when no CPU BLAS could be loaded (the reason was printed once).
cublasStatus_t blas_status();

// CUBLAS_STATUS_NOT_SUPPORTED for what a GPU runs but the emulator does not,
// with a line on stderr naming the call and what to use instead.
cublasStatus_t not_emulated(const char* call, const std::string& what);

// Whether `elements` elements of elem_size bytes from `data` stay inside the
// cudaMalloc'd allocation holding data (other memory is not checked). When
// they do not, the GPU would fault where a CPU BLAS would read or write past
// the end: the call is refused, as a memcheck finding at `caller` (the
// program's call site) in check mode, else with a line on stderr.
bool within_allocation(const char* call, const char* operand, const void* data, long long elements, std::size_t elem_size, const void* caller);

// The elements a rows x cols column-major matrix spans with leading dimension ld.
constexpr long long matrix_span(long long rows, long long cols, long long ld) { return rows <= 0 || cols <= 0 ? 0 : (cols - 1) * ld + rows; }

// Check mode's initcheck record: a routine's output columns (rows elements of
// elem_size bytes each, ld elements apart) now hold values.
void mark_written(const void* data, long long rows, long long cols, long long ld, std::size_t elem_size);

}  // namespace lockstep::emu::cublas
