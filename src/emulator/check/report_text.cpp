// check_report in words: what check_error::what() lists.
#include <sstream>

#include "lockstep/emu/check.h"

namespace lockstep::emu {
namespace {
std::ostream& operator<<(std::ostream& out, const uint3& v) { return out << "(" << v.x << ", " << v.y << ", " << v.z << ")"; }
}  // namespace

const char* to_string(check_tool tool) {
  switch (tool) {
    case check_tool::memcheck:
      return "memcheck";
    case check_tool::racecheck:
      return "racecheck";
    case check_tool::synccheck:
      return "synccheck";
    case check_tool::initcheck:
      return "initcheck";
  }
  return "?";
}

const char* to_string(hazard race) {
  switch (race) {
    case hazard::none:
      return "";
    case hazard::read_after_write:
      return "read-after-write";
    case hazard::write_after_read:
      return "write-after-read";
    case hazard::write_after_write:
      return "write-after-write";
  }
  return "?";
}

std::string source_line::str() const {
  if (file.empty()) return "?";
  return file + ":" + std::to_string(line);
}

std::string check_report::kind() const {
  std::string k = to_string(tool);
  if (race != hazard::none) k += std::string(" ") + to_string(race);
  return k;
}

std::string check_report::str() const {
  std::ostringstream s;
  s << kind() << " at " << at.str() << ": " << what;
  if (kernel.empty()) return s.str();  // a CUDA API call's finding
  s << "\n    kernel '" << kernel << "', block " << block << ", thread " << thread;
  if (address)
    s << "; " << (write ? "write" : "read") << " of " << size << " bytes at 0x" << std::hex << address << std::dec << " (" << memory << ")";
  if (!other.file.empty()) s << "; the other side: " << other.str();
  if (repeats > 1) s << "; seen " << repeats << " times";
  return s.str();
}

}  // namespace lockstep::emu
