// The part of libclang's C ABI the region-loop compiler uses, declared by
// lockstep so that it builds without libclang's headers (no libclang-dev:
// `pip install .` on a bare machine). libclang keeps this ABI stable across
// LLVM releases (its handles are opaque, its structs' layouts and its
// enumerators' values fixed once published), so one set of declarations
// serves every libclang that libclang.cpp may load, from LLVM 14 to the PyPI
// wheel's 18. The one value that did move is CXCursor_TranslationUnit
// (300, then 350 from LLVM 16): it is not declared here; the splitter asks
// the loaded library for it (translation_unit_kind_, compiler.h).
//
// The functions are declared only to name their types: libclang.h takes each
// one's address type (decltype) for the pointer dlsym fills; nothing links
// against them. A value added here must be one libclang documents; the
// region-loop tests, run against every libclang CI installs, fail where one
// is wrong.
#pragma once

extern "C" {

// Opaque handles.
typedef void* CXIndex;
typedef struct CXTranslationUnitImpl* CXTranslationUnit;
typedef void* CXClientData;
typedef void* CXFile;
typedef void* CXDiagnostic;
typedef void* CXEvalResult;

// A string libclang owns (clang_getCString reads it, clang_disposeString frees it).
typedef struct {
  const void* data;
  unsigned private_flags;
} CXString;

typedef struct {
  const void* ptr_data[2];
  unsigned int_data;
} CXSourceLocation;

typedef struct {
  const void* ptr_data[2];
  unsigned begin_int_data;
  unsigned end_int_data;
} CXSourceRange;

// A source the parse reads from memory instead of the file of that name.
struct CXUnsavedFile {
  const char* Filename;
  const char* Contents;
  unsigned long Length;
};

// Each enumeration has a fixed underlying type (int, as a C enum is): the
// library returns values this subset does not name (a cursor kind of a newer
// LLVM, CXDiagnostic_Fatal), which must be valid values of the type.

// The kinds of cursor the analysis tells apart (libclang numbers them in
// bands: declarations from 1, references from 40, expressions from 100,
// statements from 200, attributes from 400).
enum CXCursorKind : int {
  CXCursor_UnexposedDecl = 1,
  CXCursor_EnumConstantDecl = 7,
  CXCursor_FunctionDecl = 8,
  CXCursor_VarDecl = 9,
  CXCursor_ParmDecl = 10,
  CXCursor_CXXMethod = 21,
  CXCursor_Namespace = 22,
  CXCursor_LinkageSpec = 23,
  CXCursor_Constructor = 24,
  CXCursor_ConversionFunction = 26,
  CXCursor_TemplateTypeParameter = 27,
  CXCursor_NonTypeTemplateParameter = 28,
  CXCursor_TemplateTemplateParameter = 29,
  CXCursor_FunctionTemplate = 30,
  CXCursor_NamespaceAlias = 33,
  CXCursor_UsingDirective = 34,
  CXCursor_UsingDeclaration = 35,

  CXCursor_TypeRef = 43,
  CXCursor_TemplateRef = 45,
  CXCursor_NamespaceRef = 46,
  CXCursor_OverloadedDeclRef = 49,

  CXCursor_UnexposedExpr = 100,
  CXCursor_DeclRefExpr = 101,
  CXCursor_MemberRefExpr = 102,
  CXCursor_CallExpr = 103,
  CXCursor_IntegerLiteral = 106,
  CXCursor_FloatingLiteral = 107,
  CXCursor_CharacterLiteral = 110,
  CXCursor_ParenExpr = 111,
  CXCursor_UnaryOperator = 112,
  CXCursor_ArraySubscriptExpr = 113,
  CXCursor_BinaryOperator = 114,
  CXCursor_CompoundAssignOperator = 115,
  CXCursor_ConditionalOperator = 116,
  CXCursor_CStyleCastExpr = 117,
  CXCursor_InitListExpr = 119,
  CXCursor_StmtExpr = 121,
  CXCursor_CXXStaticCastExpr = 124,
  CXCursor_CXXReinterpretCastExpr = 126,
  CXCursor_CXXConstCastExpr = 127,
  CXCursor_CXXFunctionalCastExpr = 128,
  CXCursor_CXXBoolLiteralExpr = 130,
  CXCursor_CXXNullPtrLiteralExpr = 131,
  CXCursor_UnaryExpr = 136,
  CXCursor_LambdaExpr = 144,

  CXCursor_UnexposedStmt = 200,
  CXCursor_LabelStmt = 201,
  CXCursor_CompoundStmt = 202,
  CXCursor_IfStmt = 205,
  CXCursor_SwitchStmt = 206,
  CXCursor_WhileStmt = 207,
  CXCursor_DoStmt = 208,
  CXCursor_ForStmt = 209,
  CXCursor_GotoStmt = 210,
  CXCursor_IndirectGotoStmt = 211,
  CXCursor_ContinueStmt = 212,
  CXCursor_BreakStmt = 213,
  CXCursor_ReturnStmt = 214,
  CXCursor_CXXForRangeStmt = 225,
  CXCursor_DeclStmt = 231,

  // Attributes: the band's first, and its last as of LLVM 14 to 18 (a newer
  // libclang may add kinds after it: clang_isAttribute asks the library).
  CXCursor_FirstAttr = 400,
  CXCursor_UnexposedAttr = 400,
  // __attribute__((annotate("..."))): the cursor's spelling is the annotation.
  CXCursor_AnnotateAttr = 406,
  CXCursor_LastAttr = 441,
};

typedef struct {
  enum CXCursorKind kind;
  int xdata;
  const void* data[3];
} CXCursor;

enum CXTypeKind : int {
  CXType_Unexposed = 1,
  CXType_Bool = 3,
  CXType_Char_U = 4,
  CXType_UChar = 5,
  CXType_UShort = 8,
  CXType_UInt = 9,
  CXType_ULong = 10,
  CXType_ULongLong = 11,
  CXType_Char_S = 13,
  CXType_SChar = 14,
  CXType_Short = 16,
  CXType_Int = 17,
  CXType_Long = 18,
  CXType_LongLong = 19,
  CXType_Float = 21,
  CXType_Double = 22,
  CXType_LongDouble = 23,
  CXType_NullPtr = 24,
  CXType_Pointer = 101,
  CXType_LValueReference = 103,
  CXType_RValueReference = 104,
  CXType_Record = 105,
  CXType_Enum = 106,
  CXType_ConstantArray = 112,
  CXType_IncompleteArray = 114,
  CXType_VariableArray = 115,
  CXType_DependentSizedArray = 116,
  CXType_Auto = 118,
  CXType_Elaborated = 119,  // a type written with its qualifier or keyword (ns::T, struct T); from LLVM 16 every named type
};

typedef struct {
  enum CXTypeKind kind;
  void* data[2];
} CXType;

// A token of a parsed unit (declared for the ABI's completeness: lockstep
// lexes with its own lexer, toolchain/lexer.h).
typedef struct {
  unsigned int_data[4];
  void* ptr_data;
} CXToken;

enum CXChildVisitResult : int { CXChildVisit_Break = 0, CXChildVisit_Continue = 1, CXChildVisit_Recurse = 2 };
typedef enum CXChildVisitResult (*CXCursorVisitor)(CXCursor cursor, CXCursor parent, CXClientData client_data);

enum CXErrorCode : int { CXError_Success = 0 };
enum CXDiagnosticSeverity : int { CXDiagnostic_Error = 3 };
// Options of clang_parseTranslationUnit2 (a bit mask).
enum CXTranslationUnit_Flags : int {
  CXTranslationUnit_Incomplete = 0x2,
  CXTranslationUnit_ForSerialization = 0x10,
  CXTranslationUnit_KeepGoing = 0x200,
};
enum CXSaveError : int { CXSaveError_None = 0 };
enum CX_StorageClass : int { CX_SC_Extern = 2, CX_SC_Static = 3 };
enum CXTLSKind : int { CXTLS_None = 0 };
enum CXEvalResultKind : int { CXEval_Int = 1 };

// Index and translation units.
CXIndex clang_createIndex(int exclude_declarations_from_pch, int display_diagnostics);
void clang_disposeIndex(CXIndex index);
void clang_toggleCrashRecovery(unsigned enabled);
enum CXErrorCode clang_parseTranslationUnit2(CXIndex index, const char* source_filename, const char* const* command_line_args,
                                             int num_command_line_args, struct CXUnsavedFile* unsaved_files, unsigned num_unsaved_files,
                                             unsigned options, CXTranslationUnit* out);
void clang_disposeTranslationUnit(CXTranslationUnit unit);
int clang_saveTranslationUnit(CXTranslationUnit unit, const char* file_name, unsigned options);
unsigned clang_defaultSaveOptions(CXTranslationUnit unit);
CXString clang_getClangVersion(void);

// Diagnostics.
unsigned clang_getNumDiagnostics(CXTranslationUnit unit);
CXDiagnostic clang_getDiagnostic(CXTranslationUnit unit, unsigned index);
enum CXDiagnosticSeverity clang_getDiagnosticSeverity(CXDiagnostic diagnostic);
CXSourceLocation clang_getDiagnosticLocation(CXDiagnostic diagnostic);
CXString clang_getDiagnosticCategoryText(CXDiagnostic diagnostic);
CXString clang_formatDiagnostic(CXDiagnostic diagnostic, unsigned options);
unsigned clang_defaultDiagnosticDisplayOptions(void);
void clang_disposeDiagnostic(CXDiagnostic diagnostic);

// Strings.
const char* clang_getCString(CXString string);
void clang_disposeString(CXString string);

// Cursors.
CXCursor clang_getTranslationUnitCursor(CXTranslationUnit unit);
unsigned clang_visitChildren(CXCursor parent, CXCursorVisitor visitor, CXClientData client_data);
enum CXCursorKind clang_getCursorKind(CXCursor cursor);
unsigned clang_isExpression(enum CXCursorKind kind);
unsigned clang_isAttribute(enum CXCursorKind kind);
CXString clang_getCursorSpelling(CXCursor cursor);
CXString clang_getCursorUSR(CXCursor cursor);
CXCursor clang_getCursorReferenced(CXCursor cursor);
CXCursor clang_getCanonicalCursor(CXCursor cursor);
CXCursor clang_getCursorDefinition(CXCursor cursor);
unsigned clang_isCursorDefinition(CXCursor cursor);
int clang_Cursor_isNull(CXCursor cursor);
CXCursor clang_getCursorSemanticParent(CXCursor cursor);
CXCursor clang_getSpecializedCursorTemplate(CXCursor cursor);
unsigned clang_getNumOverloadedDecls(CXCursor cursor);
CXCursor clang_getOverloadedDecl(CXCursor cursor, unsigned index);
enum CX_StorageClass clang_Cursor_getStorageClass(CXCursor cursor);
enum CXTLSKind clang_getCursorTLSKind(CXCursor cursor);
int clang_Cursor_getNumArguments(CXCursor cursor);
CXCursor clang_Cursor_getArgument(CXCursor cursor, unsigned index);
CXEvalResult clang_Cursor_Evaluate(CXCursor cursor);
enum CXEvalResultKind clang_EvalResult_getKind(CXEvalResult result);
long long clang_EvalResult_getAsLongLong(CXEvalResult result);
void clang_EvalResult_dispose(CXEvalResult result);

// Source locations.
CXSourceRange clang_getCursorExtent(CXCursor cursor);
CXSourceLocation clang_getCursorLocation(CXCursor cursor);
CXSourceLocation clang_getRangeStart(CXSourceRange range);
CXSourceLocation clang_getRangeEnd(CXSourceRange range);
void clang_getExpansionLocation(CXSourceLocation location, CXFile* file, unsigned* line, unsigned* column, unsigned* offset);
void clang_getPresumedLocation(CXSourceLocation location, CXString* file_name, unsigned* line, unsigned* column);
int clang_Location_isFromMainFile(CXSourceLocation location);
int clang_Location_isInSystemHeader(CXSourceLocation location);
CXString clang_getFileName(CXFile file);

// Types.
CXType clang_getCursorType(CXCursor cursor);
CXType clang_getCursorResultType(CXCursor cursor);
CXString clang_getTypeSpelling(CXType type);
CXType clang_getCanonicalType(CXType type);
unsigned clang_isConstQualifiedType(CXType type);
unsigned clang_isRestrictQualifiedType(CXType type);
CXType clang_getPointeeType(CXType type);
CXType clang_getArrayElementType(CXType type);
long long clang_Type_getSizeOf(CXType type);

}  // extern "C"
