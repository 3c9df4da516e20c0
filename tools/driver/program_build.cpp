#include "program_build.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "emulator/compile_time/host_source/host_source.h"
#include "emulator/compile_time/region_loops/region_loops.h"
#include "host_build/engine_record.h"
#include "host_build/flags.h"
#include "host_build/headers.h"
#include "host_build/region_loops_build.h"
#include "toolchain/host_compiler.h"
#include "toolchain/process.h"
#include "unsupported_features.h"

namespace lockstep::driver {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw build_failure("cannot write " + path.string() + ": is the disk full?");
}

// The lines of a preprocessed source that come from files other than system
// headers (GCC's line markers flag those with 3): the program's own code.
std::string outside_system_headers(const std::string& preprocessed) {
  std::string own;
  bool system = false;
  for (std::size_t at = 0; at < preprocessed.size();) {
    std::size_t end = preprocessed.find('\n', at);
    if (end == std::string::npos) end = preprocessed.size();
    const std::string_view line(preprocessed.data() + at, end - at);
    if (line.size() > 2 && line[0] == '#' && line[1] == ' ' && std::isdigit(static_cast<unsigned char>(line[2]))) {
      const std::size_t name_end = line.rfind('"');
      system = name_end != std::string_view::npos && line.substr(name_end + 1).find(" 3") != std::string_view::npos;
    } else if (!system) {
      own.append(line).push_back('\n');
    }
    at = end + 1;
  }
  return own;
}

// A dependency file (-MD -MF) made from the device-pass copy names the copy:
// it should name the program's file.
void name_the_written_file_in_depfile(const nvcc_command& command, const fs::path& copy, const fs::path& original) {
  const auto& flags = command.preprocessor_flags;
  for (std::size_t f = 0; f + 1 < flags.size(); ++f) {
    if (flags[f] != "-MF" || !fs::is_regular_file(flags[f + 1])) continue;
    std::string text = read_file(flags[f + 1]);
    const std::string from = copy.string(), to = original.string();
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
    write_file(flags[f + 1], text);
  }
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

std::string compiler_of(const nvcc_command& command) {
  return command.host_compiler.empty() ? toolchain::find_host_compiler().path : command.host_compiler;
}

// lockstep's headers need C++20; an older standard asked for is raised to it
// (code written for C++17 compiles as C++20 but for a few corner cases).
std::string standard_flag(const nvcc_command& command) {
  return "-std=" + host_build::cxx20_dialect(command.language_standard, host_build::older_dialect::plain_cxx20);
}

// A program of an older standard first sees what keeps its names its own under C++20.
std::vector<std::string> older_standard_includes(const nvcc_command& command) {
  if (standard_flag(command) == "-std=" + command.language_standard) return {};
  return {"-include", "lockstep/emu/cxx17_names.h"};
}

using host_build::has_flag_starting;

// How a program's sources come to the region-loop split (host_build::split_policy):
// preprocessed program text has no precompiled prelude, so only a source whose
// own lines name a barrier is parsed; the program is built once for either
// engine, which its run chooses (the block runner declines the loops then).
constexpr host_build::split_policy driver_split_policy{.parse_only_if_mentions_barrier = true, .honour_engine_option = false};

// The compiler proper's flags: the user's, plus the emulator's defaults where
// the user chose none (the kernels are host code here, and nvcc optimises
// device code by default, ptxas at -O3).
std::vector<std::string> code_generation_flags(const nvcc_command& command) {
  std::vector<std::string> flags = command.compiler_flags;
  for (const std::string& f : host_build::optimisation_defaults(command.compiler_flags, command.shared_library)) flags.push_back(f);
  flags.insert(flags.end(), std::begin(toolchain::kernel_code_flags), std::end(toolchain::kernel_code_flags));
  // Thrust's CUDA backend is CUB's device code for the GPU, which the emulator
  // cannot build; its C++ backend runs the same algorithms over device memory,
  // which is host memory here. In every file, so that the program's types agree.
  if (!has_flag_starting(command.preprocessor_flags, "-DTHRUST_DEVICE_SYSTEM")) flags.push_back("-DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP");
  return flags;
}

// NVIDIA's libcu++ (`<cuda/std/...>`), from a CUDA toolkit's CCCL folder when
// there is one: only that folder, so the toolkit's own runtime headers stay out.
// The installed CUDA toolkit ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda), or "" if none.
std::string toolkit_root() {
  for (const std::string& root : {environment("CUDA_HOME"), environment("CUDA_PATH"), std::string("/usr/local/cuda")})
    if (!root.empty() && fs::is_directory(fs::path(root) / "include" / "cccl" / "cuda")) return root;
  return "";
}

void run_step(const std::vector<std::string>& argv, const std::string& what) {
  const toolchain::process_result r = toolchain::run_process(argv);
  if (r.exit_code != 0)
    throw build_failure(r.output + explain_unsupported(r.output) + "lockstep nvcc: " + what + " failed (exit status " + std::to_string(r.exit_code) +
                        ")");
  if (!r.output.empty()) std::cerr << r.output;  // warnings
}

// Libraries of CUDA's that the emulator provides or needs no counterpart of.
std::vector<std::string> emulator_libraries(const nvcc_command& command, const installation& where) {
  std::vector<std::string> flags;
  bool cublas = false, nccl = false;
  for (const std::string& flag : command.linker_flags) {
    if (flag == "-lcublas" || flag == "-lcublasLt" || flag == "-lcublas_static" || flag == "-lcublasLt_static") {
      cublas = true;
      continue;
    }
    if (flag == "-lnccl" || flag == "-lnccl_static") {
      nccl = true;
      continue;
    }
    // The runtime, the driver API, NVRTC and NVTX are in liblockstep (or need nothing).
    if (flag == "-lcudart" || flag == "-lcudart_static" || flag == "-lcudadevrt" || flag == "-lcuda" || flag == "-lnvrtc" ||
        flag == "-lnvrtc_static" || flag == "-lnvrtc-builtins" || flag == "-lnvToolsExt" || flag == "-lculibos")
      continue;
    flags.push_back(flag);
  }
  flags.push_back("-L" + where.library_dir.string());
  // The toolkit's host libraries a program names that lockstep has no counterpart of (cuRAND's host side).
  if (const std::string root = toolkit_root(); !root.empty()) flags.insert(flags.end(), {"-L" + root + "/lib64", "-Wl,-rpath," + root + "/lib64"});
  if (cublas) flags.push_back("-llockstep_cublas");
  if (nccl) flags.push_back("-llockstep_nccl");
  flags.insert(flags.end(), {"-llockstep", "-Wl,-rpath," + where.library_dir.string(), "-pthread"});
  return flags;
}

std::string link_hint(const std::string& output) {
  if (output.find("undefined reference to `cu") != std::string::npos && output.find("undefined reference to `cublas") == std::string::npos)
    return "lockstep nvcc: the program calls a function of CUDA's driver API that the emulator does not provide; it provides "
           "devices, contexts, modules, launches, memory, streams and events (lockstep/emu/driver_api.h)\n";
  if (output.find("undefined reference to `cublas") != std::string::npos)
    return "lockstep nvcc: link with -lcublas (or -lcublasLt) for the emulator's cuBLAS\n";
  if (output.find("undefined reference to `nccl") != std::string::npos) return "lockstep nvcc: link with -lnccl for the emulator's NCCL\n";
  if (output.find("cannot find -lcu") != std::string::npos)
    return "lockstep nvcc: that CUDA library is not emulated; the emulator provides the runtime API, cooperative groups, cuBLAS and NCCL\n";
  return "";
}

// Compiles one prepared source to `object` with `argv` (the compiler and its
// flags): its region loops where it has them, as written where it has none or
// the host compiler refuses them (host_build::build_split_else_as_written).
void compile_object(const std::vector<std::string>& argv, const prepared_source& s, const fs::path& object) {
  auto compile = [&](const fs::path& file) {
    std::vector<std::string> step = argv;
    step.insert(step.end(), {"-c", file.string(), "-o", object.string()});
    return step;
  };
  auto as_written = [&] { run_step(compile(s.compiled_file), "compiling " + s.source.path.string()); };
  if (s.split_file.empty()) return as_written();
  auto refused = [&] { run_step(compile(s.refused_file), "compiling " + s.source.path.string()); };
  const auto build_split = [&]() -> std::optional<std::string> {
    const toolchain::process_result r = toolchain::run_process(compile(s.split_file));
    if (r.exit_code != 0) return r.output;
    if (!r.output.empty()) std::cerr << r.output;  // warnings
    return std::nullopt;
  };
  if (const std::optional<std::string> refusal = host_build::build_split_else_as_written(s.source.path.string(), build_split, refused))
    throw build_failure(*refusal + "lockstep nvcc: the host compiler refused the region loops of " + s.source.path.string());
}

}  // namespace

installation find_installation() {
  const std::string include = environment(host_build::include_dir_variable), library = environment("LOCKSTEP_LIBRARY_DIR");
  if (!include.empty() && !library.empty()) return {include, library};
  std::error_code ignored;
  const fs::path here = fs::read_symlink("/proc/self/exe", ignored).parent_path();
  if (host_build::holds_lockstep_headers(here / "include")) return {here / "include", here};
  return {LOCKSTEP_SOURCE_INCLUDE_DIR, LOCKSTEP_LIBRARY_DIR};
}

std::filesystem::path default_output(const nvcc_command& command) {
  if (!command.output.empty()) return command.output;
  if (command.compile_only && command.sources.size() == 1) return command.sources[0].path.filename().replace_extension(".o");
  if (!command.module_extension.empty() && command.sources.size() == 1)
    return command.sources[0].path.filename().replace_extension(command.module_extension);
  return "a.out";
}

std::vector<prepared_source> prepare_sources(const nvcc_command& command, const installation& where, const build_options& options) {
  const std::string compiler = compiler_of(command);
  std::vector<prepared_source> prepared;
  for (std::size_t i = 0; i < command.sources.size(); ++i) {
    const source_file& source = command.sources[i];
    if (!fs::is_regular_file(source.path)) throw build_failure("lockstep nvcc: cannot read " + source.path.string());
    if (!source.cuda) {
      prepared.push_back({source, source.path, ""});
      continue;
    }
    const fs::path preprocessed = options.work_dir / (std::to_string(i) + "-" + source.path.stem().string() + ".ii");
    // Device code under `#if __CUDA_ARCH__`: preprocessed from a copy whose
    // line marker names the file, its folder searched first for "includes".
    fs::path written = source.path;
    const std::string original = read_file(source.path);
    if (const std::string device_pass = emu::device_arch_conditionals(original); device_pass != original) {
      written = options.work_dir / (std::to_string(i) + "-" + source.path.filename().string());
      write_file(written, "#line 1 \"" + fs::absolute(source.path).string() + "\"\n" + device_pass);
    }
    // lockstep's CUDA headers first (host_build::cuda_headers_first); lockstep's
    // own as system headers (no warnings from them in -Wall builds).
    std::vector<std::string> argv{compiler,
                                  "-E",
                                  "-x",
                                  "c++",
                                  standard_flag(command),
                                  "-DLOCKSTEP_KEEP_KEYWORDS",
                                  "-DLOCKSTEP_WAITS_SPELLED",
                                  host_build::cuda_headers_first(where.include_dir)};
    const std::vector<std::string> older = older_standard_includes(command);
    argv.insert(argv.end(), older.begin(), older.end());
    if (written != source.path) argv.push_back("-iquote" + fs::absolute(source.path).parent_path().string());
    argv.insert(argv.end(), command.preprocessor_flags.begin(), command.preprocessor_flags.end());
    argv.insert(argv.end(), {"-isystem", where.include_dir.string()});
    // The toolkit's libcu++ (CCCL), and, last of all, its headers that lockstep
    // has none of and that compile for the host (cuRAND's device API).
    if (const std::string root = toolkit_root(); !root.empty())
      argv.insert(argv.end(), {"-isystem", root + "/include/cccl", "-idirafter", root + "/include"});
    const std::vector<std::string> flags = code_generation_flags(command);  // -fopenmp, -O define macros
    argv.insert(argv.end(), flags.begin(), flags.end());
    // So do check mode's: -fsanitize=thread defines __SANITIZE_THREAD__, under
    // which lockstep's atomics on a block's own shared memory stay atomics that
    // the race checker sees (preprocessed without it, they were plain updates,
    // each reported as a race with the other threads' atomics).
    if (options.checked)
      for (const std::string& f : host_build::check_flags()) argv.push_back(f);
    argv.insert(argv.end(), {"-include", "lockstep/emu/program.h"});
    auto preprocess = [&](std::vector<std::string> included) {
      std::vector<std::string> step = argv;
      step.insert(step.end(), included.begin(), included.end());
      step.insert(step.end(), {written.string(), "-o", preprocessed.string()});
      run_step(step, "preprocessing " + source.path.string());
    };
    preprocess({});
    // Thrust's CUDA backend brings in most of Thrust's algorithm headers with
    // any one of them (CUDA 13's, `nvcc -E` of <thrust/sort.h>), and programs
    // rely on it: thrust::system_error caught without <thrust/system_error.h>,
    // thrust::sequence called with only <thrust/sort.h> (smokeParticles). Its
    // C++ backend's do not, so a Thrust program gets those headers too.
    if (read_file(preprocessed).find("namespace thrust") != std::string::npos) {
      std::vector<std::string> included;
      for (const char* header : {"system_error", "copy",      "extrema",          "fill",
                                 "find",         "for_each",  "functional",       "generate",
                                 "merge",        "reduce",    "replace",          "reverse",
                                 "scan",         "scatter",   "sequence",         "sort",
                                 "tabulate",     "transform", "transform_reduce", "uninitialized_fill"})
        included.insert(included.end(), {"-include", std::string("thrust/") + header + ".h"});
      preprocess(included);
    }
    if (written != source.path) name_the_written_file_in_depfile(command, written, source.path);
    std::string text = emu::host_source(read_file(preprocessed), emu::source_form::preprocessed);
    if (const std::string ptx = inline_ptx_uses(text); !ptx.empty())
      throw build_failure(ptx + "lockstep nvcc: compiling " + source.path.string() + " failed");
    const fs::path rewritten = options.work_dir / (std::to_string(i) + "-" + source.path.stem().string() + ".host.ii");
    fs::path split_file, refused_file;
    // With -E the rewritten text is the result: nothing to split, no record.
    // Otherwise every source carries the record of how its kernels run
    // (host_build/engine_record.h), which the runner reads.
    std::string record;
    if (!command.preprocess_only) {
      const std::string why_not =
          host_build::why_not_split({.checked = options.checked, .own_text = outside_system_headers(text)}, driver_split_policy);
      if (!why_not.empty()) {
        record = host_build::engine_record_source(host_build::record_of_unsplit(why_not), source.path.string());
      } else {
        const auto result = emu::region_loops::split_kernels(text, source.path.string(), {standard_flag(command)});
        emu::region_loops::log(source.path.string(), result);
        record = host_build::engine_record_source(host_build::record_of_split(result), source.path.string());
        if (!result.split.empty()) {
          const std::string stem = std::to_string(i) + "-" + source.path.stem().string();
          split_file = options.work_dir / (stem + ".split.ii");
          write_file(split_file, result.source + record);
          refused_file = options.work_dir / (stem + ".refused.ii");
          write_file(refused_file, text + host_build::engine_record_source(host_build::record_of_refused_split(result), source.path.string()));
        }
      }
    }
    text += record;
    write_file(rewritten, text);
    prepared.push_back({source, rewritten, std::move(text), std::move(split_file), std::move(refused_file)});
  }
  return prepared;
}

void compile_and_link(const nvcc_command& command, const std::vector<prepared_source>& sources, const installation& where,
                      const build_options& options, const std::filesystem::path& output) {
  const std::string compiler = compiler_of(command);
  std::vector<std::string> objects;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const prepared_source& s = sources[i];
    fs::path object;
    if (command.compile_only)
      object = sources.size() == 1 ? output : s.source.path.filename().replace_extension(".o");
    else
      object = options.work_dir / (std::to_string(i) + "-" + s.source.path.stem().string() + ".o");
    std::vector<std::string> argv{compiler};
    if (s.source.cuda) {
      argv.insert(argv.end(), {"-x", "c++-cpp-output", standard_flag(command)});
    } else {
      const bool c_source = s.source.path.extension() == ".c";
      // A .c file is C, as nvcc hands it to the host's C compiler (g++ alone would read it as C++).
      if (c_source)
        argv.insert(argv.end(), {"-x", "c"});
      else
        argv.push_back(standard_flag(command));
      argv.push_back(host_build::cuda_headers_first(where.include_dir));
      if (!c_source) {
        const std::vector<std::string> older = older_standard_includes(command);
        argv.insert(argv.end(), older.begin(), older.end());
        argv.push_back("-DLOCKSTEP_HOST_ONLY_FILE");
      }
      argv.insert(argv.end(), command.preprocessor_flags.begin(), command.preprocessor_flags.end());
      argv.insert(argv.end(), {"-isystem", where.include_dir.string()});
    }
    const std::vector<std::string> flags = code_generation_flags(command);
    argv.insert(argv.end(), flags.begin(), flags.end());
    // CUDA sources for this machine's CPU, as the JIT builds kernels.
    if (s.source.cuda)
      for (const std::string& f : host_build::native_target_flags(host_build::names_a_target(flags))) argv.push_back(f);
    if (options.checked && s.source.cuda)
      for (const std::string& f : host_build::check_flags()) argv.push_back(f);
    compile_object(argv, s, object);
    objects.push_back(object.string());
  }
  if (command.compile_only) return;

  std::vector<std::string> argv{compiler};
  argv.insert(argv.end(), objects.begin(), objects.end());
  argv.insert(argv.end(), command.link_inputs.begin(), command.link_inputs.end());
  if (command.shared_library) argv.push_back("-shared");
  for (const std::string& flag : command.compiler_flags)
    if (starts_with(flag, "-f") || flag == "-pthread") argv.push_back(flag);  // -fopenmp, -fsanitize=...: the link needs them too
  argv.insert(argv.end(), {"-o", output.string()});
  const std::vector<std::string> libraries = emulator_libraries(command, where);
  argv.insert(argv.end(), libraries.begin(), libraries.end());
  const toolchain::process_result r = toolchain::run_process(argv);
  if (r.exit_code != 0)
    throw build_failure(r.output + link_hint(r.output) + "lockstep nvcc: linking " + output.string() + " failed (exit status " +
                        std::to_string(r.exit_code) + ")");
}

}  // namespace lockstep::driver
