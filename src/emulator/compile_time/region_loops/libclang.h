// libclang's C API, loaded at run time (libclang.cpp says from where), so
// that liblockstep loads and runs its kernels where no libclang is found:
// there every kernel runs on fibers, and the first split says why, once.
// The declarations are lockstep's own (libclang_abi.h): building needs no
// libclang headers.
#pragma once
#include <string>
#include <vector>

#include "libclang_abi.h"

namespace lockstep::emu::region_loops {

// Every function of libclang_abi.h, each resolved when the library loads (a
// library that lacks one is not used). The last two are not called yet: they
// are for reading the synchronising functions' annotations from their
// declarations (issue 45: an attribute cursor among a declaration's
// children; the one declaration all of a function's redeclarations share);
// tests/cpp/runtime/test_region_loops_libclang_abi.cpp checks what they return.
#define LOCKSTEP_LIBCLANG_FUNCTIONS(X)     \
  X(clang_createIndex)                     \
  X(clang_toggleCrashRecovery)             \
  X(clang_disposeIndex)                    \
  X(clang_parseTranslationUnit2)           \
  X(clang_disposeTranslationUnit)          \
  X(clang_getNumDiagnostics)               \
  X(clang_getDiagnostic)                   \
  X(clang_getDiagnosticSeverity)           \
  X(clang_getDiagnosticLocation)           \
  X(clang_getDiagnosticCategoryText)       \
  X(clang_formatDiagnostic)                \
  X(clang_defaultDiagnosticDisplayOptions) \
  X(clang_disposeDiagnostic)               \
  X(clang_getTranslationUnitCursor)        \
  X(clang_visitChildren)                   \
  X(clang_getCursorKind)                   \
  X(clang_isExpression)                    \
  X(clang_getCursorExtent)                 \
  X(clang_getCursorLocation)               \
  X(clang_getRangeStart)                   \
  X(clang_getRangeEnd)                     \
  X(clang_getExpansionLocation)            \
  X(clang_getPresumedLocation)             \
  X(clang_Location_isFromMainFile)         \
  X(clang_Location_isInSystemHeader)       \
  X(clang_getCursorSpelling)               \
  X(clang_getCString)                      \
  X(clang_disposeString)                   \
  X(clang_getCursorReferenced)             \
  X(clang_getCursorDefinition)             \
  X(clang_Cursor_isNull)                   \
  X(clang_getCursorSemanticParent)         \
  X(clang_getCursorType)                   \
  X(clang_getTypeSpelling)                 \
  X(clang_getCanonicalType)                \
  X(clang_isConstQualifiedType)            \
  X(clang_isRestrictQualifiedType)         \
  X(clang_getPointeeType)                  \
  X(clang_getArrayElementType)             \
  X(clang_Cursor_getStorageClass)          \
  X(clang_getCursorTLSKind)                \
  X(clang_getFileName)                     \
  X(clang_getCursorUSR)                    \
  X(clang_isCursorDefinition)              \
  X(clang_getSpecializedCursorTemplate)    \
  X(clang_getNumOverloadedDecls)           \
  X(clang_getOverloadedDecl)               \
  X(clang_Type_getSizeOf)                  \
  X(clang_getCursorResultType)             \
  X(clang_Cursor_getNumArguments)          \
  X(clang_Cursor_getArgument)              \
  X(clang_saveTranslationUnit)             \
  X(clang_defaultSaveOptions)              \
  X(clang_getClangVersion)                 \
  X(clang_Cursor_Evaluate)                 \
  X(clang_EvalResult_getKind)              \
  X(clang_EvalResult_getAsLongLong)        \
  X(clang_EvalResult_dispose)              \
  X(clang_isAttribute)                     \
  X(clang_getCanonicalCursor)

struct libclang_api {
  std::string path;  // the file loaded
  // What every parse adds to its command line so that the builtin headers
  // (stddef.h, stdarg.h) are found: empty where the library finds its own,
  // else a -resource-dir (builtin_headers.cpp).
  std::vector<std::string> builtin_header_arguments;

#define LOCKSTEP_LIBCLANG_POINTER(name) decltype(&::name) name = nullptr;
  LOCKSTEP_LIBCLANG_FUNCTIONS(LOCKSTEP_LIBCLANG_POINTER)
#undef LOCKSTEP_LIBCLANG_POINTER

  // clang_createIndex puts LLVM's crash handlers in front of the process's
  // fault handlers: a kernel's fault would then reach the emulator re-raised,
  // without its address. Turning them off puts back what was there.
  CXIndex new_index() const {
    CXIndex index = clang_createIndex(0, 0);
    clang_toggleCrashRecovery(0);
    return index;
  }

  std::string string(CXString s) const {  // takes s
    const char* c = clang_getCString(s);
    std::string out = c ? c : "";
    clang_disposeString(s);
    return out;
  }
};

// The loaded API, or null with `why_not` saying what was missing and how to
// get it.
const libclang_api* load_libclang(std::string* why_not);

// Where the loaded library does not find its builtin headers, the arguments
// that give it some (a -resource-dir), or an error saying none were found
// (builtin_headers.cpp).
struct builtin_headers {
  std::vector<std::string> arguments;
  std::string error;
};
builtin_headers find_builtin_headers(const libclang_api& clang);

// Under LOCKSTEP_REGION_LOOPS_LOG, which libclang was loaded and where its
// builtin headers come from (log.cpp).
void log_loaded(const libclang_api& clang);

// The first time kernels cannot be split because no libclang loads: once per
// process on stderr, what is missing and the fix.
void say_unavailable_once(const std::string& why_not);

}  // namespace lockstep::emu::region_loops
