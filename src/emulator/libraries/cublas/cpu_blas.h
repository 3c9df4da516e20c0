// The CPU BLAS behind the emulator's cuBLAS: a real, tuned library (OpenBLAS
// where installed) loaded with dlopen at first use, so lockstep builds and
// runs without one until a program calls cuBLAS. Only the CBLAS entry points
// the emulated routines call are looked up.
#pragma once
#include <string>
#include <vector>

namespace lockstep::emu::cublas {

// CBLAS's enum values (cblas.h), declared here so no BLAS headers are needed.
enum cblas_order { cblas_col_major = 102 };
enum cblas_transpose { cblas_no_trans = 111, cblas_trans = 112 };

struct cpu_blas {
  using sgemm_fn = void (*)(int order, int transa, int transb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                            float beta, float* c, int ldc);
  using dgemm_fn = void (*)(int order, int transa, int transb, int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
                            double beta, double* c, int ldc);
  using sgemv_fn = void (*)(int order, int trans, int m, int n, float alpha, const float* a, int lda, const float* x, int incx, float beta, float* y,
                            int incy);
  using dgemv_fn = void (*)(int order, int trans, int m, int n, double alpha, const double* a, int lda, const double* x, int incx, double beta,
                            double* y, int incy);
  template <class T>
  using axpy_fn = void (*)(int n, T alpha, const T* x, int incx, T* y, int incy);
  template <class T>
  using dot_fn = T (*)(int n, const T* x, int incx, const T* y, int incy);
  template <class T>
  using norm_fn = T (*)(int n, const T* x, int incx);  // nrm2, asum
  template <class T>
  using scal_fn = void (*)(int n, T alpha, T* x, int incx);
  template <class T>
  using copy_fn = void (*)(int n, const T* x, int incx, T* y, int incy);
  template <class T>
  using iamax_fn = std::size_t (*)(int n, const T* x, int incx);  // CBLAS_INDEX, 0-based

  sgemm_fn sgemm = nullptr;
  dgemm_fn dgemm = nullptr;
  sgemv_fn sgemv = nullptr;
  dgemv_fn dgemv = nullptr;
  axpy_fn<float> saxpy = nullptr;
  axpy_fn<double> daxpy = nullptr;
  dot_fn<float> sdot = nullptr;
  dot_fn<double> ddot = nullptr;
  norm_fn<float> snrm2 = nullptr, sasum = nullptr;
  norm_fn<double> dnrm2 = nullptr, dasum = nullptr;
  scal_fn<float> sscal = nullptr;
  scal_fn<double> dscal = nullptr;
  copy_fn<float> scopy = nullptr;
  copy_fn<double> dcopy = nullptr;
  iamax_fn<float> isamax = nullptr;
  iamax_fn<double> idamax = nullptr;

  std::string library;             // the candidate that loaded, when one did
  std::string unavailable_reason;  // empty when every entry point was found
  std::string warning;             // LOCKSTEP_BLAS was set but another library was used
};

// The libraries tried, in order: $LOCKSTEP_BLAS (a path) when set, OpenBLAS,
// then the system's reference BLAS (Debian's libblas.so.3 carries cblas_*).
std::vector<std::string> cpu_blas_candidates();
// Loads the first candidate that opens and resolves every entry point; the
// reason names what was tried and what to install when none does.
cpu_blas load_cpu_blas(const std::vector<std::string>& candidates);
// The process's BLAS, loaded once on first use; its unavailable_reason (or
// warning) is printed to stderr once.
const cpu_blas& the_cpu_blas();

}  // namespace lockstep::emu::cublas
