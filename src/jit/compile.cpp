// lockstep::compile and lockstep::builtin_kernels: from source (or the
// library's prebuilt kernels) to a loaded module, through the disk cache.
#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "cache.h"
#include "cpu_module_key.h"
#include "emulator/compile_time/region_loops/region_loops.h"
#include "host_build/engine_record.h"
#include "host_build/flags.h"
#include "host_build/headers.h"
#include "host_build/region_loops_build.h"
#include "lockstep/emu/options.h"
#include "lockstep/jit/region_loops_availability.h"
#include "nvrtc.h"
#include "runtime/backend.h"
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
    if (const char* env = std::getenv(host_build::include_dir_variable)) candidates.emplace_back(env);
    candidates.push_back(library_directory() / "include");
#ifdef LOCKSTEP_SOURCE_INCLUDE_DIR
    candidates.emplace_back(LOCKSTEP_SOURCE_INCLUDE_DIR);
#endif
    fs::path found = host_build::first_with_lockstep_headers(candidates);
    if (found.empty())
      throw device_unavailable("lockstep's headers (lockstep/cuda.h) were not found beside " + library_directory().string() + "; set " +
                               host_build::include_dir_variable + " to the folder that contains lockstep/cuda.h");
    return found;
  }();
  return dir;
}

const std::string& headers_fingerprint() {
  static const std::string fingerprint = host_build::headers_fingerprint(include_directory());
  return fingerprint;
}

// The region-loop compiler's parse of a JIT translation unit reads lockstep's
// headers from a file Clang wrote once for the prelude every such unit begins
// with (kept in the cache); "" where that cannot be had, and the parse reads
// them as text, about 0.4 s more.
std::string precompiled_prelude(const std::vector<std::string>& parse_flags, std::shared_ptr<const jit::checked_directory>& keep) {
  static const std::string written = host_build::headers_written(include_directory());
  const std::string prelude(jit::host_prelude);
  try {
    const auto artifact = jit::cache_lookup_or_build(host_build::prelude_key(prelude, parse_flags, headers_fingerprint(), written), ".pch",
                                                     [&](const fs::path& out) { host_build::write_prelude(prelude, parse_flags, out.string()); });
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

// How the JIT's sources come to the region-loop split (host_build::split_policy):
// a translation unit begins with lockstep's headers, whose precompiled prelude
// makes every parse cheap; the engine of this process is known when it builds.
constexpr host_build::split_policy jit_split_policy{.parse_only_if_mentions_barrier = false, .honour_engine_option = true};

// Builds `tu` as a shared object at `out` (one step: compile and link): split
// into region loops where `split`, as written where not or where the host
// compiler refuses the split.
// Every module carries the record of how its kernels run (host_build/engine_record.h).
void build_one_step(const std::string& tu, const compile_options& o, const std::vector<std::string>& flags, const std::vector<std::string>& one_step,
                    const std::string& why_not_split, const fs::path& out) {
  auto as_written = [&](const emu::engine_record& record) {
    toolchain::compile_shared_object(tu + host_build::engine_record_source(record, o.source_name), o.source_name, one_step, out);
  };
  if (!why_not_split.empty()) return as_written(host_build::record_of_unsplit(why_not_split));
  const std::vector<std::string> parse_flags = host_build::parse_flags_of(flags);
  std::shared_ptr<const jit::checked_directory> prelude_directory;
  const std::string prelude = tu.starts_with(jit::host_prelude) ? precompiled_prelude(parse_flags, prelude_directory) : "";
  const auto result = emu::region_loops::split_kernels(tu, o.source_name, parse_flags, prelude);
  emu::region_loops::log(o.source_name, result);
  if (result.split.empty()) return as_written(host_build::record_of_split(result));
  std::exception_ptr refusal;
  const auto build_split = [&]() -> std::optional<std::string> {
    try {
      toolchain::compile_shared_object(result.source + host_build::engine_record_source(host_build::record_of_split(result), o.source_name),
                                       o.source_name, one_step, out);
      return std::nullopt;
    } catch (const toolchain::compile_failure& e) {
      refusal = std::current_exception();
      return e.log();
    }
  };
  if (host_build::build_split_else_as_written(o.source_name, build_split, [&] { as_written(host_build::record_of_refused_split(result)); }))
    std::rethrow_exception(refusal);
}

// Check mode: compile and link are two steps, so that the sanitizer's own
// runtime is not linked (the instrumentation's hooks are liblockstep's).
void build_checked(const std::string& tu, const compile_options& o, const std::vector<std::string>& flags,
                   const std::vector<std::string>& link_inputs, const std::string& why_not_split, const fs::path& out) {
  const fs::path object = out.string() + ".o";
  std::vector<std::string> compile_only = flags;
  compile_only.push_back("-c");
  toolchain::compile_shared_object(tu + host_build::engine_record_source(host_build::record_of_unsplit(why_not_split), o.source_name), o.source_name,
                                   compile_only, object);
  std::vector<std::string> link{toolchain::find_host_compiler().path, "-shared", "-o", out.string(), object.string()};
  link.insert(link.end(), link_inputs.begin(), link_inputs.end());
  const toolchain::process_result linked = toolchain::run_process(link);
  fs::remove(object);
  if (linked.exit_code != 0) throw compile_error("the host compiler could not link " + o.source_name, linked.output);
}

std::shared_ptr<detail::module_impl> build_for_cpu(const std::string& tu, const compile_options& o, const device& d, bool& hit) {
  // The JIT's own flags are first, so that compile_options::flags, last, win.
  std::vector<std::string> flags{"-std=" + host_build::cxx20_dialect(o.std, host_build::older_dialect::same_family_cxx20)};
  for (auto& f : host_build::optimisation_defaults({}, /*position_independent=*/true)) flags.push_back(f);
  flags.push_back(host_build::cuda_headers_first(include_directory()));
  flags.insert(flags.end(), std::begin(toolchain::kernel_code_flags), std::end(toolchain::kernel_code_flags));
  for (auto& f : host_build::native_target_flags(/*user_names_a_target=*/false)) flags.push_back(f);
  const bool checked = o.checked;
  if (checked)
    for (const auto& f : host_build::check_flags()) flags.push_back(f);
  for (auto& f : common_flags(o)) flags.push_back(f);
  for (auto& f : o.flags) flags.push_back(f);
  // The module links liblockstep.so, so it shares this process's emulator;
  // --no-as-needed keeps that link where the compiler defaults to --as-needed.
  const std::vector<std::string> link_inputs{"-Wl,--no-as-needed", (library_directory() / "liblockstep.so").string()};
  const std::string why_not_split = host_build::why_not_split({.checked = checked,
                                                               .engine_allows_loops = emu::get_options().region_loops,
                                                               .has_precompiled_prelude = tu.starts_with(jit::host_prelude),
                                                               .own_text = tu},
                                                              jit_split_policy);
  const bool split = why_not_split.empty();
  const std::string key = jit::cpu_module_key(host_build::host_key(), headers_fingerprint(), flags, link_inputs, tu, split);
  const auto artifact = jit::cache_lookup_or_build(key, ".so", [&](const fs::path& out) {
    if (checked) return build_checked(tu, o, flags, link_inputs, why_not_split, out);
    std::vector<std::string> one_step = flags;
    one_step.push_back("-shared");
    one_step.insert(one_step.end(), link_inputs.begin(), link_inputs.end());
    build_one_step(tu, o, flags, one_step, why_not_split, out);
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

std::string region_loops_unavailable_reason() { return emu::region_loops::unavailable_reason(); }

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
