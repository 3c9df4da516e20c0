#include "libclang.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace lockstep::emu::region_loops {

const libclang_api* load_libclang(std::string* why_not) {
  static std::once_flag once;
  static libclang_api api;
  static const libclang_api* loaded = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    std::vector<std::string> names;
    if (const char* path = std::getenv("LOCKSTEP_LIBCLANG")) names.emplace_back(path);
    for (const char* n : {"libclang.so.1", "libclang.so", "libclang-14.so.1", "libclang-15.so.1", "libclang-16.so.1"}) names.emplace_back(n);
    void* handle = nullptr;
    for (const auto& n : names)
      if ((handle = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    if (!handle) {
      failure = "libclang was not found (install libclang1 from the system's packages, or set LOCKSTEP_LIBCLANG to its path)";
      return;
    }
#define LOCKSTEP_LIBCLANG_LOAD(name)                                     \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name)); \
  if (!api.name) {                                                       \
    failure = "the libclang found lacks " #name;                         \
    return;                                                              \
  }
    LOCKSTEP_LIBCLANG_FUNCTIONS(LOCKSTEP_LIBCLANG_LOAD)
#undef LOCKSTEP_LIBCLANG_LOAD
    loaded = &api;
  });
  if (!loaded && why_not) *why_not = failure;
  return loaded;
}

}  // namespace lockstep::emu::region_loops
