#include "unsupported_features.h"

#include <array>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>

#include "toolchain/lexer.h"

namespace lockstep::driver {
namespace {

using feature = unsupported_feature;
constexpr std::string_view driver_api_remainder =
    "this part of CUDA's driver API is not emulated; devices, contexts, modules, launches, memory, streams and events are";

// What a program uses that lockstep does not provide, by the names that give
// it away in a compiler's message. tests/cpp/unit/test_unsupported_features.cpp
// fails where an entry names what lockstep's headers in fact declare.
constexpr std::array features{
    feature{"cudaGraph", "CUDA graphs are not emulated (cudaGraphCreate, cudaGraphInstantiate and cudaGraphLaunch return cudaErrorNotSupported)",
            feature_family::graphs},
    feature{"cudaStreamBeginCapture", "CUDA graphs (stream capture) are not emulated", feature_family::graphs},
    feature{"cudaGraphicsD3D", "Direct3D interoperability is not emulated"},
    feature{"cudaEGL", "EGL interoperability is not emulated"},
    feature{"CU", driver_api_remainder, feature_family::driver_api_remainder},
    feature{"cu", driver_api_remainder, feature_family::driver_api_remainder},
    feature{"curand",
            "cuRAND comes from the CUDA toolkit's headers (set CUDA_HOME): its device API (<curand_kernel.h>) runs on the emulator, and so does its "
            "host API (<curand.h>, -lcurand): a generator from curandCreateGenerator is libcurand's host generator of that type, on the CPU "
            "(not with a static libcurand)",
            feature_family::from_toolkit},
    feature{"cufft", "cuFFT is not emulated"},
    feature{"cusparse", "cuSPARSE is not emulated"},
    feature{"cusolver", "cuSOLVER is not emulated"},
    feature{"thrust",
            "Thrust comes from the CUDA toolkit's headers (set CUDA_HOME or CUDA_PATH): lockstep nvcc builds it with its C++ backend, over "
            "device memory that is host memory here",
            feature_family::from_toolkit},
    feature{"cub", "CUB is not emulated"},
    feature{"MPI_", "MPI is not part of lockstep: build with the MPI compiler wrapper's flags"},
};

// `[file:line:column: ]error: ... ‘name’ ...`: the file and line, and the quoted names.
const std::regex error_line(R"(^([^:\s][^:]*):(\d+):(?:\d+:)? (?:fatal )?error: (.*)$)");
const std::regex quoted(R"([‘'`]([A-Za-z_][A-Za-z_0-9:<>]*)[’'])");
const std::regex missing_header(R"(([A-Za-z_0-9/]+)\.(?:h|hpp|cuh): No such file)");

// Whether `name` continues `prefix` as a name of its family: the driver API is
// cu + a capital (cuInit) and CU + a small letter (CUresult), unlike cudaMalloc
// or CUBLAS_STATUS_SUCCESS; cub must be a whole word or a prefix (cub::);
// cudaGraph is not cudaGraphics (OpenGL interoperability, which is emulated).
bool continues_family(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return false;
  const char next = name.size() > prefix.size() ? name[prefix.size()] : '\0';
  const bool capital = next >= 'A' && next <= 'Z', small = next >= 'a' && next <= 'z';
  if (prefix == "cu") return capital;
  if (prefix == "CU") return small;
  if (prefix == "cub") return next == '\0' || next == '_';
  if (prefix == "cudaGraph") return !name.substr(prefix.size()).starts_with("ics");
  return true;
}

}  // namespace

std::span<const unsupported_feature> unsupported_features() { return features; }

const unsupported_feature* unsupported_feature_of(std::string name) {
  if (const std::size_t colons = name.find("::"); colons != std::string::npos) name = name.substr(0, colons);
  for (const feature& f : features)
    if (continues_family(name, f.name_prefix)) return &f;
  return nullptr;
}

std::string inline_ptx_uses(const std::string& preprocessed) {
  const std::vector<toolchain::token> tokens = toolchain::tokenize(preprocessed);
  std::string file = "?", found;
  std::size_t marker_line = 0, marker_at_line = 0;  // the line the last marker names, and the marker's own line in the text
  bool in_system_header = false;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const toolchain::token& t = tokens[i];
    if (t.kind == toolchain::token_kind::directive) {
      std::cmatch m;
      // `# 12 "file" 1 3`: flag 3 marks a system header (CCCL's, whose PTX
      // lies on device-only paths that a host build never emits).
      static const std::regex marker(R"(^#\s*(?:line\s+)?(\d+)\s+\"([^\"]*)\"((?:\s+\d)*))");
      if (std::regex_search(t.text.begin(), t.text.end(), m, marker)) {
        marker_line = std::stoul(m[1]);
        file = m[2];
        marker_at_line = t.line;
        in_system_header = m[3].str().find('3') != std::string::npos;
      }
      continue;
    }
    if (in_system_header || !(t.is("asm") || t.is("__asm__") || t.is("__asm"))) continue;
    for (std::size_t j = i + 1; j < tokens.size() && j < i + 8; ++j) {
      if (tokens[j].kind != toolchain::token_kind::string_literal) continue;
      static const std::regex ptx(
          R"((\.(u|s|b|f)(8|16|32|64)\b|%laneid|%warpid|%smid|\bld\.global|\bst\.global|\bcp\.async|\bmma\.sync|\bwgmma|\bldmatrix|\.reg\b))");
      if (std::regex_search(tokens[j].text.begin(), tokens[j].text.end(), ptx))
        found += file + ":" + std::to_string(marker_line + (t.line - marker_at_line - 1)) +
                 ": inline PTX (asm) is not supported by the emulator: write the operation in CUDA C++ (an intrinsic, a shuffle, a plain load)\n";
      break;
    }
  }
  return found;
}

std::string explain_unsupported(const std::string& compiler_output) {
  std::set<std::string> said;
  std::string notes;
  std::istringstream lines(compiler_output);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, error_line)) continue;
    const std::string where = m[1].str() + ":" + m[2].str(), message = m[3];
    std::smatch header;
    if (std::regex_search(message, header, missing_header)) {
      const std::string name = header[1];
      const std::string base = name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
      if (const feature* f = unsupported_feature_of(base); f && said.insert(where + base).second)
        notes += where + ": <" + name + "...>: " + std::string(f->what) + "\n";
      continue;
    }
    for (auto it = std::sregex_iterator(message.begin(), message.end(), quoted); it != std::sregex_iterator(); ++it) {
      const std::string name = (*it)[1];
      if (const feature* f = unsupported_feature_of(name); f && said.insert(std::string(f->what)).second)
        notes += where + ": " + name + ": " + std::string(f->what) + "\n";
    }
  }
  return notes.empty() ? "" : "lockstep nvcc: this program uses what the emulator does not provide:\n" + notes;
}

}  // namespace lockstep::driver
