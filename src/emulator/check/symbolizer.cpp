#include "check/symbolizer.h"

#include <link.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <system_error>

#include "toolchain/process.h"

namespace lockstep::emu::check {
namespace {

struct module_address {
  std::string path;
  std::uintptr_t offset = 0;  // what addr2line expects: relative to the load address
};

// The program's own file (dl_iterate_phdr names it ""; /proc/self/exe would
// name addr2line's own file in addr2line).
std::string program_path() {
  static const std::string path = [] {
    std::error_code ignored;
    const std::filesystem::path resolved = std::filesystem::read_symlink("/proc/self/exe", ignored);
    return resolved.empty() ? std::string("/proc/self/exe") : resolved.string();
  }();
  return path;
}

// The loaded module holding `address`, from the program headers.
module_address find_module(std::uintptr_t address) {
  struct search {
    std::uintptr_t address;
    module_address found;
  } s{address, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& s = *static_cast<search*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& p = info->dlpi_phdr[i];
          const std::uintptr_t begin = info->dlpi_addr + p.p_vaddr;
          if (p.p_type == PT_LOAD && s.address >= begin && s.address < begin + p.p_memsz) {
            s.found = {info->dlpi_name && *info->dlpi_name ? info->dlpi_name : program_path(), s.address - info->dlpi_addr};
            return 1;
          }
        }
        return 0;
      },
      &s);
  return s.found;
}

struct frame {
  std::string function, file;
  unsigned line = 0;
};

std::mutex cache_mutex;
// (module, offset in it) -> frames, innermost first. Not keyed by address: a
// module unloaded (a JIT module dropped) leaves its addresses to the next one.
std::map<std::pair<std::string, std::uintptr_t>, std::vector<frame>> cache;

// "file:123 (discriminator 4)" -> file, 123; "??:0" -> "", 0.
frame parse_frame(const std::string& function, const std::string& location) {
  frame f;
  f.function = function == "??" ? "" : function;
  const std::size_t colon = location.rfind(':');
  if (colon == std::string::npos) return f;
  f.file = location.substr(0, colon);
  if (f.file == "??") f.file.clear();
  while (f.file.starts_with("./")) f.file.erase(0, 2);  // JIT modules name their directory "." (toolchain/host_compiler.cpp)
  f.line = static_cast<unsigned>(std::strtoul(location.c_str() + colon + 1, nullptr, 10));
  return f;
}

// The frames of each return address at `offsets` in `module`, by offset.
std::map<std::uintptr_t, std::vector<frame>> look_up(const std::string& module, const std::vector<std::uintptr_t>& offsets) {
  std::map<std::uintptr_t, std::vector<frame>> found;
  // Kernels from the cache are loaded as /proc/self/fd/<folder>/<file>
  // (src/jit/cache.h); in addr2line, /proc/self would be addr2line.
  std::string file = module;
  if (file.starts_with("/proc/self/")) file = "/proc/" + std::to_string(::getpid()) + file.substr(10);
  std::vector<std::string> argv{"addr2line", "-C", "-f", "-i", "-a", "-e", file};
  for (std::uintptr_t offset : offsets) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(offset - 1));  // inside the call instruction
    argv.push_back(hex);
  }
  toolchain::process_result result;
  try {
    result = toolchain::run_process(argv);
  } catch (const std::system_error&) {
    return found;  // no addr2line (binutils): reports say "?" for the line
  }
  std::istringstream out(result.output);
  std::string line, function;
  int index = -1;
  std::vector<frame> frames;
  auto store = [&] {
    if (index >= 0 && index < static_cast<int>(offsets.size())) found[offsets[index]] = frames;
    frames.clear();
  };
  while (std::getline(out, line)) {
    if (line.rfind("0x", 0) == 0) {
      store();
      ++index;
    } else if (function.empty()) {
      function = line;
    } else {
      frames.push_back(parse_frame(function, line));
      function.clear();
    }
  }
  store();
  return found;
}

bool is_lockstep_or_system(const std::string& file) {
  return file.find("/include/lockstep/") != std::string::npos || file.rfind("/usr/", 0) == 0 || file.find("/c++/") != std::string::npos;
}

}  // namespace

void prefetch_lines(const std::vector<std::uintptr_t>& return_addresses) {
  std::map<std::string, std::vector<std::uintptr_t>> by_module;  // module -> offsets not asked yet
  {
    std::lock_guard lock(cache_mutex);
    for (std::uintptr_t pc : return_addresses) {
      if (!pc) continue;
      const module_address m = find_module(pc);
      if (m.path.empty() || !cache.try_emplace({m.path, m.offset}).second) continue;  // asked once, even if nothing is found
      by_module[m.path].push_back(m.offset);
    }
  }
  for (const auto& [module, offsets] : by_module) {
    auto found = look_up(module, offsets);
    std::lock_guard lock(cache_mutex);
    for (auto& [offset, frames] : found) cache[{module, offset}] = std::move(frames);
  }
}

source_line user_line(const std::vector<std::uintptr_t>& stack) {
  prefetch_lines(stack);
  std::lock_guard lock(cache_mutex);
  const frame* first_known = nullptr;
  for (std::uintptr_t pc : stack) {
    const module_address m = find_module(pc);
    auto it = cache.find({m.path, m.offset});
    if (it == cache.end()) continue;
    for (const frame& f : it->second) {
      if (f.file.empty()) continue;
      if (!first_known) first_known = &f;
      if (!is_lockstep_or_system(f.file)) return {f.file, f.line, f.function};
    }
  }
  if (first_known) return {first_known->file, first_known->line, first_known->function};
  return {};
}

}  // namespace lockstep::emu::check
