#include "toolchain/host_compiler.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "toolchain/hash.h"
#include "toolchain/process.h"

namespace lockstep::toolchain {
namespace {

namespace fs = std::filesystem;

// A fresh private directory, removed with everything in it.
class temporary_directory {
 public:
  temporary_directory() {
    std::string pattern = (fs::temp_directory_path() / "lockstep-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw std::system_error(errno, std::generic_category(),
                              "cannot create a temporary directory " + pattern + " (set TMPDIR to a writable directory)");
    path_ = pattern;
  }
  temporary_directory(const temporary_directory&) = delete;
  temporary_directory& operator=(const temporary_directory&) = delete;
  ~temporary_directory() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

bool is_executable_file(const fs::path& path) {
  std::error_code ignored;
  return fs::is_regular_file(path, ignored) && ::access(path.c_str(), X_OK) == 0;
}

// `name` itself when it holds a '/', else the first executable of that name
// in PATH's directories (an empty one meaning the current directory).
std::optional<fs::path> find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return is_executable_file(name) ? std::optional<fs::path>(name) : std::nullopt;
  const std::string search_path = environment("PATH");
  for (std::size_t begin = 0; begin <= search_path.size();) {
    const std::size_t end = std::min(search_path.find(':', begin), search_path.size());
    const fs::path candidate = fs::path(begin == end ? "." : search_path.substr(begin, end - begin)) / name;
    if (is_executable_file(candidate)) return candidate;
    begin = end + 1;
  }
  return std::nullopt;
}

// The compiler at `path` if it answers `--version`.
std::optional<host_compiler> identify_compiler(const fs::path& path) {
  process_result version;
  try {
    version = run_process({path.string(), "--version"});
  } catch (const std::system_error&) {
    return std::nullopt;
  }
  if (version.exit_code != 0) return std::nullopt;
  std::error_code ignored;
  const fs::path resolved = fs::canonical(path, ignored);  // /usr/bin/c++ -> /usr/bin/g++-12
  return host_compiler{path.string(), (resolved.empty() ? path : resolved).string() + " " + version.output.substr(0, version.output.find('\n'))};
}

host_compiler locate_host_compiler() {
  if (const std::string requested = environment("CXX"); !requested.empty()) {
    if (const auto path = find_program(requested))
      if (auto compiler = identify_compiler(*path)) return *compiler;
    throw compiler_not_found("CXX is set to '" + requested +
                             "', which is not a working C++ compiler: set CXX to a compiler's path or name (no arguments), or unset it");
  }
  for (const char* name : {"c++", "g++", "clang++"})
    if (const auto path = find_program(name))
      if (auto compiler = identify_compiler(*path)) return *compiler;
  throw compiler_not_found("no C++ compiler found (tried c++, g++ and clang++ on PATH): install g++ (apt-get install g++) or set CXX");
}

// The file name that compiler messages should show for `source_name`.
fs::path source_file_name(const std::string& source_name) {
  const fs::path name = fs::path(source_name).filename();
  return name.empty() || name == "." || name == ".." ? fs::path("kernel.cu") : name;
}

std::string without_prefix_everywhere(std::string text, const std::string& prefix) {
  for (std::size_t at; (at = text.find(prefix)) != std::string::npos;) text.erase(at, prefix.size());
  return text;
}

// The first processor's model and features in /proc/cpuinfo ("" where it
// cannot be read): x86's "model name" and "flags", Arm's "CPU part" and "Features".
std::string cpu_description() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, description;
  while (std::getline(in, line) && !line.empty())
    for (const char* field : {"model name", "flags", "CPU implementer", "CPU part", "Features"})
      if (line.rfind(field, 0) == 0) description += line + "\n";
  return description;
}

}  // namespace

const native_target& find_native_target() {
  static const native_target target = [] {
    const host_compiler& compiler = find_host_compiler();
    native_target found{{}, hash_hex(cpu_description())};
    // GCC's tuning for CPUs with AVX-512 prefers 256-bit vectors; the
    // region loops' rows are short (16 threads of a 16x16 block), and
    // 512-bit ones ran the bench's grayscale 1.25x and the tiled dynamic
    // matmul 1.1x faster (PoCL's LLVM uses them too). Without AVX-512 the
    // flag changes nothing; compilers for other processors refuse it.
    try {
      for (const char* flag : {"-march=native", "-mprefer-vector-width=512"})
        if (run_process({compiler.path, flag, "-E", "-x", "c++", "/dev/null"}).exit_code == 0) found.flags.push_back(flag);
    } catch (const std::system_error&) {
    }
    return found;
  }();
  return target;
}

const host_compiler& find_host_compiler() {
  static const host_compiler compiler = locate_host_compiler();  // a throw leaves it to the next call
  return compiler;
}

void compile_shared_object(const std::string& source_text, const std::string& source_name, const std::vector<std::string>& flags,
                           const fs::path& output) {
  const host_compiler& compiler = find_host_compiler();
  const temporary_directory directory;
  const fs::path source_file = directory.path() / source_file_name(source_name);
  {
    std::ofstream out(source_file, std::ios::binary);
    out << source_text;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + source_file.string() + ": is the disk full?");
  }

  std::vector<std::string> argv{compiler.path};
  // Debug information names the working directory; a module built here may be
  // loaded by a process working elsewhere (the cache is shared), so it names
  // "." instead, and line reports read "kernel.cu:12" from anywhere.
  std::error_code no_cwd;
  const fs::path cwd = fs::current_path(no_cwd);
  if (!no_cwd) argv.push_back("-fdebug-prefix-map=" + cwd.string() + "=.");
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-x", "c++", source_file.string(), "-o", output.string()});
  const process_result result = run_process(argv);
  if (result.exit_code != 0)
    // #line directives name the user's file in most messages; the rest
    // ("In file included from ...") would show the temporary directory.
    throw compile_failure("the host compiler could not compile " + source_name,
                          without_prefix_everywhere(result.output, directory.path().string() + "/"));
}

}  // namespace lockstep::toolchain
