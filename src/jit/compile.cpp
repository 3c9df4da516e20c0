// lockstep::compile and lockstep::builtin_kernels: from source (or the
// library's prebuilt kernels) to a loaded module, through the disk cache.
#include <dlfcn.h>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "cache.h"
#include "emulator/region_loops/region_loops.h"
#include "lockstep/emu/check.h"
#include "lockstep/emu/options.h"
#include "nvrtc.h"
#include "runtime/backend.h"
#include "toolchain/hash.h"
#include "toolchain/host_compiler.h"
#include "toolchain/process.h"
#include "translation_unit.h"

namespace lockstep {
namespace fs = std::filesystem;

namespace {

// The directory liblockstep.so was loaded from.
fs::path library_directory() {
  Dl_info info{};
  dladdr(reinterpret_cast<const void*>(&library_directory), &info);
  return fs::path(info.dli_fname ? info.dli_fname : "").parent_path();
}

// lockstep's headers, for the compilers: LOCKSTEP_INCLUDE_DIR, the include/
// folder installed beside the library, or the source tree it was built from.
const fs::path& include_directory() {
  static const fs::path dir = [] {
    std::vector<fs::path> candidates;
    if (const char* env = std::getenv("LOCKSTEP_INCLUDE_DIR")) candidates.emplace_back(env);
    candidates.push_back(library_directory() / "include");
#ifdef LOCKSTEP_SOURCE_INCLUDE_DIR
    candidates.emplace_back(LOCKSTEP_SOURCE_INCLUDE_DIR);
#endif
    for (const fs::path& c : candidates)
      if (fs::exists(c / "lockstep" / "cuda.h")) return c;
    throw device_unavailable("lockstep's headers (lockstep/cuda.h) were not found beside " + library_directory().string() +
                             "; set LOCKSTEP_INCLUDE_DIR to the folder that contains lockstep/cuda.h");
  }();
  return dir;
}

std::vector<fs::path> header_files() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(include_directory() / "lockstep"))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// A fingerprint of every lockstep header: kernels compiled against older
// headers are not reused.
const std::string& headers_fingerprint() {
  static const std::string fingerprint = [] {
    std::string all;
    for (const fs::path& f : header_files()) {
      std::ifstream in(f, std::ios::binary);
      all += f.filename().string() + "\n" + std::string(std::istreambuf_iterator<char>(in), {});
    }
    return toolchain::hash_hex(all);
  }();
  return fingerprint;
}

// Clang refuses a precompiled prelude whose headers were written after it
// (the same bytes installed again, too): their times are part of its key.
const std::string& headers_written() {
  static const std::string stamp = [] {
    std::string all;
    for (const fs::path& f : header_files()) all += std::to_string(fs::last_write_time(f).time_since_epoch().count()) + "\n";
    return toolchain::hash_hex(all);
  }();
  return stamp;
}

// The region-loop compiler's parse of a JIT translation unit reads lockstep's
// headers from a file Clang wrote once for the prelude every such unit begins
// with (kept in the cache); "" where that cannot be had, and the parse reads
// them as text, about 0.4 s more.
std::string precompiled_prelude(const std::vector<std::string>& parse_flags, std::shared_ptr<const jit::checked_directory>& keep) {
  std::ostringstream key;
  key << "lockstep-jit region-loops prelude\n"
      << emu::region_loops::libclang_version() << "\nheaders " << headers_fingerprint() << " " << headers_written() << "\nflags";
  for (const auto& f : parse_flags) key << ' ' << f;
  key << "\n" << jit::host_prelude;
  try {
    const auto artifact = jit::cache_lookup_or_build(key.str(), ".pch", [&](const fs::path& out) {
      emu::region_loops::precompile_prelude(std::string(jit::host_prelude), parse_flags, out.string());
    });
    keep = artifact.directory;
    return artifact.loadable_path;
  } catch (const std::exception&) {
    return "";
  }
}

std::vector<std::string> common_flags(const compile_options& o) {
  std::vector<std::string> flags{"-I" + include_directory().string()};
  for (const auto& dir : o.include_dirs) flags.push_back("-I" + dir);
  for (const auto& define : o.defines) flags.push_back("-D" + define);
  return flags;
}

// The toolchain's failures in the runtime's terms.
template <class F>
auto with_runtime_errors(F&& build) {
  try {
    return build();
  } catch (const toolchain::compiler_not_found& e) {
    throw device_unavailable(std::string("the cpu device compiles kernels with the host's C++ compiler: ") + e.what());
  } catch (const toolchain::compile_failure& e) {
    throw compile_error(e.summary(), e.log());
  }
}

// The emulator's headers need C++20: an older dialect asked for is raised to
// it (C++20 accepts the CUDA code C++17 does).
std::string host_dialect(const std::string& std) {
  for (const char* old : {"98", "03", "11", "14", "17"})
    if (std.size() >= 2 && std.compare(std.size() - 2, 2, old) == 0) return std.substr(0, std.size() - 2) + "20";
  return std;
}

std::shared_ptr<detail::module_impl> build_for_cpu(const std::string& tu, const compile_options& o, const device& d, bool& hit) {
  // -g1: line tables only, so a fault's report names the kernel's line (about 15% more compile time, on a cache miss).
  // -O3, as CMake's Release builds of the library's kernels: at -O2 GCC
  // vectorises only loops whose trip count it knows to be a multiple of the
  // vector width, which a loop over a block's threads never is (same compile
  // time, measured with jit_bench --cold).
  // lockstep's CUDA headers (<cooperative_groups.h>, <cuda_fp16.h>, ...) come
  // first, so that they win over an installed toolkit's in the default paths.
  std::vector<std::string> flags{"-std=" + host_dialect(o.std), "-O3", "-g1", "-fPIC",
                                 "-I" + (include_directory() / "lockstep" / "cuda_include").string()};
  flags.insert(flags.end(), std::begin(toolchain::kernel_code_flags), std::end(toolchain::kernel_code_flags));
  // For this machine's CPU, as PoCL builds OpenCL kernels: the region loops
  // vectorise across threads with its widest vectors. The key names the CPU.
  const toolchain::native_target& native = toolchain::find_native_target();
  flags.insert(flags.end(), native.flags.begin(), native.flags.end());
  // In check mode the kernels are instrumented (src/emulator/check), with debug
  // information for the source lines of reports. The instrumentation's hooks
  // are liblockstep's, so the sanitizer's own runtime must not be linked:
  // compile and link are then two steps.
  const bool checked = o.checked;
  if (checked)
    for (const auto& f : emu::check_compile_flags()) flags.push_back(f);
  for (auto& f : common_flags(o)) flags.push_back(f);
  for (auto& f : o.flags) flags.push_back(f);
  // The module links liblockstep.so, so it shares this process's emulator;
  // --no-as-needed keeps that link where the compiler defaults to --as-needed.
  const std::vector<std::string> link_inputs{"-Wl,--no-as-needed", (library_directory() / "liblockstep.so").string()};
  const toolchain::host_compiler& cxx = toolchain::find_host_compiler();
  std::ostringstream key;
  key << "lockstep-jit cpu\ncompiler " << cxx.identity << "\nprocessor " << native.cpu << "\nheaders " << headers_fingerprint() << "\nflags";
  for (auto& f : flags) key << ' ' << f;
  for (auto& f : link_inputs) key << ' ' << f;
  key << "\n" << tu;
  // A source is parsed and its kernels split into region loops (not in check
  // mode, nor with the fiber engine chosen, which run every kernel on
  // fibers). Without the precompiled prelude (a source that does not begin
  // with lockstep's headers) the parse costs almost as much as the compile,
  // so such a source is parsed only where it names a barrier.
  const bool split = !checked && emu::get_options().region_loops &&
                     (emu::region_loops::mentions_synchronization(tu) || (tu.starts_with(jit::host_prelude) && emu::region_loops::available()));
  if (split) key << "\nregion loops " << emu::region_loops::version << (emu::region_loops::available() ? "" : " (no libclang)");
  const auto artifact = jit::cache_lookup_or_build(key.str(), ".so", [&](const fs::path& out) {
    if (!checked) {
      std::vector<std::string> one_step = flags;
      one_step.push_back("-shared");
      one_step.insert(one_step.end(), link_inputs.begin(), link_inputs.end());
      if (split) {
        std::vector<std::string> parse_flags;
        for (const auto& f : flags)
          if (f.rfind("-I", 0) == 0 || f.rfind("-D", 0) == 0 || f.rfind("-U", 0) == 0 || f.rfind("-std=", 0) == 0) parse_flags.push_back(f);
        std::shared_ptr<const jit::checked_directory> prelude_directory;
        const std::string prelude = tu.starts_with(jit::host_prelude) ? precompiled_prelude(parse_flags, prelude_directory) : "";
        const auto result = emu::region_loops::split_kernels(tu, o.source_name, parse_flags, prelude);
        emu::region_loops::log(o.source_name, result);
        if (!result.split.empty()) {
          try {
            toolchain::compile_shared_object(result.source, o.source_name, one_step, out);
            return;
          } catch (const toolchain::compile_failure& e) {
            // The split source is lockstep's doing: the kernels run on fibers,
            // as written (a source the host compiler refuses as written too
            // fails with its own errors).
            emu::region_loops::log_failure(o.source_name, e.log());
            if (emu::region_loops::refusal_is_error()) {
              toolchain::compile_shared_object(tu, o.source_name, one_step, out);
              throw;
            }
          }
        }
      }
      toolchain::compile_shared_object(tu, o.source_name, one_step, out);
      return;
    }
    const fs::path object = out.string() + ".o";
    std::vector<std::string> compile_only = flags;
    compile_only.push_back("-c");
    toolchain::compile_shared_object(tu, o.source_name, compile_only, object);
    std::vector<std::string> link{cxx.path, "-shared", "-o", out.string(), object.string()};
    link.insert(link.end(), link_inputs.begin(), link_inputs.end());
    const toolchain::process_result linked = toolchain::run_process(link);
    fs::remove(object);
    if (linked.exit_code != 0) throw compile_error("the host compiler could not link " + o.source_name, linked.output);
  });
  hit = artifact.hit;
  // Loaded through the checked cache folder's descriptor, which the module keeps open.
  return detail::load_shared_object_module(artifact.loadable_path, d, artifact.directory);
}

// A cached NVRTC result: the lowered kernel names, then the CUBIN.
std::string serialize_cubin(const detail::nvrtc_output& out) {
  std::string s = "lockstep-cubin 1\n" + std::to_string(out.lowered_names.size()) + "\n";
  for (const auto& n : out.lowered_names) s += n + "\n";
  return s + out.cubin;
}

std::shared_ptr<detail::module_impl> build_for_gpu(const std::string& tu, const compile_options& o, const device& d,
                                                   const std::vector<std::string>& names, bool& hit) {
  const std::string arch = o.arch.empty() ? device_arch(d) : o.arch;
  // lockstep/nvrtc holds <cassert> and <cstdio> for NVRTC, which has no C
  // library headers, so kernels that include them compile for both targets.
  std::vector<std::string> options{"-arch=" + arch, "-std=" + o.std, "-lineinfo", "-I" + (include_directory() / "lockstep" / "nvrtc").string()};
  for (auto& f : common_flags(o)) options.push_back(f);
  for (auto& f : o.flags) options.push_back(f);
  std::ostringstream key;
  key << "lockstep-jit nvrtc " << detail::nvrtc_version() << "\nheaders " << headers_fingerprint() << "\noptions";
  for (auto& f : options) key << ' ' << f;
  key << "\nnames";
  for (auto& n : names) key << ' ' << n;
  key << "\n" << tu;
  const auto artifact = jit::cache_lookup_or_build(key.str(), ".cubin", [&](const fs::path& out) {
    std::ofstream(out, std::ios::binary) << serialize_cubin(detail::compile_with_nvrtc(tu, o.source_name, options, names));
  });
  hit = artifact.hit;
  std::istringstream in(artifact.contents);  // the bytes that were checked, not the file again
  std::string header, count_line;
  std::getline(in, header);
  std::getline(in, count_line);
  std::vector<std::string> lowered(std::stoul(count_line));
  for (auto& n : lowered) std::getline(in, n);
  const std::string cubin(std::istreambuf_iterator<char>(in), {});
  return detail::load_cubin_module(d, cubin, names, lowered);
}

}  // namespace

module compile(const std::string& source, const compile_options& options, const device& d) {
  const std::vector<std::string> names = options.names.empty() ? jit::discover_kernel_names(source) : options.names;
  const bool gpu = d.kind == device::kind_t::cuda;
  if (gpu) detail::backend_for(d);  // a clear device_unavailable before any compiling
  const std::string tu =
      jit::assemble_translation_unit(source, options.source_name, names, gpu ? jit::compile_target::nvrtc : jit::compile_target::host);

  // Modules already loaded by this process are reused without touching disk.
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<detail::module_impl>> loaded;
  std::ostringstream memo;
  memo << d.str() << '\n' << options.std << '\n' << options.arch << "\nchecked " << (options.checked && !gpu);
  for (const auto* list : {&options.defines, &options.include_dirs, &options.flags})
    for (const auto& item : *list) memo << '\n' << item;
  memo << '\n' << tu;
  std::lock_guard lock(mutex);
  if (auto impl = loaded[memo.str()].lock()) return module(impl, d, true);
  bool hit = false;
  auto impl = gpu ? build_for_gpu(tu, options, d, names, hit) : with_runtime_errors([&] { return build_for_cpu(tu, options, d, hit); });
  loaded[memo.str()] = impl;
  return module(impl, d, hit);
}

module builtin_kernels(const device& d, bool checked) {
  // In check mode the emulator runs the instrumented build of the kernels.
  checked = checked && d.kind == device::kind_t::cpu;
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<detail::module_impl>> loaded;
  std::lock_guard lock(mutex);
  auto& impl = loaded[d.str() + (checked ? " checked" : "")];
  if (!impl) {
    detail::backend_for(d);
    const fs::path path = library_directory() / (d.kind == device::kind_t::cuda ? "liblockstep_kernels_gpu.so"
                                                 : checked                      ? "liblockstep_kernels_checked.so"
                                                                                : "liblockstep_kernels.so");
    if (!fs::exists(path))
      throw device_unavailable("the library's kernels for " + d.str() + " are not installed (" + path.string() + " is missing)" +
                               (d.kind == device::kind_t::cuda ? "; build lockstep where nvcc is available to include the GPU kernels" : ""));
    impl = detail::load_shared_object_module(path.string(), d);
  }
  return module(impl, d, false);
}

}  // namespace lockstep
