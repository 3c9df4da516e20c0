// libclang's functions as lockstep declares them (libclang_abi.h), called in
// the library that loads here: the ones declared for reading annotations on
// declarations (clang_isAttribute, clang_getCanonicalCursor) resolve and give
// what their declarations say. A wrong declaration (a return type, a struct
// passed by value) shows as a wrong answer, not as a build error. The suite's
// name starts with RegionLoops, so it runs again under libclang 16
// (tests/cpp/CMakeLists.txt).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emulator/compile_time/region_loops/libclang.h"

namespace rl = lockstep::emu::region_loops;

namespace {

// A function declared three times, annotated on the second.
constexpr char source[] = R"(void waits(int);
__attribute__((annotate("lockstep_waits"))) void waits(int);
void waits(int n) {}
)";

std::vector<CXCursor> children(const rl::libclang_api& clang, CXCursor parent) {
  std::vector<CXCursor> out;
  clang.clang_visitChildren(
      parent,
      [](CXCursor child, CXCursor, CXClientData data) {
        static_cast<std::vector<CXCursor>*>(data)->push_back(child);
        return CXChildVisit_Continue;
      },
      &out);
  return out;
}

unsigned line_of(const rl::libclang_api& clang, CXCursor c) {
  unsigned line = 0;
  clang.clang_getExpansionLocation(clang.clang_getCursorLocation(c), nullptr, &line, nullptr, nullptr);
  return line;
}

struct parsed {
  const rl::libclang_api* clang = nullptr;
  CXIndex index = nullptr;
  CXTranslationUnit tu = nullptr;
  ~parsed() {
    if (tu) clang->clang_disposeTranslationUnit(tu);
    if (index) clang->clang_disposeIndex(index);
  }
};

}  // namespace

TEST(RegionLoopsLibclangAbi, AttributesAndCanonicalDeclarationsAreRead) {
  std::string why_not;
  parsed p;
  p.clang = rl::load_libclang(&why_not);
  ASSERT_NE(p.clang, nullptr) << why_not;
  const rl::libclang_api& clang = *p.clang;
  ASSERT_NE(clang.clang_isAttribute, nullptr);
  ASSERT_NE(clang.clang_getCanonicalCursor, nullptr);

  p.index = clang.new_index();
  const char* args[] = {"-x", "c++"};
  CXUnsavedFile unsaved{"/lockstep-test/waits.cpp", source, sizeof source - 1};
  ASSERT_EQ(clang.clang_parseTranslationUnit2(p.index, unsaved.Filename, args, 2, &unsaved, 1, 0, &p.tu), CXError_Success);
  ASSERT_EQ(clang.clang_getNumDiagnostics(p.tu), 0u);

  std::vector<CXCursor> declarations;
  for (const CXCursor& c : children(clang, clang.clang_getTranslationUnitCursor(p.tu)))
    if (clang.clang_getCursorKind(c) == CXCursor_FunctionDecl) declarations.push_back(c);
  ASSERT_EQ(declarations.size(), 3u);

  // Every redeclaration leads to the first declaration.
  for (std::size_t i = 0; i < declarations.size(); ++i) {
    EXPECT_EQ(line_of(clang, declarations[i]), i + 1);
    const CXCursor canonical = clang.clang_getCanonicalCursor(declarations[i]);
    EXPECT_EQ(clang.clang_getCursorKind(canonical), CXCursor_FunctionDecl);
    EXPECT_EQ(clang.string(clang.clang_getCursorSpelling(canonical)), "waits");
    EXPECT_EQ(line_of(clang, canonical), 1u) << "declaration " << i + 1;
  }

  // The first declaration has no attribute; the second has the annotation,
  // an attribute cursor whose spelling is its text; its parameter is not one.
  auto annotations = [&](CXCursor declaration) {
    std::vector<std::string> out;
    for (const CXCursor& child : children(clang, declaration)) {
      const CXCursorKind kind = clang.clang_getCursorKind(child);
      EXPECT_EQ(clang.clang_isAttribute(kind) != 0, kind == CXCursor_AnnotateAttr) << "cursor kind " << int(kind);
      if (clang.clang_isAttribute(kind)) out.push_back(clang.string(clang.clang_getCursorSpelling(child)));
    }
    return out;
  };
  EXPECT_TRUE(annotations(declarations[0]).empty());
  EXPECT_EQ(annotations(declarations[1]), std::vector<std::string>{"lockstep_waits"});
  EXPECT_FALSE(clang.clang_isAttribute(CXCursor_FunctionDecl));
  EXPECT_FALSE(clang.clang_isAttribute(CXCursor_CompoundStmt));
}
