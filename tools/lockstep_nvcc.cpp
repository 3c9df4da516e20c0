// lockstep-nvcc: `lockstep nvcc`, `lockstep run` and `lockstep check`.
//
//   lockstep-nvcc [nvcc options] a.cu b.cpp ...    builds as nvcc does, for the emulator
//   lockstep-nvcc run [nvcc options] prog.cu ... [--] [program arguments]
//                                                  builds (cached) and runs
//   lockstep-nvcc check [--checks LIST] [--keep] [nvcc options] prog.cu ... [--] [program arguments]
//                                                  builds for check mode and runs with the checks on
//
// See tools/driver/program_build.h for how a CUDA program becomes a host program.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "driver/nvcc_command.h"
#include "driver/program_build.h"
#include "host_build/flags.h"
#include "host_build/region_loops_build.h"
#include "jit/cache.h"
#include "toolchain/process.h"

namespace fs = std::filesystem;
using namespace lockstep::driver;

namespace {

constexpr const char* usage_text =
    "usage: lockstep nvcc [nvcc options] FILES...            build as nvcc does, for the emulator\n"
    "       lockstep run [nvcc options] FILES... [--] [ARGS]  build (cached) and run\n"
    "       lockstep check [--checks LIST] [--keep] [nvcc options] FILES... [--] [ARGS]\n"
    "                                                         build for check mode and run with the checks on\n"
    "  FILES: .cu (rewritten for the emulator), .cpp/.c (compiled as they are), .o/.a/.so;\n"
    "  options nvcc takes: -o -c -E -I -isystem -D -U -include -L -l -std -O -g -Xcompiler -Xlinker -x -ccbin -shared --run;\n"
    "  -fatbin, -cubin, -ptx: a module of the kernels for the driver API's cuModuleLoad (a shared object on the emulator);\n"
    "  GPU-only options (-arch, -gencode, -G, -lineinfo, --use_fast_math, ...) are accepted and ignored.\n";

// A fresh private folder for intermediate files, removed afterwards unless kept.
class work_folder {
 public:
  explicit work_folder(bool keep) : keep_(keep) {
    std::string pattern = (fs::temp_directory_path() / "lockstep-nvcc-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create a folder in " + fs::temp_directory_path().string() + " (set TMPDIR)");
    path_ = pattern;
  }
  ~work_folder() {
    std::error_code ignored;
    if (keep_)
      std::cerr << "lockstep: the build folder is " << path_ << "\n";
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

void note_ignored(const nvcc_command& command) {
  if (command.ignored.empty()) return;
  std::string list;
  for (const std::string& o : command.ignored) list += (list.empty() ? "" : ", ") + o;
  std::cerr << "lockstep nvcc: note: ignoring GPU-only option" << (command.ignored.size() > 1 ? "s " : " ") << list
            << " (the emulator generates no GPU code)\n";
}

int run_program(const fs::path& program, const std::vector<std::string>& arguments) {
  std::vector<std::string> argv{program.string()};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  // Not through run_process: the program keeps the terminal (stdin, colours, Ctrl-C).
  std::cout.flush();
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("cannot start " + program.string());
  if (child == 0) {
    std::vector<char*> raw;
    for (std::string& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    ::execv(raw[0], raw.data());
    std::perror(("lockstep: cannot run " + program.string()).c_str());
    std::_Exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// lockstep nvcc ...
int build_only(const nvcc_command& command) {
  note_ignored(command);
  const installation where = find_installation();
  const work_folder work(false);
  const build_options options{.checked = false, .work_dir = work.path()};
  const std::vector<prepared_source> sources = prepare_sources(command, where, options);
  if (command.preprocess_only) {
    for (const prepared_source& s : sources) {
      if (command.output.empty())
        std::cout << s.text;
      else
        fs::copy_file(s.compiled_file, command.output, fs::copy_options::overwrite_existing);
    }
    return 0;
  }
  const fs::path output = default_output(command);
  compile_and_link(command, sources, where, options, output);
  if (command.run_after_build) return run_program(fs::absolute(output), command.run_arguments);
  return 0;
}

// lockstep run ...: the program is cached under the rewritten translation
// units, the command and the compiler, so an unchanged program starts at once.
int build_and_run(const nvcc_command& command) {
  note_ignored(command);
  const installation where = find_installation();
  const work_folder work(false);
  const build_options options{.checked = false, .work_dir = work.path()};
  const std::vector<prepared_source> sources = prepare_sources(command, where, options);
  // (The processor too: the kernels are built for it, as the JIT's.)
  std::string key =
      "lockstep run\n" + lockstep::host_build::host_key() + "\n" + where.include_dir.string() + "\n" + where.library_dir.string() + "\n";
  bool cacheable = true;
  for (const std::string& f : command.compiler_flags) key += f + "\n";
  for (const std::string& f : command.linker_flags) key += f + "\n";
  for (const prepared_source& s : sources) {
    if (!s.source.cuda) cacheable = false;  // its includes are not in the key
    key += "source " + s.source.path.string() + "\n" + s.text + "\n";
    if (!s.split_file.empty()) key += lockstep::host_build::region_loops_key() + "\n";
  }
  if (!command.link_inputs.empty()) cacheable = false;
  fs::path program = work.path() / "program";
  if (cacheable) {
    const lockstep::jit::cached_artifact entry = lockstep::jit::cache_lookup_or_build(
        key, ".program", [&](const fs::path& path) { compile_and_link(command, sources, where, options, path); });
    // The checked bytes, made executable in the private work folder.
    std::ofstream(program, std::ios::binary) << entry.contents;
    fs::permissions(program, fs::perms::owner_all, fs::perm_options::replace);
  } else {
    compile_and_link(command, sources, where, options, program);
  }
  return run_program(program, command.run_arguments);
}

// lockstep check ...
int build_and_check(const nvcc_command& command, const std::string& checks, bool keep) {
  note_ignored(command);
  const installation where = find_installation();
  const work_folder work(keep);
  const build_options options{.checked = true, .work_dir = work.path()};
  const std::vector<prepared_source> sources = prepare_sources(command, where, options);
  const fs::path program = work.path() / "program";
  compile_and_link(command, sources, where, options, program);

  const fs::path findings = work.path() / "findings.txt";
  ::setenv("LOCKSTEP_CHECK", checks.c_str(), 1);
  ::setenv("LOCKSTEP_CHECK_REPORT", findings.c_str(), 1);
  std::vector<std::string> argv{program.string()};
  argv.insert(argv.end(), command.run_arguments.begin(), command.run_arguments.end());
  const lockstep::toolchain::process_result result = lockstep::toolchain::run_process(argv);
  std::cout << result.output << std::flush;

  const std::string name = command.sources.empty() ? "program" : command.sources[0].path.filename().string();
  const std::string found = fs::exists(findings) ? read_file(findings) : "";
  if (!found.empty() && result.output.find(found.substr(0, found.find('\n'))) == std::string::npos)
    std::cout << found;  // the program caught the check_error without printing it
  if (result.exit_code != 0) {
    std::cerr << "lockstep check: " << name << " exited with status " << result.exit_code << (found.empty() ? "" : " after findings") << "\n";
    return result.exit_code;
  }
  if (!found.empty()) {
    std::cerr << "lockstep check: " << name << " had findings (see above)\n";
    return 1;
  }
  std::cerr << "lockstep check: " << name << ": no findings\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> arguments(argv + 1, argv + argc);
  std::string mode = "nvcc";
  if (!arguments.empty() && (arguments[0] == "run" || arguments[0] == "check" || arguments[0] == "nvcc")) {
    mode = arguments[0];
    arguments.erase(arguments.begin());
  }
  try {
    std::string checks = "1";
    bool keep = false;
    if (mode == "check")
      while (!arguments.empty() && (arguments[0] == "--checks" || arguments[0] == "--keep")) {
        if (arguments[0] == "--keep") {
          keep = true;
          arguments.erase(arguments.begin());
          continue;
        }
        if (arguments.size() < 2) throw usage_error("--checks needs a value: 1 (all) or a comma list of memcheck, racecheck, synccheck, initcheck");
        checks = arguments[1];
        arguments.erase(arguments.begin(), arguments.begin() + 2);
      }
    if (arguments.empty() || arguments[0] == "-h" || arguments[0] == "--help") {
      std::cerr << usage_text;
      return arguments.empty() ? 2 : 0;
    }
    const nvcc_command command = parse_nvcc_command(arguments, mode != "nvcc");
    if (command.sources.empty() && command.link_inputs.empty()) throw usage_error("no input files");
    if (mode == "run") return build_and_run(command);
    if (mode == "check") return build_and_check(command, checks, keep);
    return build_only(command);
  } catch (const usage_error& e) {
    std::cerr << "lockstep " << mode << ": " << e.what() << "\n" << usage_text;
    return 2;
  } catch (const build_failure& e) {
    std::cerr << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "lockstep " << mode << ": " << e.what() << "\n";
    return 1;
  }
}
