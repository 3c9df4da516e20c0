// Finding and loading libclang. In order:
//   1. LOCKSTEP_LIBCLANG, a path (the Python package sets it to the PyPI
//      `libclang` wheel's library when it is imported and the variable is
//      unset, so that lockstep nvcc and other child processes see it too);
//      set, it is the only one tried: a path that does not load is an error;
//   2. the one the build found (the first line of the file
//      LOCKSTEP_LIBCLANG_RECORD, written by src/CMakeLists.txt; a missing
//      file or a library gone since is passed over);
//   3. the system's: libclang.so (the development link, the distribution's
//      default), libclang.so.1, then by version, highest first.
#include <dlfcn.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <vector>

#include "libclang.h"

namespace lockstep::emu::region_loops {
namespace {

constexpr const char* fix =
    "pip install libclang (the PyPI wheel, which lockstep's Python package depends on), or set LOCKSTEP_LIBCLANG to a libclang.so";

std::vector<std::string> system_names() {
  std::vector<std::string> names{"libclang.so", "libclang.so.1"};
  // Debian and Ubuntu name theirs libclang-NN.so.1, LLVM's own builds and
  // Fedora libclang.so.NN.
  for (int version = 30; version >= 11; --version) {
    names.push_back("libclang-" + std::to_string(version) + ".so.1");
    names.push_back("libclang.so." + std::to_string(version));
  }
  return names;
}

}  // namespace

const libclang_api* load_libclang(std::string* why_not) {
  static std::once_flag once;
  static libclang_api api;
  static const libclang_api* loaded = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    void* handle = nullptr;
    if (const char* path = std::getenv("LOCKSTEP_LIBCLANG"); path && *path) {
      if (!(handle = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
        const char* error = dlerror();
        failure = "LOCKSTEP_LIBCLANG=" + std::string(path) + " could not be loaded (" + (error ? error : "") +
                  "); fix: point LOCKSTEP_LIBCLANG at a libclang.so, or unset it and pip install libclang";
        return;
      }
      api.path = path;
    } else {
      std::vector<std::string> names;
#ifdef LOCKSTEP_LIBCLANG_RECORD
      if (std::string found; std::getline(std::ifstream(LOCKSTEP_LIBCLANG_RECORD), found) && !found.empty()) names.push_back(found);
#endif
      for (std::string& n : system_names()) names.push_back(std::move(n));
      for (const auto& n : names)
        if ((handle = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL))) {
          api.path = n;
          break;
        }
      if (!handle) {
        failure =
            std::string("no libclang was found (LOCKSTEP_LIBCLANG is unset, and neither the libclang wheel nor the system has one); fix: ") + fix;
        return;
      }
    }
#define LOCKSTEP_LIBCLANG_LOAD(name)                                           \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name));       \
  if (!api.name) {                                                             \
    failure = "the libclang at " + api.path + " lacks " #name "; fix: " + fix; \
    return;                                                                    \
  }
    LOCKSTEP_LIBCLANG_FUNCTIONS(LOCKSTEP_LIBCLANG_LOAD)
#undef LOCKSTEP_LIBCLANG_LOAD
    builtin_headers headers = find_builtin_headers(api);
    if (!headers.error.empty()) {
      failure = "the libclang at " + api.path + " " + headers.error + "; fix: " + fix;
      return;
    }
    api.builtin_header_arguments = std::move(headers.arguments);
    loaded = &api;
    log_loaded(api);
  });
  if (!loaded && why_not) *why_not = failure;
  return loaded;
}

void say_unavailable_once(const std::string& why_not) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::cerr << "lockstep: region loops are unavailable, kernels with barriers run on fibers (many times slower): " << why_not << "\n";
  });
}

}  // namespace lockstep::emu::region_loops
