// NVRTC on the emulator (lockstep/emu/nvrtc_api.h): the program's source, its
// in-memory headers and its options become a `lockstep nvcc -fatbin` run in a
// private temporary folder; the shared object it builds is the program's
// output. Name expressions are instantiated by code appended to the source,
// which stores each one's address; loading the built module once reads those
// back and names them with the symbol table (their mangled names).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "lockstep/emu/nvrtc_api.h"
#include "toolchain/process.h"

struct _nvrtcProgram {
  std::string source, name;
  std::vector<std::pair<std::string, std::string>> headers;  // include name, text
  std::vector<std::string> name_expressions;
  std::vector<std::string> lowered_names;  // after compiling, in the order of name_expressions
  std::string log, module;
  bool compiled = false;
};

namespace {

namespace fs = std::filesystem;

// lockstep nvcc: $LOCKSTEP_NVCC, beside liblockstep (an installed package),
// or the build tree's.
std::string nvcc_path() {
  if (const char* set = std::getenv("LOCKSTEP_NVCC"); set && *set) return set;
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&nvrtcCompileProgram), &info) && info.dli_fname) {
    const fs::path beside = fs::path(info.dli_fname).parent_path() / "lockstep-nvcc";
    if (fs::exists(beside)) return beside.string();
  }
  return LOCKSTEP_NVCC_BUILD_PATH;
}

// NVRTC's options as lockstep nvcc's; what only steers GPU code generation is dropped.
std::vector<std::string> driver_options(int count, const char* const* options, std::string& unknown) {
  std::vector<std::string> out;
  auto value_after = [](const std::string& option, std::size_t length) {
    std::string v = option.substr(length);
    return !v.empty() && v[0] == '=' ? v.substr(1) : v;
  };
  for (int i = 0; i < count; ++i) {
    if (!options[i]) continue;
    const std::string o = options[i];
    auto starts = [&](const char* prefix) { return o.rfind(prefix, 0) == 0; };
    if (starts("--include-path"))
      out.push_back("-I" + value_after(o, 14));
    else if (starts("-I"))
      out.push_back("-I" + value_after(o, 2));
    else if (starts("--define-macro"))
      out.push_back("-D" + value_after(o, 14));
    else if (starts("-D"))
      out.push_back("-D" + value_after(o, 2));
    else if (starts("--undefine-macro"))
      out.push_back("-U" + value_after(o, 16));
    else if (starts("-U"))
      out.push_back("-U" + value_after(o, 2));
    else if (starts("--std") || starts("-std"))
      out.push_back("-std=" + value_after(o, starts("--std") ? 5 : 4));
    else if (starts("--pre-include") || starts("-include"))
      out.insert(out.end(), {"-include", value_after(o, starts("--pre-include") ? 13 : 8)});
    else if (!starts("-"))
      unknown = o;
    // Everything else (--gpu-architecture, -arch, --use_fast_math, -lineinfo, -G, -rdc, --fmad, ...) is about GPU code.
  }
  return out;
}

// Appended to the source: each name expression's address, stored under a name of ours.
std::string name_expression_code(const std::vector<std::string>& expressions) {
  std::string code = "\n// lockstep: NVRTC's name expressions\n";
  for (std::size_t i = 0; i < expressions.size(); ++i) {
    const std::string& e = expressions[i];
    const std::string address = !e.empty() && e[0] == '&' ? e : "&(" + e + ")";
    code += "extern \"C\" const void* const __lockstep_name_expression_" + std::to_string(i) + " = ::lockstep::emu::name_expression_address(" +
            address + ");\n";
  }
  return code;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The mangled names of the name expressions, from the built module loaded once.
bool lower_names(_nvrtcProgram& p, const fs::path& module) {
  p.lowered_names.clear();
  if (p.name_expressions.empty()) return true;
  void* handle = dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    p.log += std::string("lockstep NVRTC: the built module could not be loaded: ") + dlerror() + "\n";
    return false;
  }
  bool ok = true;
  for (std::size_t i = 0; i < p.name_expressions.size(); ++i) {
    const auto* stored = static_cast<const void* const*>(dlsym(handle, ("__lockstep_name_expression_" + std::to_string(i)).c_str()));
    Dl_info info{};
    if (!stored || !dladdr(*stored, &info) || !info.dli_sname || info.dli_saddr != *stored) {
      p.log += "lockstep NVRTC: the name expression '" + p.name_expressions[i] + "' names nothing the module exports\n";
      ok = false;
      p.lowered_names.emplace_back();
      continue;
    }
    p.lowered_names.emplace_back(info.dli_sname);
  }
  dlclose(handle);
  return ok;
}

}  // namespace

const char* nvrtcGetErrorString(nvrtcResult result) {
  switch (result) {
    case NVRTC_SUCCESS:
      return "NVRTC_SUCCESS";
    case NVRTC_ERROR_OUT_OF_MEMORY:
      return "NVRTC_ERROR_OUT_OF_MEMORY";
    case NVRTC_ERROR_PROGRAM_CREATION_FAILURE:
      return "NVRTC_ERROR_PROGRAM_CREATION_FAILURE";
    case NVRTC_ERROR_INVALID_INPUT:
      return "NVRTC_ERROR_INVALID_INPUT";
    case NVRTC_ERROR_INVALID_PROGRAM:
      return "NVRTC_ERROR_INVALID_PROGRAM";
    case NVRTC_ERROR_INVALID_OPTION:
      return "NVRTC_ERROR_INVALID_OPTION";
    case NVRTC_ERROR_COMPILATION:
      return "NVRTC_ERROR_COMPILATION";
    case NVRTC_ERROR_BUILTIN_OPERATION_FAILURE:
      return "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE";
    case NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION:
      return "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION";
    case NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION:
      return "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION";
    case NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID:
      return "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID";
    case NVRTC_ERROR_INTERNAL_ERROR:
      return "NVRTC_ERROR_INTERNAL_ERROR";
    case NVRTC_ERROR_TIME_FILE_WRITE_FAILED:
      return "NVRTC_ERROR_TIME_FILE_WRITE_FAILED";
  }
  return "NVRTC_ERROR unknown";
}

nvrtcResult nvrtcVersion(int* major, int* minor) {
  if (!major || !minor) return NVRTC_ERROR_INVALID_INPUT;
  *major = 13;
  *minor = 0;
  return NVRTC_SUCCESS;
}

namespace {
constexpr int supported_architectures[] = {75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121};
}
nvrtcResult nvrtcGetNumSupportedArchs(int* count) {
  if (!count) return NVRTC_ERROR_INVALID_INPUT;
  *count = static_cast<int>(std::size(supported_architectures));
  return NVRTC_SUCCESS;
}
nvrtcResult nvrtcGetSupportedArchs(int* architectures) {
  if (!architectures) return NVRTC_ERROR_INVALID_INPUT;
  std::memcpy(architectures, supported_architectures, sizeof supported_architectures);
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcCreateProgram(nvrtcProgram* program, const char* source, const char* name, int header_count, const char* const* headers,
                               const char* const* include_names) {
  if (!program || !source || header_count < 0 || (header_count > 0 && (!headers || !include_names))) return NVRTC_ERROR_INVALID_INPUT;
  auto* p = new _nvrtcProgram;
  p->source = source;
  p->name = name && *name ? name : "default_program";
  for (int i = 0; i < header_count; ++i) {
    if (!headers[i] || !include_names[i]) {
      delete p;
      return NVRTC_ERROR_INVALID_INPUT;
    }
    p->headers.emplace_back(include_names[i], headers[i]);
  }
  *program = p;
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram* program) {
  if (!program || !*program) return NVRTC_ERROR_INVALID_PROGRAM;
  delete *program;
  *program = nullptr;
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcAddNameExpression(nvrtcProgram program, const char* name_expression) {
  if (!program) return NVRTC_ERROR_INVALID_PROGRAM;
  if (!name_expression || !*name_expression) return NVRTC_ERROR_INVALID_INPUT;
  if (program->compiled) return NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION;
  program->name_expressions.emplace_back(name_expression);
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram program, int option_count, const char* const* options) {
  if (!program) return NVRTC_ERROR_INVALID_PROGRAM;
  if (option_count < 0 || (option_count > 0 && !options)) return NVRTC_ERROR_INVALID_INPUT;
  std::string unknown;
  const std::vector<std::string> flags = driver_options(option_count, options, unknown);
  if (!unknown.empty()) {
    program->log = "nvrtc: error: unrecognized option '" + unknown + "'\n";
    return NVRTC_ERROR_INVALID_OPTION;
  }
  std::string pattern = (fs::temp_directory_path() / "lockstep-nvrtc-XXXXXX").string();
  const char* made = mkdtemp(pattern.data());
  if (!made) {
    program->log = "lockstep NVRTC: cannot create a temporary folder\n";
    return NVRTC_ERROR_INTERNAL_ERROR;
  }
  const fs::path folder = made;
  nvrtcResult result = NVRTC_SUCCESS;
  try {
    for (const auto& [include_name, text] : program->headers) {
      const fs::path header = folder / "headers" / include_name;
      fs::create_directories(header.parent_path());
      std::ofstream(header, std::ios::binary) << text;
    }
    // The source keeps the program's name (messages point into it), as a .cu file.
    fs::path source = folder / fs::path(program->name).filename();
    if (source.extension() != ".cu") source += ".cu";
    std::ofstream(source, std::ios::binary) << program->source << name_expression_code(program->name_expressions);
    const fs::path module = folder / "module.so";
    std::vector<std::string> argv{nvcc_path(), "-fatbin", "-o", module.string(), "-I" + (folder / "headers").string()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    // NVRTC finds a quoted #include beside the file the program's name names
    // (relative to the working directory: "x.cu" there, "sub/x.cu" in sub/),
    // as the CUDA samples' *_nvrtc programs rely on; checked on an H200.
    std::error_code error;
    if (const fs::path beside = fs::absolute(fs::path(program->name).parent_path(), error); !error && fs::is_directory(beside, error))
      argv.push_back("-I" + beside.string());
    argv.push_back(source.string());
    const lockstep::toolchain::process_result built = lockstep::toolchain::run_process(argv);
    program->log = built.output;
    if (built.exit_code != 0) {
      result = NVRTC_ERROR_COMPILATION;
    } else {
      program->module = read_bytes(module);
      result = lower_names(*program, module) ? NVRTC_SUCCESS : NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID;
    }
  } catch (const std::exception& e) {
    program->log += std::string("lockstep NVRTC: ") + e.what() + " (set LOCKSTEP_NVCC to lockstep nvcc's path)\n";
    result = NVRTC_ERROR_INTERNAL_ERROR;
  }
  std::error_code ignored;
  fs::remove_all(folder, ignored);
  program->compiled = result == NVRTC_SUCCESS;
  return result;
}

nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram program, std::size_t* bytes) {
  if (!program) return NVRTC_ERROR_INVALID_PROGRAM;
  if (!bytes) return NVRTC_ERROR_INVALID_INPUT;
  *bytes = program->log.size() + 1;
  return NVRTC_SUCCESS;
}
nvrtcResult nvrtcGetProgramLog(nvrtcProgram program, char* log) {
  if (!program) return NVRTC_ERROR_INVALID_PROGRAM;
  if (!log) return NVRTC_ERROR_INVALID_INPUT;
  std::memcpy(log, program->log.c_str(), program->log.size() + 1);
  return NVRTC_SUCCESS;
}

namespace {
nvrtcResult output_size(nvrtcProgram program, std::size_t* bytes) {
  if (!program) return NVRTC_ERROR_INVALID_PROGRAM;
  if (!bytes) return NVRTC_ERROR_INVALID_INPUT;
  if (!program->compiled) return NVRTC_ERROR_INVALID_PROGRAM;
  *bytes = program->module.size();
  return NVRTC_SUCCESS;
}
nvrtcResult output(nvrtcProgram program, char* to) {
  if (!program) return NVRTC_ERROR_INVALID_PROGRAM;
  if (!to) return NVRTC_ERROR_INVALID_INPUT;
  if (!program->compiled) return NVRTC_ERROR_INVALID_PROGRAM;
  std::memcpy(to, program->module.data(), program->module.size());
  return NVRTC_SUCCESS;
}
}  // namespace

nvrtcResult nvrtcGetCUBINSize(nvrtcProgram program, std::size_t* bytes) { return output_size(program, bytes); }
nvrtcResult nvrtcGetCUBIN(nvrtcProgram program, char* cubin) { return output(program, cubin); }
nvrtcResult nvrtcGetLTOIRSize(nvrtcProgram program, std::size_t* bytes) { return output_size(program, bytes); }
nvrtcResult nvrtcGetLTOIR(nvrtcProgram program, char* ltoir) { return output(program, ltoir); }
// PTX is text that ends in a NUL, which its size counts.
nvrtcResult nvrtcGetPTXSize(nvrtcProgram program, std::size_t* bytes) {
  const nvrtcResult r = output_size(program, bytes);
  if (r == NVRTC_SUCCESS) *bytes += 1;
  return r;
}
nvrtcResult nvrtcGetPTX(nvrtcProgram program, char* ptx) {
  const nvrtcResult r = output(program, ptx);
  if (r == NVRTC_SUCCESS) ptx[program->module.size()] = '\0';
  return r;
}

nvrtcResult nvrtcGetLoweredName(nvrtcProgram program, const char* name_expression, const char** lowered_name) {
  if (!program) return NVRTC_ERROR_INVALID_PROGRAM;
  if (!name_expression || !lowered_name) return NVRTC_ERROR_INVALID_INPUT;
  if (!program->compiled) return NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION;
  for (std::size_t i = 0; i < program->name_expressions.size(); ++i)
    if (program->name_expressions[i] == name_expression) {
      *lowered_name = program->lowered_names[i].c_str();
      return NVRTC_SUCCESS;
    }
  return NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID;
}
