// -fsanitize=alignment (UBSan's check of a pointer's alignment for the type
// it is used as, compile flag only) calls this when a load, store or member
// access goes through a misaligned pointer. The check sees what the access
// hooks cannot: GCC splits `float4 v = *p` into four 4-byte loads when the
// kernel uses the components, each aligned by itself, although the GPU loads
// 16 bytes at once and faults unless p is a multiple of 16. In a checked
// kernel it is a memcheck finding that stops the thread before the access;
// in host code it is printed, once per place, as UBSan would.
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "check/block_checker.h"
#include "check/ubsan_data.h"

namespace {

using lockstep::emu::check::ubsan::type_mismatch_data;

void misaligned(const type_mismatch_data* data, void* pointer, void* pc) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  const std::size_t alignment = std::size_t{1} << data->log_alignment;
  if (!address || !(address & (alignment - 1))) return;  // a null check (-fsanitize=null), not this one's
  const lockstep::emu::check::paused_checks paused;      // the message's strings are not the kernel's
  const std::string what = std::string(lockstep::emu::check::ubsan::type_check_kind(data->check_kind)) + " a misaligned address for type " +
                           data->type->name + ", which requires " + std::to_string(alignment) + "-byte alignment";
  if (auto* checker = paused.saved) {
    checker->misaligned_pointer(address, alignment, data->check_kind == 1, reinterpret_cast<std::uintptr_t>(pc), what);
    return;
  }
  static std::mutex mutex;
  static std::set<std::pair<const char*, unsigned>> told;
  std::lock_guard lock(mutex);
  if (told.insert({data->location.file, data->location.line}).second)
    std::fprintf(stderr, "%s:%u:%u: runtime error: %s (%p)\n", data->location.file, data->location.line, data->location.column, what.c_str(),
                 pointer);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void __ubsan_handle_type_mismatch_v1(type_mismatch_data* data, void* pointer) {
  misaligned(data, pointer, __builtin_return_address(0));
}

// With -fno-sanitize-recover the program must not go on.
extern "C" __attribute__((visibility("default"), noreturn)) void __ubsan_handle_type_mismatch_v1_abort(type_mismatch_data* data, void* pointer) {
  misaligned(data, pointer, __builtin_return_address(0));
  std::abort();
}
