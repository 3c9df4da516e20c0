// lockstep-check [-I DIR]... [-D NAME[=VALUE]]... [--checks LIST] [--keep] FILE.cu [ARGS...]
//
// `lockstep check`: builds FILE.cu, a single-source CUDA program with its own
// main (a test harness), for the emulator in check mode, runs it with ARGS and
// the checks on, and exits non-zero if the program failed or any kernel had
// a finding (memcheck, racecheck, synccheck, initcheck; see lockstep/emu/check.h).
//
// The CUDA files of FILE's directory and of each -I directory are rewritten
// for the host compiler first (src/emulator/host_source/host_source.h), as CMake's
// lockstep_host_include_directories does. The compiler is $CXX or c++;
// lockstep's headers and library are found through LOCKSTEP_INCLUDE_DIR and
// LOCKSTEP_LIBRARY_DIR, else the build tree this tool was built in.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "emulator/host_source/host_source.h"
#include "toolchain/host_compiler.h"
#include "toolchain/process.h"

namespace fs = std::filesystem;

namespace {

struct arguments {
  std::vector<fs::path> include_dirs;
  std::vector<std::string> defines;
  std::string checks = "1";
  bool keep = false;
  fs::path file;
  std::vector<std::string> program_args;
};

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "lockstep-check: " << problem
            << "\nusage: lockstep-check [-I DIR]... [-D NAME[=VALUE]]... [--checks LIST] [--keep] FILE.cu [ARGS...]\n"
               "  builds FILE.cu (with its own main) for the emulator in check mode and runs it with ARGS;\n"
               "  --checks: 1 (all, the default) or a comma list of memcheck, racecheck, synccheck, initcheck;\n"
               "  --keep: keep the build folder and say where it is\n";
  std::exit(2);
}

arguments parse(int argc, char** argv) {
  arguments a;
  int i = 1;
  for (; i < argc && a.file.empty(); ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* option) -> std::string {
      if (arg.size() > 2 && arg[1] != '-') return arg.substr(2);  // -Idir
      if (i + 1 >= argc) usage(std::string(option) + " needs a value");
      return argv[++i];
    };
    if (arg.rfind("-I", 0) == 0)
      a.include_dirs.push_back(fs::weakly_canonical(fs::absolute(value("-I"))));
    else if (arg.rfind("-D", 0) == 0)
      a.defines.push_back(value("-D"));
    else if (arg == "--checks")
      a.checks = value("--checks");
    else if (arg == "--keep")
      a.keep = true;
    else if (arg == "-h" || arg == "--help")
      usage("builds and runs a CUDA program in check mode");
    else if (!arg.empty() && arg[0] == '-')
      usage("unknown option " + arg);
    else
      a.file = fs::weakly_canonical(fs::absolute(arg));
  }
  if (a.file.empty()) usage("no FILE.cu given");
  if (!fs::is_regular_file(a.file)) usage("cannot read " + a.file.string());
  a.program_args.assign(argv + i, argv + argc);
  return a;
}

std::string environment_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// A fresh private folder, removed afterwards unless kept.
class build_folder {
 public:
  explicit build_folder(bool keep) : keep_(keep) {
    std::string pattern = (fs::temp_directory_path() / "lockstep-check-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create a folder in " + fs::temp_directory_path().string() + " (set TMPDIR)");
    path_ = pattern;
  }
  ~build_folder() {
    std::error_code ignored;
    if (keep_)
      std::cerr << "lockstep-check: the build folder is " << path_ << "\n";
    else
      fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  bool keep_;
  fs::path path_;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Copies every .cu/.cuh of `dir` into `mirror`, rewritten for the host compiler.
void mirror_cuda_files(const fs::path& dir, const fs::path& mirror) {
  fs::create_directories(mirror);
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cu" && ext != ".cuh")) continue;
    std::ofstream out(mirror / entry.path().filename(), std::ios::binary);
    // #line keeps the original file's name in messages and debug info.
    out << "#line 1 \"" << entry.path().string() << "\"\n" << lockstep::emu::host_source(read_file(entry.path()));
    if (!out) throw std::runtime_error("cannot write into " + mirror.string() + ": is the disk full?");
  }
}

void run_or_fail(const std::vector<std::string>& argv, const std::string& step) {
  const lockstep::toolchain::process_result r = lockstep::toolchain::run_process(argv);
  if (r.exit_code != 0) {
    std::cerr << r.output << "lockstep-check: " << step << " failed (exit status " << r.exit_code << ")\n";
    std::exit(r.exit_code);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const arguments args = parse(argc, argv);
  try {
    const build_folder build(args.keep);
    const fs::path include_dir = environment_or("LOCKSTEP_INCLUDE_DIR", LOCKSTEP_SOURCE_INCLUDE_DIR);
    const fs::path library_dir = environment_or("LOCKSTEP_LIBRARY_DIR", LOCKSTEP_LIBRARY_DIR);

    // Rewritten copies first on the include path, then the originals.
    std::vector<std::string> compile{lockstep::toolchain::find_host_compiler().path, "-std=c++20", "-O1"};
    for (const std::string& flag : split(LOCKSTEP_CHECK_FLAGS)) compile.push_back(flag);
    std::vector<fs::path> dirs{args.file.parent_path()};
    dirs.insert(dirs.end(), args.include_dirs.begin(), args.include_dirs.end());
    for (std::size_t i = 0; i < dirs.size(); ++i) {
      const fs::path mirror = build.path() / ("include" + std::to_string(i));
      mirror_cuda_files(dirs[i], mirror);
      compile.push_back("-I" + mirror.string());
      compile.push_back("-I" + dirs[i].string());
    }
    compile.push_back("-I" + include_dir.string());
    for (const std::string& d : args.defines) compile.push_back("-D" + d);
    const fs::path object = build.path() / "program.o", program = build.path() / "program";
    const fs::path source = build.path() / "include0" / args.file.filename();
    compile.insert(compile.end(), {"-x", "c++", "-c", source.string(), "-o", object.string()});
    run_or_fail(compile, "compiling " + args.file.filename().string());
    // Linked without the sanitizers' runtimes: liblockstep answers their calls.
    run_or_fail({lockstep::toolchain::find_host_compiler().path, object.string(), "-o", program.string(), "-L" + library_dir.string(), "-llockstep",
                 "-Wl,-rpath," + library_dir.string(), "-pthread"},
                "linking");

    const fs::path findings = build.path() / "findings.txt";
    ::setenv("LOCKSTEP_CHECK", args.checks.c_str(), 1);
    ::setenv("LOCKSTEP_CHECK_REPORT", findings.c_str(), 1);
    std::vector<std::string> run{program.string()};
    run.insert(run.end(), args.program_args.begin(), args.program_args.end());
    const lockstep::toolchain::process_result result = lockstep::toolchain::run_process(run);
    std::cout << result.output << std::flush;

    const std::string found = fs::exists(findings) ? read_file(findings) : "";
    if (!found.empty() && result.output.find(found.substr(0, found.find('\n'))) == std::string::npos)
      std::cout << found;  // the program caught the check_error without printing it
    if (result.exit_code != 0) {
      std::cerr << "lockstep-check: " << args.file.filename().string() << " exited with status " << result.exit_code
                << (found.empty() ? "" : " after findings") << "\n";
      return result.exit_code;
    }
    if (!found.empty()) {
      std::cerr << "lockstep-check: " << args.file.filename().string() << " had findings (see above)\n";
      return 1;
    }
    std::cerr << "lockstep-check: " << args.file.filename().string() << ": no findings\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "lockstep-check: " << e.what() << "\n";
    return 2;
  }
}
