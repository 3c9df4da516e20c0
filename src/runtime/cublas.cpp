#include "cublas.h"

#include <cstdlib>
#include <mutex>

#include "cuda_driver.h"
#include "lockstep/errors.h"

namespace lockstep::detail {
namespace {

// The few cuBLAS declarations used here (values from cublas_api.h, CUDA 13).
using cublas_handle = struct cublas_context*;
using cublas_status = int;
constexpr int cublas_op_n = 0;
using create_fn = cublas_status (*)(cublas_handle*);
using set_stream_fn = cublas_status (*)(cublas_handle, void*);
using sgemm_fn = cublas_status (*)(cublas_handle, int, int, int, int, int, const float*, const float*, int, const float*, int,
                                   const float*, float*, int);

struct loaded_cublas {
  create_fn create = nullptr;
  set_stream_fn set_stream = nullptr;
  sgemm_fn sgemm = nullptr;
  std::string unavailable_reason;
};

const loaded_cublas& cublas() {
  static const loaded_cublas loaded = [] {
    loaded_cublas l;
    std::vector<std::string> candidates{"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    if (const char* home = std::getenv("CUDA_HOME"); home && *home) candidates.push_back(std::string(home) + "/lib64/libcublas.so");
    candidates.push_back("/usr/local/cuda/lib64/libcublas.so");
    std::string attempts, missing;
    void* library = cu::open_first_library(candidates, attempts);
    if (!library) {
      l.unavailable_reason = "cuBLAS could not be loaded (" + attempts + "); install the CUDA toolkit's cuBLAS (or `pip install nvidia-cublas-cu12`)";
      return l;
    }
    l.create = reinterpret_cast<create_fn>(cu::find_symbol(library, {"cublasCreate_v2"}, missing));
    l.set_stream = reinterpret_cast<set_stream_fn>(cu::find_symbol(library, {"cublasSetStream_v2"}, missing));
    l.sgemm = reinterpret_cast<sgemm_fn>(cu::find_symbol(library, {"cublasSgemm_v2"}, missing));
    if (!missing.empty()) l.unavailable_reason = "the cuBLAS library that was loaded lacks " + missing;
    return l;
  }();
  return loaded;
}

}  // namespace

bool cublas_available() { return cublas().unavailable_reason.empty(); }
std::string cublas_unavailable_reason() { return cublas().unavailable_reason; }

void cublas_sgemm_row_major(const float* a, const float* b, float* c, int m, int n, int k, void* stream) {
  const loaded_cublas& api = cublas();
  if (!api.unavailable_reason.empty()) throw device_unavailable(api.unavailable_reason);
  // One handle per thread (cuBLAS handles are not for concurrent use), made
  // in the context current on that thread the first time.
  thread_local cublas_handle handle = nullptr;
  auto check = [](cublas_status s, const char* what) {
    if (s != 0) throw cuda_error(cudaErrorUnknown, std::string(what) + " failed with cuBLAS status " + std::to_string(s));
  };
  if (!handle) check(api.create(&handle), "cublasCreate");
  check(api.set_stream(handle, stream), "cublasSetStream");
  // cuBLAS is column-major: the row-major product C = A B is, read column-major,
  // C^T = B^T A^T, which is sgemm on (B, A) with no transposes.
  // Leading dimensions must be at least 1 even when k is 0 (C is then zeros).
  const float one = 1.0f, zero = 0.0f;
  check(api.sgemm(handle, cublas_op_n, cublas_op_n, n, m, k, &one, b, n, a, k > 0 ? k : 1, &zero, c, n), "cublasSgemm");
}

}  // namespace lockstep::detail
