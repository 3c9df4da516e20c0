// The compiler's builtin headers (stddef.h, stdarg.h, the intrinsics) for a
// libclang that has none of its own. Clang looks for them in its resource
// directory beside the library (lib/clang/N/include); the PyPI wheel ships
// the library alone, and so does Debian's libclang1-N without
// libclang-common-N-dev. Without them libstdc++'s <cstddef> fails, and a unit
// with a header not found is never split (translation_unit.cpp's
// first_error), so every kernel would stay on fibers.
//
// The library is asked first (a parse of two #include lines); where it fails,
// a -resource-dir is tried from what is installed, and the first one with
// which the parse succeeds is used:
//   1. a Clang's own resource directory of the library's major version;
//   2. GCC's (its include/ holds stddef.h, stdarg.h and the rest, and the
//      host compiler is there wherever lockstep builds kernels): the C++
//      library Clang parses with is GCC's libstdc++, found in the same place;
//   3. any other Clang's resource directory, newest first.
// Intrinsics headers written for another compiler call builtins this Clang
// may lack: those errors stand in system headers, which the split ignores
// (it declines only on preprocessor errors there).
#include <algorithm>
#include <filesystem>
#include <string_view>

#include "libclang.h"

namespace lockstep::emu::region_loops {
namespace fs = std::filesystem;
namespace {

// "14.0.6" -> {14, 0, 6}; "clang version 18.1.1 (...)" -> {18, 1, 1}.
std::vector<int> version_numbers(std::string_view text) {
  std::vector<int> numbers;
  std::size_t i = text.find_first_of("0123456789");
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    int n = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) n = n * 10 + (text[i] - '0');
    numbers.push_back(n);
    if (i < text.size() && text[i] == '.')
      ++i;
    else
      break;
  }
  return numbers;
}

struct candidate {
  fs::path dir;
  std::vector<int> version;
};

// The directories under each of `parents` whose include/ has stddef.h,
// newest version first.
std::vector<candidate> resource_dirs(const std::vector<fs::path>& parents) {
  std::vector<candidate> found;
  std::error_code ec;
  for (const fs::path& parent : parents)
    for (const auto& entry : fs::directory_iterator(parent, ec))
      if (fs::exists(entry.path() / "include" / "stddef.h", ec)) found.push_back({entry.path(), version_numbers(entry.path().filename().string())});
  std::stable_sort(found.begin(), found.end(), [](const candidate& a, const candidate& b) { return a.version > b.version; });
  return found;
}

std::vector<fs::path> clang_parents() {
  std::vector<fs::path> parents{"/usr/lib/clang", "/usr/lib64/clang", "/usr/local/lib/clang"};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib", ec))  // Debian's /usr/lib/llvm-N/lib/clang
    if (entry.path().filename().string().starts_with("llvm")) parents.push_back(entry.path() / "lib" / "clang");
  return parents;
}

std::vector<fs::path> gcc_parents() {
  std::vector<fs::path> parents;
  std::error_code ec;
  for (const fs::path root : {"/usr/lib/gcc", "/usr/lib64/gcc"})  // /usr/lib/gcc/<target>/<version>
    for (const auto& entry : fs::directory_iterator(root, ec)) parents.push_back(entry.path());
  return parents;
}

// Whether a parse with `arguments` finds the builtin headers.
bool finds_builtin_headers(const libclang_api& clang, const std::vector<std::string>& arguments) {
  static constexpr char probe[] = "#include <stddef.h>\n#include <stdarg.h>\n";
  std::vector<const char*> argv{"-x", "c++"};
  for (const auto& a : arguments) argv.push_back(a.c_str());
  CXUnsavedFile unsaved{"/lockstep-region-loops/builtin-headers.cpp", probe, sizeof probe - 1};
  CXIndex index = clang.new_index();
  CXTranslationUnit tu = nullptr;
  bool found =
      clang.clang_parseTranslationUnit2(index, unsaved.Filename, argv.data(), int(argv.size()), &unsaved, 1, 0, &tu) == CXError_Success && tu;
  for (unsigned i = 0; found && i < clang.clang_getNumDiagnostics(tu); ++i) {
    CXDiagnostic d = clang.clang_getDiagnostic(tu, i);
    found = clang.clang_getDiagnosticSeverity(d) < CXDiagnostic_Error;
    clang.clang_disposeDiagnostic(d);
  }
  if (tu) clang.clang_disposeTranslationUnit(tu);
  clang.clang_disposeIndex(index);
  return found;
}

}  // namespace

builtin_headers find_builtin_headers(const libclang_api& clang) {
  if (finds_builtin_headers(clang, {})) return {};
  const std::vector<int> version = version_numbers(clang.string(clang.clang_getClangVersion()));
  const int major = version.empty() ? 0 : version[0];
  const std::vector<candidate> clangs = resource_dirs(clang_parents());
  std::vector<candidate> order;
  for (const candidate& c : clangs)
    if (!c.version.empty() && c.version[0] == major) order.push_back(c);
  for (const candidate& c : resource_dirs(gcc_parents())) order.push_back(c);
  for (const candidate& c : clangs)
    if (c.version.empty() || c.version[0] != major) order.push_back(c);
  for (const candidate& c : order) {
    std::vector<std::string> arguments{"-resource-dir", c.dir.string()};
    if (finds_builtin_headers(clang, arguments)) return {arguments, ""};
  }
  return {{}, "finds no builtin headers (stddef.h: it was installed without its resource directory), and no Clang or GCC here provides them"};
}

}  // namespace lockstep::emu::region_loops
