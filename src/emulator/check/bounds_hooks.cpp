// -fsanitize=bounds (UBSan's array-index check, compile flag only) calls
// these when an index is outside an array's declared size: `tile[16]` of
// `__shared__ float tile[16]`, which lands inside the next array and is
// therefore invisible to address checks. In a checked kernel that is a
// memcheck finding that stops the thread before the access; in host code it
// is printed, once per place, as UBSan would.
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "check/block_checker.h"
#include "check/ubsan_data.h"

namespace {

using lockstep::emu::check::ubsan::out_of_bounds_data;
using lockstep::emu::check::ubsan::type_descriptor;

std::string index_text(const type_descriptor* type, void* value) {
  const auto bits = reinterpret_cast<std::uintptr_t>(value);
  if (type->kind != 0 || (1u << (type->info >> 1)) > 64) return "an index";
  const unsigned width = 1u << (type->info >> 1), unused = 64 - width;
  if (type->info & 1) return "index " + std::to_string(static_cast<long long>(bits << unused) >> unused);
  return "index " + std::to_string(static_cast<unsigned long long>(bits));
}

void out_of_bounds(const out_of_bounds_data* data, void* index, void* pc) {
  const lockstep::emu::check::paused_checks paused;  // the message's strings are not the kernel's
  const std::string what = index_text(data->index_type, index) + " is outside the bounds of " + data->array_type->name;  // the name comes quoted
  if (auto* checker = paused.saved) {
    checker->index_out_of_bounds(reinterpret_cast<std::uintptr_t>(pc), {data->location.file ? data->location.file : "", data->location.line, ""},
                                 what);
    return;
  }
  static std::mutex mutex;
  static std::set<std::pair<const char*, unsigned>> told;
  std::lock_guard lock(mutex);
  if (told.insert({data->location.file, data->location.line}).second)
    std::fprintf(stderr, "%s:%u:%u: runtime error: %s\n", data->location.file, data->location.line, data->location.column, what.c_str());
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void __ubsan_handle_out_of_bounds(out_of_bounds_data* data, void* index) {
  out_of_bounds(data, index, __builtin_return_address(0));
}

// With -fno-sanitize-recover the program must not go on.
extern "C" __attribute__((visibility("default"), noreturn)) void __ubsan_handle_out_of_bounds_abort(out_of_bounds_data* data, void* index) {
  out_of_bounds(data, index, __builtin_return_address(0));
  std::abort();
}
