// libclang's C API, loaded at run time (LOCKSTEP_LIBCLANG, else libclang.so.1,
// the soname Debian's libclang1-N and LLVM's own builds install), so that
// liblockstep loads and runs its kernels where no Clang is installed: there
// every kernel runs on fibers.
#pragma once
#include <clang-c/Index.h>

#include <string>

namespace lockstep::emu::region_loops {

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
  X(clang_EvalResult_dispose)

struct libclang_api {
#define LOCKSTEP_LIBCLANG_POINTER(name) decltype(&::name) name = nullptr;
  LOCKSTEP_LIBCLANG_FUNCTIONS(LOCKSTEP_LIBCLANG_POINTER)
#undef LOCKSTEP_LIBCLANG_POINTER

  std::string string(CXString s) const {  // takes s
    const char* c = clang_getCString(s);
    std::string out = c ? c : "";
    clang_disposeString(s);
    return out;
  }
};

// The loaded API, or null with `why_not` saying what was missing.
const libclang_api* load_libclang(std::string* why_not);

}  // namespace lockstep::emu::region_loops
