#include "engine_record.h"

#include "toolchain/hash.h"

namespace lockstep::host_build {
namespace region_loops = emu::region_loops;

emu::engine_record record_of_split(const region_loops::split_result& result) {
  emu::engine_record r{result.unit_note, {}};
  for (const region_loops::kernel_decision& k : result.kernels) r.kernels.push_back({k.name, k.file, k.line, k.loops, k.why_fibers});
  return r;
}

emu::engine_record record_of_refused_split(const region_loops::split_result& result) {
  emu::engine_record r = record_of_split(result);
  for (emu::recorded_kernel& k : r.kernels)
    if (k.loops) {
      k.loops = false;
      k.why_fibers =
          "the host compiler refused the region loops written for its translation unit, which was built as written "
          "(LOCKSTEP_REGION_LOOPS_LOG=1 shows the compiler's errors; please report them)";
    }
  return r;
}

emu::engine_record record_of_unsplit(const std::string& why) { return {why, {}}; }

namespace {
std::string c_string_literal(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '\\' || c == '"')
      out += std::string("\\") + c;
    else if (c == '\n')
      out += "\\n\"\n    \"";
    else if (c == '\t')
      out += "\\t";
    else if (static_cast<unsigned char>(c) < 0x20)
      out += ' ';
    else
      out += c;
  }
  return out + "\"";
}
}  // namespace

std::string engine_record_source(const emu::engine_record& record, const std::string& source_name) {
  const std::string text = emu::engine_record_text::write(record);
  const std::string name = "lockstep_engine_record_" + toolchain::hash_hex(source_name + "\n" + text);
  // `this` is an address in the module: the emulator finds the module's
  // kernels by it (dladdr), as it finds their symbols.
  return "\n// lockstep: how this unit's kernels run (src/host_build/engine_record.h)\nextern \"C\" void " +
         std::string(LOCKSTEP_ENGINE_RECORD_FUNCTION) + "(const void* in_module, const char* record, int loaded);\nnamespace {\nstruct " + name +
         " {\n  static constexpr const char* record =\n    " + c_string_literal(text) + ";\n  " + name + "() { " + LOCKSTEP_ENGINE_RECORD_FUNCTION +
         "(this, record, 1); }\n  ~" + name + "() { " + LOCKSTEP_ENGINE_RECORD_FUNCTION + "(this, record, 0); }\n} " + name + "_;\n}  // namespace\n";
}

}  // namespace lockstep::host_build
