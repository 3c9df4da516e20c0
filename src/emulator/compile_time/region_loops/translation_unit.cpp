// The translation unit: its functions split callees first, the edits
// applied, and the entry points of region_loops.h.
#include <signal.h>

#include <mutex>

#include "compiler.h"

namespace lockstep::emu::region_loops::compiler {

void translation_unit_splitter::run(split_result& result) {
  collect_functions(clang_.clang_getTranslationUnitCursor(tu_));
  // Callees before callers: a device function with barriers gets a block
  // variant first, which a caller then calls once for the whole block.
  std::vector<source_edit> edits;
  std::vector<CXCursor> pending = called_from_kernels();
  for (bool progress = true; progress && !pending.empty();) {
    progress = false;
    std::vector<CXCursor> postponed;
    for (const CXCursor& function : pending) {
      const std::string name = clang_.string(clang_.clang_getCursorSpelling(function));
      const std::string usr = clang_.string(clang_.clang_getCursorUSR(function));
      try {
        // A variant of a template would stand for its explicit
        // specializations too (`warpReduceSum<int>` by __reduce_add_sync
        // beside the template's shuffles), and one of a specialization for
        // the template: both stay on fibers.
        if (specialized_.count(variant_usr(function))) throw declined{"a function template with explicit specializations"};
        std::vector<source_edit> function_edits = split_function(function);
        progress = true;
        attempted_.insert(usr);
        if (function_edits.empty()) continue;  // no barrier: a kernel runs as a bare loop already
        edits.insert(edits.end(), function_edits.begin(), function_edits.end());
        if (lanes_) {
          lanes_variants_.insert(variant_usr(function));
          if (lanes_block_) block_lanes_variants_.insert(variant_usr(function));
          continue;
        }
        variants_.insert(usr);
        if (!is_kernel(function) && !may_synchronize(function)) loop_variants_.insert(usr);
        if (is_kernel(function)) {
          result.split.push_back(name);
          record_kernel(result, function, true, "");
        }
        if (is_kernel(function) && along_x_) result.along_x.push_back(name);
      } catch (const postpone&) {
        postponed.push_back(function);
      } catch (const declined& d) {
        progress = true;
        attempted_.insert(usr);
        if (is_kernel(function)) record_kernel(result, function, false, d.why);
        result.notes.push_back(std::string(is_kernel(function) ? "kernel " : "device function ") + name + " (" +
                               where(clang_.clang_getCursorLocation(function)) + ") stays on fibers: " + d.why);
      }
    }
    pending = std::move(postponed);
    // Functions without barriers that call each other: their calls stay in regions.
    if (!progress && !pending.empty() && postpone_loop_calls_) {
      postpone_loop_calls_ = false;
      progress = true;
    }
  }
  for (const CXCursor& function : pending) {
    result.notes.push_back("kernel or device function " + clang_.string(clang_.clang_getCursorSpelling(function)) + " (" +
                           where(clang_.clang_getCursorLocation(function)) + ") stays on fibers: it calls itself through functions with barriers");
    if (is_kernel(function)) record_kernel(result, function, false, "it calls itself through functions with barriers");
  }
  std::sort(edits.begin(), edits.end(), [](const source_edit& a, const source_edit& b) { return a.begin < b.begin; });
  std::string out;
  std::size_t at = 0;
  for (const source_edit& e : edits) {
    out.append(text_, at, e.begin - at);
    out += e.text;
    at = e.end;
  }
  out.append(text_, at, std::string::npos);
  result.source = std::move(out);
}

// The decision about a kernel, as its module's record carries it (region_loops.h, kernel_decision).
void translation_unit_splitter::record_kernel(split_result& result, CXCursor kernel, bool loops, const std::string& why) const {
  const auto [file, line] = presumed(clang_.clang_getCursorLocation(kernel));
  result.kernels.push_back({clang_.string(clang_.clang_getCursorSpelling(kernel)), file, line, loops, why});
}

}  // namespace lockstep::emu::region_loops::compiler

namespace lockstep::emu::region_loops {

namespace {

struct parsed_unit {
  CXTranslationUnit tu = nullptr;
  std::string errors;  // the first error outside the system headers, or why nothing was parsed
};

// The first error outside the system headers, or the first one of the
// preprocessor anywhere, or "". A preprocessed source holds the host
// compiler's own library headers, written for it (GCC's libstdc++ uses
// builtins Clang lacks): errors there do not touch the kernels' code, whose
// own errors still count. A preprocessor's error does, wherever it stands: a
// header not found (a libclang installed without its own headers: stddef.h)
// leaves what it declares, lockstep's threadIdx among it, undeclared, and
// every thread's index would look the same to the analysis. (With
// CXTranslationUnit_KeepGoing such errors are not reported as fatal.)
std::string first_error(const libclang_api& clang, CXTranslationUnit tu) {
  std::string error;
  for (unsigned i = 0; i < clang.clang_getNumDiagnostics(tu) && error.empty(); ++i) {
    CXDiagnostic d = clang.clang_getDiagnostic(tu, i);
    const bool preprocessor = clang.string(clang.clang_getDiagnosticCategoryText(d)) == "Lexical or Preprocessor Issue";
    if (clang.clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error &&
        (preprocessor || !clang.clang_Location_isInSystemHeader(clang.clang_getDiagnosticLocation(d))))
      error = clang.string(clang.clang_formatDiagnostic(d, clang.clang_defaultDiagnosticDisplayOptions()));
    clang.clang_disposeDiagnostic(d);
  }
  return error;
}

parsed_unit parse(const libclang_api& clang, CXIndex index, const std::string& file_name, const std::string& source,
                  const std::vector<std::string>& args, unsigned options = CXTranslationUnit_KeepGoing) {
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  CXUnsavedFile unsaved{file_name.c_str(), source.c_str(), static_cast<unsigned long>(source.size())};
  parsed_unit out;
  const CXErrorCode parsed =
      clang.clang_parseTranslationUnit2(index, file_name.c_str(), argv.data(), int(argv.size()), &unsaved, 1, options, &out.tu);
  if (parsed != CXError_Success || !out.tu) {
    out.errors = "libclang could not parse it (error " + std::to_string(int(parsed)) + ")";
    return out;
  }
  out.errors = first_error(clang, out.tu);
  return out;
}

// GCC's spellings that Clang reads as something else, taken out of the parse
// only (the host compiler still sees them): GCC 13's assumption
// `__attribute__((__assume__(cond)))`, which libstdc++ 13 and CCCL write
// into every unit GCC 13 preprocesses, is Clang 18's OpenMP assumption,
// which takes a string; the parse error left every kernel on fibers.
constexpr const char* gcc_only_spellings[] = {"-D__assume__(...)="};

std::vector<std::string> clang_arguments(const libclang_api& clang, const char* language, const std::vector<std::string>& parse_flags) {
  std::vector<std::string> args{"-x", language, "-w", "-ferror-limit=0"};
  args.insert(args.end(), std::begin(gcc_only_spellings), std::end(gcc_only_spellings));
  args.insert(args.end(), clang.builtin_header_arguments.begin(), clang.builtin_header_arguments.end());
  args.insert(args.end(), parse_flags.begin(), parse_flags.end());
  return args;
}

// LLVM puts its own signal handlers in front of the process's when libclang
// first writes a file (the precompiled prelude: its files to remove on a
// signal) or recovers from a crash. Met by SIGINT or a fault, they put back
// what was there and raise the signal again: a Ctrl-C that should stop a
// spinning kernel killed the process, and a kernel's fault came back without
// its address. Every use of libclang runs inside one of these, which puts
// back each handler that changed (one use at a time: another's saved
// handlers would be LLVM's).
class signal_handlers_kept {
 public:
  signal_handlers_kept() : lock_(mutex()) {
    for (int s = 1; s < NSIG; ++s) sigaction(s, nullptr, &saved_[s]);
  }
  ~signal_handlers_kept() {
    for (int s = 1; s < NSIG; ++s) {
      struct sigaction now {};
      if (s == SIGKILL || s == SIGSTOP || sigaction(s, nullptr, &now) != 0) continue;
      if (now.sa_sigaction != saved_[s].sa_sigaction || now.sa_flags != saved_[s].sa_flags) sigaction(s, &saved_[s], nullptr);
    }
  }
  signal_handlers_kept(const signal_handlers_kept&) = delete;
  signal_handlers_kept& operator=(const signal_handlers_kept&) = delete;

 private:
  static std::recursive_mutex& mutex() {
    static std::recursive_mutex m;
    return m;
  }
  std::lock_guard<std::recursive_mutex> lock_;
  struct sigaction saved_[NSIG] {};
};

}  // namespace

bool available() {
  const signal_handlers_kept kept;
  std::string why_not;
  return load_libclang(&why_not) != nullptr;
}

std::string unavailable_reason() {
  const signal_handlers_kept kept;
  std::string why_not;
  return load_libclang(&why_not) ? "" : why_not;
}

split_result split_kernels(const std::string& source, const std::string& source_name, const std::vector<std::string>& parse_flags,
                           const std::string& precompiled_prelude) {
  const signal_handlers_kept kept;
  split_result result;
  result.source = source;
  std::string why_not;
  const libclang_api* clang = load_libclang(&why_not);
  if (!clang) {
    say_unavailable_once(why_not);
    result.notes.push_back("every kernel stays on fibers: " + why_not);
    result.unit_note = "the region-loop compiler is not available: " + why_not;
    return result;
  }
  const std::vector<std::string> args = clang_arguments(*clang, "c++", parse_flags);
  const std::string file_name = "/lockstep-region-loops/" + (source_name.empty() ? std::string("kernels.cu") : source_name) + ".cpp";
  CXIndex index = clang->new_index();
  parsed_unit unit;
  if (!precompiled_prelude.empty()) {
    std::vector<std::string> with_prelude = args;
    with_prelude.insert(with_prelude.end(), {"-include-pch", precompiled_prelude});
    unit = parse(*clang, index, file_name, source, with_prelude);
    if (!unit.errors.empty() && unit.tu) clang->clang_disposeTranslationUnit(unit.tu);
  }
  if (precompiled_prelude.empty() || !unit.errors.empty()) unit = parse(*clang, index, file_name, source, args);
  if (unit.errors.empty()) {
    compiler::translation_unit_splitter(*clang, source, unit.tu).run(result);
  } else {
    result.notes.push_back("every kernel stays on fibers: Clang does not accept the source: " + unit.errors);
    result.unit_note = "the region-loop compiler's Clang does not accept the source: " + unit.errors;
  }
  if (unit.tu) clang->clang_disposeTranslationUnit(unit.tu);
  clang->clang_disposeIndex(index);
  return result;
}

void precompile_prelude(const std::string& prelude, const std::vector<std::string>& parse_flags, const std::string& out) {
  const signal_handlers_kept kept;
  std::string why_not;
  const libclang_api* clang = load_libclang(&why_not);
  if (!clang) throw std::runtime_error(why_not);
  CXIndex index = clang->new_index();
  parsed_unit unit = parse(*clang, index, "/lockstep-region-loops/prelude.h", prelude, clang_arguments(*clang, "c++-header", parse_flags),
                           CXTranslationUnit_Incomplete | CXTranslationUnit_ForSerialization);
  std::string error = unit.errors;
  if (error.empty())
    if (const int saved = clang->clang_saveTranslationUnit(unit.tu, out.c_str(), clang->clang_defaultSaveOptions(unit.tu)); saved != CXSaveError_None)
      error = "save error " + std::to_string(saved);
  if (unit.tu) clang->clang_disposeTranslationUnit(unit.tu);
  clang->clang_disposeIndex(index);
  if (!error.empty()) throw std::runtime_error("libclang could not precompile the prelude: " + error);
}

std::string libclang_version() {
  const signal_handlers_kept kept;
  const libclang_api* clang = load_libclang(nullptr);
  return clang ? clang->string(clang->clang_getClangVersion()) : "";
}

}  // namespace lockstep::emu::region_loops
