// The record a build of lockstep's carries with its module: for each kernel
// of a translation unit, whether the region-loop compiler gave it a loop body
// and, where not, why (src/host_build/engine_record.h writes it into the
// source; the block runner and the engine query read it, engine_of). One
// home for its text form: the writer and the reader below.
//
// The text, one field a line, tab-separated:
//   unit<TAB>why nothing of the unit runs as loops ("" where it was split)
//   kernel<TAB>name<TAB>file<TAB>line<TAB>loops|fibers<TAB>why fibers
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace lockstep::emu {

struct recorded_kernel {
  std::string name;  // unqualified, as the source spells it
  std::string file;
  unsigned line = 0;
  bool loops = false;
  std::string why_fibers;
};

struct engine_record {
  std::string unit_note;  // why the unit was not split, or ""
  std::vector<recorded_kernel> kernels;
};

// The C function the generated registration calls (defined in
// engine_record.cpp): `in_module` is an address inside the module that
// carries the record, `loaded` 1 at its load, 0 at its unload.
#define LOCKSTEP_ENGINE_RECORD_FUNCTION "lockstep_emu_engine_record"

namespace engine_record_text {
inline std::string one_line(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return out;
}

inline std::string write(const engine_record& r) {
  std::string out = "unit\t" + one_line(r.unit_note) + "\n";
  for (const recorded_kernel& k : r.kernels)
    out += "kernel\t" + one_line(k.name) + "\t" + one_line(k.file) + "\t" + std::to_string(k.line) + "\t" + (k.loops ? "loops" : "fibers") + "\t" +
           one_line(k.why_fibers) + "\n";
  return out;
}

inline engine_record read(std::string_view text) {
  engine_record r;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    std::vector<std::string> fields;
    for (std::size_t at = 0;;) {
      const std::size_t tab = line.find('\t', at);
      fields.emplace_back(line.substr(at, tab == std::string_view::npos ? std::string_view::npos : tab - at));
      if (tab == std::string_view::npos) break;
      at = tab + 1;
    }
    if (fields[0] == "unit" && fields.size() == 2) r.unit_note = fields[1];
    if (fields[0] == "kernel" && fields.size() == 6)
      r.kernels.push_back({fields[1], fields[2], unsigned(std::stoul(fields[3])), fields[4] == "loops", fields[5]});
  }
  return r;
}
}  // namespace engine_record_text

}  // namespace lockstep::emu
