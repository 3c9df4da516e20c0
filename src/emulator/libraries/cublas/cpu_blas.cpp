#include "cpu_blas.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace lockstep::emu::cublas {

std::vector<std::string> cpu_blas_candidates() {
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("LOCKSTEP_BLAS"); path && *path) candidates.emplace_back(path);
  for (const char* name : {"libopenblas.so.0", "libopenblas.so", "libcblas.so.3", "libblas.so.3"}) candidates.emplace_back(name);
  return candidates;
}

namespace {

// Every entry point, or the names missing from `library`.
std::string resolve(void* library, cpu_blas& blas) {
  std::string missing;
  auto find = [&](auto& function, const char* name) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(library, name));
    if (!function) missing += (missing.empty() ? "" : ", ") + std::string(name);
  };
  find(blas.sgemm, "cblas_sgemm");
  find(blas.dgemm, "cblas_dgemm");
  find(blas.sgemv, "cblas_sgemv");
  find(blas.dgemv, "cblas_dgemv");
  find(blas.saxpy, "cblas_saxpy");
  find(blas.daxpy, "cblas_daxpy");
  find(blas.sdot, "cblas_sdot");
  find(blas.ddot, "cblas_ddot");
  find(blas.snrm2, "cblas_snrm2");
  find(blas.dnrm2, "cblas_dnrm2");
  find(blas.sasum, "cblas_sasum");
  find(blas.dasum, "cblas_dasum");
  find(blas.sscal, "cblas_sscal");
  find(blas.dscal, "cblas_dscal");
  find(blas.scopy, "cblas_scopy");
  find(blas.dcopy, "cblas_dcopy");
  find(blas.isamax, "cblas_isamax");
  find(blas.idamax, "cblas_idamax");
  return missing;
}

}  // namespace

cpu_blas load_cpu_blas(const std::vector<std::string>& candidates) {
  std::string attempts;
  for (const std::string& candidate : candidates) {
    void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char* reason = dlerror();  // names the file already
      attempts += (attempts.empty() ? "" : "; ") + (reason ? std::string(reason) : candidate + ": cannot be loaded");
      continue;
    }
    cpu_blas blas;
    if (std::string missing = resolve(library, blas); !missing.empty()) {
      attempts += (attempts.empty() ? "" : "; ") + candidate + " lacks " + missing;
      dlclose(library);
      continue;
    }
    blas.library = candidate;
    if (!attempts.empty()) blas.warning = "lockstep cuBLAS: using " + candidate + " (" + attempts + ")";
    return blas;
  }
  cpu_blas none;
  none.unavailable_reason = "lockstep cuBLAS needs a CPU BLAS with CBLAS entry points and found none (" + attempts +
                            "): install OpenBLAS (`apt install libopenblas0`) or set LOCKSTEP_BLAS to the path of a BLAS library";
  return none;
}

const cpu_blas& the_cpu_blas() {
  static const cpu_blas blas = [] {
    cpu_blas loaded = load_cpu_blas(cpu_blas_candidates());
    if (!loaded.unavailable_reason.empty())
      std::fprintf(stderr, "%s\n", loaded.unavailable_reason.c_str());
    else if (!loaded.warning.empty() && std::getenv("LOCKSTEP_BLAS"))
      std::fprintf(stderr, "%s\n", loaded.warning.c_str());
    return loaded;
  }();
  return blas;
}

}  // namespace lockstep::emu::cublas
