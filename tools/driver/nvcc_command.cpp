#include "nvcc_command.h"

#include <algorithm>
#include <array>
#include <sstream>
#include <string_view>

namespace lockstep::driver {
namespace {

namespace fs = std::filesystem;

enum class role {
  output,
  compile_only,
  preprocess_only,
  shared_library,
  device_module,  // -fatbin, -cubin, -ptx
  include_path,
  system_include,
  define,
  undefine,
  pre_include,
  library_path,
  library,
  standard,
  optimize,
  debug,
  compiler_options,
  linker_options,
  language,
  host_compiler,
  run,
  run_arguments,
  dependency,  // -M, -MD, -MM, -MMD, -MP (flags), -MF, -MT (with a value)
  gpu_only,    // nothing to do on the emulator
};

struct option {
  std::string_view long_name, short_name;
  role what;
  bool takes_value;
};

// nvcc's options (`nvcc --help`), long and short spellings.
constexpr std::array options{
    option{"--output-file", "-o", role::output, true},
    option{"--compile", "-c", role::compile_only, false},
    option{"--device-c", "-dc", role::compile_only, false},
    option{"--device-w", "-dw", role::compile_only, false},
    option{"--preprocess", "-E", role::preprocess_only, false},
    option{"--shared", "-shared", role::shared_library, false},
    option{"--fatbin", "-fatbin", role::device_module, false},
    option{"--cubin", "-cubin", role::device_module, false},
    option{"--ptx", "-ptx", role::device_module, false},
    option{"--include-path", "-I", role::include_path, true},
    option{"--system-include", "-isystem", role::system_include, true},
    option{"--define-macro", "-D", role::define, true},
    option{"--undefine-macro", "-U", role::undefine, true},
    option{"--pre-include", "-include", role::pre_include, true},
    option{"--library-path", "-L", role::library_path, true},
    option{"--library", "-l", role::library, true},
    option{"--std", "-std", role::standard, true},
    option{"--optimize", "-O", role::optimize, true},
    option{"--debug", "-g", role::debug, false},
    option{"--compiler-options", "-Xcompiler", role::compiler_options, true},
    option{"--linker-options", "-Xlinker", role::linker_options, true},
    option{"--x", "-x", role::language, true},
    option{"--compiler-bindir", "-ccbin", role::host_compiler, true},
    option{"--run", "-run", role::run, false},
    option{"--run-args", "-run-args", role::run_arguments, true},
    option{"--generate-dependencies", "-M", role::dependency, false},
    option{"--generate-nonsystem-dependencies", "-MM", role::dependency, false},
    option{"--generate-dependencies-with-compile", "-MD", role::dependency, false},
    option{"--generate-nonsystem-dependencies-with-compile", "-MMD", role::dependency, false},
    option{"--generate-dependency-targets", "-MP", role::dependency, false},
    option{"--dependency-output", "-MF", role::dependency, true},
    option{"--dependency-target-name", "-MT", role::dependency, true},
    // GPU code generation and device-side tuning: the emulator has none.
    option{"--gpu-architecture", "-arch", role::gpu_only, true},
    option{"--gpu-code", "-code", role::gpu_only, true},
    option{"--generate-code", "-gencode", role::gpu_only, true},
    option{"--maxrregcount", "-maxrregcount", role::gpu_only, true},
    option{"--use_fast_math", "-use_fast_math", role::gpu_only, false},
    option{"--ftz", "-ftz", role::gpu_only, true},
    option{"--prec-div", "-prec-div", role::gpu_only, true},
    option{"--prec-sqrt", "-prec-sqrt", role::gpu_only, true},
    option{"--fmad", "-fmad", role::gpu_only, true},
    option{"--device-debug", "-G", role::gpu_only, false},
    option{"--generate-line-info", "-lineinfo", role::gpu_only, false},
    option{"--ptxas-options", "-Xptxas", role::gpu_only, true},
    option{"--nvlink-options", "-Xnvlink", role::gpu_only, true},
    option{"--relocatable-device-code", "-rdc", role::gpu_only, true},
    option{"--expt-relaxed-constexpr", "-expt-relaxed-constexpr", role::gpu_only, false},
    option{"--expt-extended-lambda", "-expt-extended-lambda", role::gpu_only, false},
    option{"--extended-lambda", "-extended-lambda", role::gpu_only, false},
    option{"--resource-usage", "-res-usage", role::gpu_only, false},
    option{"--keep", "-keep", role::gpu_only, false},
    option{"--threads", "-t", role::gpu_only, true},
    option{"--machine", "-m", role::gpu_only, true},
    option{"--cudart", "-cudart", role::gpu_only, true},
    option{"--cudadevrt", "-cudadevrt", role::gpu_only, true},
    option{"--default-stream", "-default-stream", role::gpu_only, true},
    option{"--disable-warnings", "-w", role::gpu_only, false},
    option{"--verbose", "-v", role::gpu_only, false},
    option{"--Wno-deprecated-gpu-targets", "-Wno-deprecated-gpu-targets", role::gpu_only, false},
    option{"--source-in-ptx", "-src-in-ptx", role::gpu_only, false},
    option{"--device-link", "-dlink", role::gpu_only, false},
    option{"--diag-suppress", "-diag-suppress", role::gpu_only, true},
    option{"--display-error-number", "-err-no", role::gpu_only, false},
};

std::vector<std::string> comma_list(std::string_view text) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in{std::string(text)};
  while (std::getline(in, item, ',')) items.push_back(item);
  return items;
}

std::string extension_of(const std::string& argument) { return fs::path(argument).extension().string(); }

// The option `argument` starts with, and the value glued to it ("-o=x", "-Ix",
// "-O3", "--std=c++17"), if any.
const option* find_option(const std::string& argument, std::string& glued, bool& has_glued) {
  has_glued = false;
  const std::size_t equals = argument.find('=');
  const std::string_view name = std::string_view(argument).substr(0, equals);
  for (const option& o : options)
    if (name == o.long_name || name == o.short_name) {
      if (equals != std::string::npos) {
        if (!o.takes_value) return nullptr;  // "-c=1": not an option nvcc knows
        glued = argument.substr(equals + 1);
        has_glued = true;
      }
      return &o;
    }
  // One-letter options with the value glued on: -Idir, -DNAME=1, -O3, -lm, -Lpath, -UNAME.
  for (const char* prefix : {"-I", "-D", "-U", "-L", "-l", "-O", "-m"})
    if (argument.size() > 2 && argument.rfind(prefix, 0) == 0)
      for (const option& o : options)
        if (o.short_name == prefix) {
          glued = argument.substr(2);
          has_glued = true;
          return &o;
        }
  return nullptr;
}

}  // namespace

bool is_input_file(const std::string& argument) {
  static constexpr std::array extensions{".cu", ".cpp", ".cc", ".cxx", ".c", ".C", ".o", ".a", ".so"};
  const std::string ext = extension_of(argument);
  return std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
}

nvcc_command parse_nvcc_command(const std::vector<std::string>& arguments, bool program_arguments_follow) {
  nvcc_command c;
  bool force_cuda = false;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string& argument = arguments[i];
    if (program_arguments_follow &&
        (argument == "--" || (argument.empty() || argument[0] != '-') && !is_input_file(argument) && !c.sources.empty())) {
      c.run_arguments.assign(arguments.begin() + static_cast<std::ptrdiff_t>(i + (argument == "--")), arguments.end());
      break;
    }
    if (argument.empty()) continue;
    if (argument[0] != '-') {
      const std::string ext = extension_of(argument);
      if (ext == ".o" || ext == ".a" || ext == ".so")
        c.link_inputs.push_back(argument);
      else if (is_input_file(argument) || force_cuda)
        c.sources.push_back({argument, force_cuda || ext == ".cu"});
      else
        throw usage_error("don't know what to do with '" + argument + "' (nvcc takes .cu, .cpp, .c, .o, .a and .so files)");
      continue;
    }
    // Options the host compiler takes as they are (nvcc passes these on too).
    if (argument.rfind("-W", 0) == 0 && argument != "-Wno-deprecated-gpu-targets" && argument.rfind("-Wl,", 0) != 0) {
      c.compiler_flags.push_back(argument);
      continue;
    }
    if (argument.rfind("-Wl,", 0) == 0) {
      c.linker_flags.push_back(argument);
      continue;
    }
    if ((argument.rfind("-f", 0) == 0 && argument != "-fatbin") || argument == "-pthread") {
      c.compiler_flags.push_back(argument);
      continue;
    }
    std::string glued;
    bool has_glued = false;
    const option* o = find_option(argument, glued, has_glued);
    if (!o) throw usage_error("unknown option '" + argument + "'");
    std::string value;
    if (o->takes_value) {
      if (has_glued)
        value = glued;
      else if (o->what == role::optimize)
        value = "3";  // a bare -O
      else if (i + 1 < arguments.size())
        value = arguments[++i];
      else
        throw usage_error("option '" + argument + "' needs a value");
    }
    switch (o->what) {
      case role::output:
        c.output = value;
        break;
      case role::compile_only:
        c.compile_only = true;
        break;
      case role::preprocess_only:
        c.preprocess_only = true;
        break;
      case role::shared_library:
        c.shared_library = true;
        break;
      case role::device_module:
        c.shared_library = true;
        c.module_extension = "." + std::string(o->short_name.substr(1));
        break;
      case role::include_path:
        c.preprocessor_flags.push_back("-I" + value);
        break;
      case role::system_include:
        c.preprocessor_flags.insert(c.preprocessor_flags.end(), {"-isystem", value});
        break;
      case role::define:
        c.preprocessor_flags.push_back("-D" + value);
        break;
      case role::undefine:
        c.preprocessor_flags.push_back("-U" + value);
        break;
      case role::pre_include:
        c.preprocessor_flags.insert(c.preprocessor_flags.end(), {"-include", value});
        break;
      case role::library_path:
        c.linker_flags.push_back("-L" + value);
        break;
      case role::library:
        c.linker_flags.push_back("-l" + value);
        break;
      case role::standard:
        c.language_standard = value;
        break;
      case role::optimize:
        c.compiler_flags.push_back("-O" + value);
        break;
      case role::debug:
        c.compiler_flags.push_back("-g");
        break;
      case role::compiler_options:
        for (const std::string& flag : comma_list(value)) c.compiler_flags.push_back(flag);
        break;
      case role::linker_options:
        for (const std::string& flag : comma_list(value)) c.linker_flags.push_back("-Wl," + flag);
        break;
      case role::language:
        if (value == "cu")
          force_cuda = true;
        else if (value == "c++" || value == "c" || value == "none")
          force_cuda = false;
        else
          throw usage_error("-x " + value + ": lockstep nvcc compiles cu, c++ and c");
        break;
      case role::host_compiler:
        c.host_compiler = value;
        break;
      case role::run:
        c.run_after_build = true;
        break;
      case role::run_arguments:
        for (const std::string& a : comma_list(value)) c.run_arguments.push_back(a);
        break;
      case role::dependency:
        c.preprocessor_flags.push_back(std::string(o->short_name));
        if (o->takes_value) c.preprocessor_flags.push_back(value);
        break;
      case role::gpu_only:
        c.ignored.push_back(o->takes_value && !has_glued ? argument + " " + value : argument);
        break;
    }
  }
  return c;
}

}  // namespace lockstep::driver
