// cuBLAS, loaded at run time like the driver: the GPU matmul references
// (lockstep/cuda_libraries.h).
#include <cstdlib>
#include <stdexcept>

#include "backend.h"
#include "cuda_driver.h"
#include "lockstep/cuda_libraries.h"
#include "lockstep/errors.h"

namespace lockstep {
namespace {

// The few cuBLAS declarations used here (values from cublas_api.h, CUDA 13).
using cublas_handle = struct cublas_context*;
using cublas_status = int;
constexpr int cublas_op_n = 0, cublas_op_t = 1;
constexpr int cuda_r_32f = 0, cuda_r_16bf = 14;                            // cudaDataType
constexpr int cublas_compute_32f = 68, cublas_compute_32f_fast_tf32 = 77;  // cublasComputeType_t
constexpr int cublas_gemm_default = -1;
using create_fn = cublas_status (*)(cublas_handle*);
using set_stream_fn = cublas_status (*)(cublas_handle, void*);
using sgemm_fn = cublas_status (*)(cublas_handle, int, int, int, int, int, const float*, const float*, int, const float*, int, const float*, float*,
                                   int);
using gemm_ex_fn = cublas_status (*)(cublas_handle, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int, const void*,
                                     void*, int, int, int, int);

struct loaded_cublas {
  create_fn create = nullptr;
  set_stream_fn set_stream = nullptr;
  sgemm_fn sgemm = nullptr;
  gemm_ex_fn gemm_ex = nullptr;
  std::string unavailable_reason;
};

const loaded_cublas& cublas() {
  static const loaded_cublas loaded = [] {
    loaded_cublas l;
    std::vector<std::string> candidates{"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    if (const char* home = std::getenv("CUDA_HOME"); home && *home) candidates.push_back(std::string(home) + "/lib64/libcublas.so");
    candidates.push_back("/usr/local/cuda/lib64/libcublas.so");
    std::string attempts, missing;
    void* library = detail::cu::open_first_library(candidates, attempts);
    if (!library) {
      l.unavailable_reason = "cuBLAS could not be loaded (" + attempts + "); install the CUDA toolkit's cuBLAS (or `pip install nvidia-cublas-cu12`)";
      return l;
    }
    l.create = reinterpret_cast<create_fn>(detail::cu::find_symbol(library, {"cublasCreate_v2"}, missing));
    l.set_stream = reinterpret_cast<set_stream_fn>(detail::cu::find_symbol(library, {"cublasSetStream_v2"}, missing));
    l.sgemm = reinterpret_cast<sgemm_fn>(detail::cu::find_symbol(library, {"cublasSgemm_v2"}, missing));
    l.gemm_ex = reinterpret_cast<gemm_ex_fn>(detail::cu::find_symbol(library, {"cublasGemmEx"}, missing));
    if (!missing.empty()) l.unavailable_reason = "the cuBLAS library that was loaded lacks " + missing;
    return l;
  }();
  return loaded;
}

}  // namespace

bool cublas_available() { return cublas().unavailable_reason.empty(); }
std::string cublas_unavailable_reason() { return cublas().unavailable_reason; }

namespace {

void check_status(cublas_status s, const char* what) {
  if (s != 0) throw cuda_error(cudaErrorUnknown, std::string(what) + " failed with cuBLAS status " + std::to_string(s));
}

// One handle per thread (cuBLAS handles are not for concurrent use), made in
// the context of `d` (current from here on) the first time, bound to `stream`.
cublas_handle handle_on(const device& d, void* stream) {
  if (d.kind != device::kind_t::cuda) throw std::invalid_argument("cuBLAS runs on cuda devices, not on " + d.str());
  const loaded_cublas& api = cublas();
  if (!api.unavailable_reason.empty()) throw device_unavailable(api.unavailable_reason);
  detail::backend_for(d).make_current();
  thread_local cublas_handle handle = nullptr;
  if (!handle) check_status(api.create(&handle), "cublasCreate");
  check_status(api.set_stream(handle, stream), "cublasSetStream");
  return handle;
}

}  // namespace

void cublas_sgemm_row_major(const device& d, const float* a, const float* b, float* c, int m, int n, int k, void* stream) {
  cublas_handle handle = handle_on(d, stream);
  // cuBLAS is column-major: the row-major product C = A B is, read column-major,
  // C^T = B^T A^T, which is sgemm on (B, A) with no transposes.
  // Leading dimensions must be at least 1 even when k is 0 (C is then zeros).
  const float one = 1.0f, zero = 0.0f;
  check_status(cublas().sgemm(handle, cublas_op_n, cublas_op_n, n, m, k, &one, b, n, a, k > 0 ? k : 1, &zero, c, n), "cublasSgemm");
}

void cublas_gemm_row_major_nt(const device& d, tensor_core_precision precision, const void* a, int lda, const void* b_t, int ldb, void* c, int ldc,
                              int m, int n, int k, void* stream) {
  cublas_handle handle = handle_on(d, stream);
  // Column-major, C^T[n,m] = b_t[n,k] A^T[k,m]: b_t read column-major is B
  // (k x n), so op T; row-major A read column-major is A^T, op N.
  const float one = 1.0f, zero = 0.0f;
  const bool bf16 = precision == tensor_core_precision::bf16;
  const int type = bf16 ? cuda_r_16bf : cuda_r_32f;
  check_status(cublas().gemm_ex(handle, cublas_op_t, cublas_op_n, n, m, k, &one, b_t, type, ldb, a, type, lda, &zero, c, type, ldc,
                                bf16 ? cublas_compute_32f : cublas_compute_32f_fast_tf32, cublas_gemm_default),
               "cublasGemmEx");
}

}  // namespace lockstep
