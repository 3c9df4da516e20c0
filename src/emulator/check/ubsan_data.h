// What UBSan's checks hand their handlers (compiler-rt/lib/ubsan/ubsan_handlers.h),
// a layout stable across GCC and Clang: liblockstep answers -fsanitize=bounds
// (bounds_hooks) and -fsanitize=alignment (alignment_hooks) itself.
#pragma once

namespace lockstep::emu::check::ubsan {

struct source_location {
  const char* file;
  unsigned line, column;
};
struct type_descriptor {
  unsigned short kind;  // 0: integer
  unsigned short info;  // integer: bit 0 signed, the rest log2 of the bit width
  char name[1];         // quoted: 'float4'
};
struct out_of_bounds_data {
  source_location location;
  const type_descriptor* array_type;
  const type_descriptor* index_type;
};
struct type_mismatch_data {
  source_location location;
  const type_descriptor* type;
  unsigned char log_alignment;
  unsigned char check_kind;  // index into type_check_kinds
};

// What the access through the pointer was, by type_mismatch_data::check_kind.
inline const char* type_check_kind(unsigned char kind) {
  static const char* const kinds[] = {
      "load of",     "store to",  "reference binding to",    "member access within", "member call on",      "constructor call on", "downcast of",
      "downcast of", "upcast of", "cast to virtual base of", "_Nonnull binding to",  "dynamic operation on"};
  return kind < sizeof kinds / sizeof kinds[0] ? kinds[kind] : "access to";
}

}  // namespace lockstep::emu::check::ubsan
