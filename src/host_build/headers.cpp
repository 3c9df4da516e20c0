#include "headers.h"

#include <algorithm>
#include <fstream>
#include <iterator>

#include "toolchain/hash.h"

namespace lockstep::host_build {
namespace fs = std::filesystem;

bool holds_lockstep_headers(const fs::path& dir) { return fs::exists(dir / "lockstep" / "cuda.h"); }

fs::path first_with_lockstep_headers(const std::vector<fs::path>& candidates) {
  for (const fs::path& c : candidates)
    if (holds_lockstep_headers(c)) return c;
  return {};
}

fs::path cuda_include_directory(const fs::path& include_dir) { return include_dir / "lockstep" / "cuda_include"; }

std::string cuda_headers_first(const fs::path& include_dir) { return "-I" + cuda_include_directory(include_dir).string(); }

std::vector<fs::path> header_files(const fs::path& include_dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(include_dir / "lockstep"))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string headers_fingerprint(const fs::path& include_dir) {
  std::string all;
  for (const fs::path& f : header_files(include_dir)) {
    std::ifstream in(f, std::ios::binary);
    all += f.filename().string() + "\n" + std::string(std::istreambuf_iterator<char>(in), {});
  }
  return toolchain::hash_hex(all);
}

std::string headers_written(const fs::path& include_dir) {
  std::string all;
  for (const fs::path& f : header_files(include_dir)) all += std::to_string(fs::last_write_time(f).time_since_epoch().count()) + "\n";
  return toolchain::hash_hex(all);
}

}  // namespace lockstep::host_build
