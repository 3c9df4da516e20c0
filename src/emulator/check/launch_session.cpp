#include "check/launch_session.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "check/global_races.h"
#include "check/symbolizer.h"

namespace lockstep::emu::check {
namespace {

std::uint64_t next_launch_tag(memory_snapshot& memory) {
  static std::atomic<std::uint64_t> launches{0};
  const std::uint64_t tag = launches++ % global_races::tags + 1;
  // A tag comes round again after global_races::tags launches: forget the
  // records that carry it, so they are not taken for this launch's.
  if (tag == 1)
    for (device_range& r : memory.live)
      if (r.races) std::memset(static_cast<void*>(r.races.get()), 0, (r.end - r.begin + 3) / 4 * sizeof(word_races));
  return tag;
}

bool grid_fits_race_records(dim3 grid) { return std::uint64_t(grid.x) * grid.y * grid.z <= global_races::max_blocks; }

}  // namespace

launch_session::launch_session(const kernel_info& kernel, const void* kernel_address, unsigned checks, dim3 grid, dim3 block)
    : kernel_(kernel), kernel_address_(kernel_address), checks_(checks), grid_(grid), block_(block) {
  const bool races = wants(check_tool::racecheck) && grid_fits_race_records(grid);
  memory_ = snapshot(races);
  if (races) launch_tag_ = next_launch_tag(memory_);
  static_data_ = static_data();
  launcher_stack_ = own_stack();
}

void launch_session::grid_synchronised() {
  if (launch_tag_) launch_tag_ = next_launch_tag(memory_);
}

void launch_session::add(std::vector<finding>& found, std::size_t unlisted, std::vector<std::uintptr_t>& guess_sites) {
  std::lock_guard lock(mutex_);
  for (std::uintptr_t pc : guess_sites)
    if (std::find(guess_sites_.begin(), guess_sites_.end(), pc) == guess_sites_.end()) guess_sites_.push_back(pc);
  guess_sites.clear();
  total_ += unlisted;
  for (finding& f : found) {
    total_ += f.report.repeats;
    bool folded = false;
    for (finding& kept : findings_)
      if (kept.fold_key() == f.fold_key()) {
        kept.report.repeats += f.report.repeats;
        folded = true;
        break;
      }
    if (!folded && findings_.size() < kept_findings) findings_.push_back(std::move(f));
  }
  found.clear();
}

void launch_session::drop_excused_reads() {
  std::erase_if(findings_, [&](const finding& f) {
    const bool excused = f.unless_guess_at && std::find(guess_sites_.begin(), guess_sites_.end(), f.unless_guess_at) != guess_sites_.end();
    if (excused) total_ -= f.report.repeats;
    return excused;
  });
}

void launch_session::finish(std::exception_ptr failure) {
  std::lock_guard lock(mutex_);
  drop_excused_reads();
  std::vector<check_report> reports = located_reports();
  if (reports.empty()) {
    if (!failure) return;
    try {
      std::rethrow_exception(failure);
    } catch (const block_stopped&) {
      throw kernel_error(cudaErrorLaunchFailure, "lockstep check stopped a block of kernel '" + kernel_.name + "' but kept no finding");
    }
  }
  const std::string text = message(reports, failure);
  // lockstep-check learns of findings through this file even if the program catches the error.
  if (const char* path = std::getenv("LOCKSTEP_CHECK_REPORT"))
    if (std::FILE* out = std::fopen(path, "a")) {
      std::fprintf(out, "%s\n", text.c_str());
      std::fclose(out);
    }
  const bool memory_fault = std::any_of(reports.begin(), reports.end(), [](const check_report& r) { return r.tool == check_tool::memcheck; });
  throw check_error(memory_fault ? cudaErrorIllegalAddress : cudaErrorLaunchFailure, text, std::move(reports), total_);
}

std::vector<check_report> launch_session::located_reports() {
  std::vector<std::uintptr_t> addresses;
  for (const finding& f : findings_) {
    addresses.insert(addresses.end(), std::begin(f.stack), std::end(f.stack));
    addresses.push_back(f.other_pc);
  }
  prefetch_lines(addresses);

  // Reports of the same kind at the same lines (different instructions of
  // one line, as an unrolled loop has) are one finding.
  std::vector<check_report> reports;
  for (finding& f : findings_) {
    check_report r = std::move(f.report);
    r.kernel = kernel_.name;
    if (!f.located) r.at = user_line(std::vector<std::uintptr_t>(std::begin(f.stack), std::end(f.stack)));
    if (f.other_pc) r.other = user_line({f.other_pc});
    if (f.only_if_lines_differ && !r.at.file.empty() && r.at.file == r.other.file && r.at.line == r.other.line) {
      total_ -= r.repeats;
      continue;
    }
    auto same_lines = [&r](const check_report& kept) {
      return kept.kind() == r.kind() && kept.at.file == r.at.file && kept.at.line == r.at.line && kept.other.file == r.other.file &&
             kept.other.line == r.other.line;
    };
    if (auto kept = std::find_if(reports.begin(), reports.end(), same_lines); kept != reports.end())
      kept->repeats += r.repeats;
    else if (reports.size() < listed_findings)
      reports.push_back(std::move(r));
  }
  findings_.clear();
  return reports;
}

std::string launch_session::message(const std::vector<check_report>& reports, std::exception_ptr failure) const {
  std::ostringstream text;
  text << "lockstep check: kernel '" << kernel_.name << "' has " << total_ << (total_ == 1 ? " finding" : " findings");
  if (total_ > reports.size())
    text << " (" << reports.size() << (reports.size() == 1 ? " kind at one place" : " kinds and places")
         << " listed, each with how often it occurred)";
  text << ":";
  for (const check_report& r : reports) text << "\n  " << r.str();
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const block_stopped&) {
      text << "\nA finding that would end the kernel on a GPU stopped its block; blocks after it did not run.";
    } catch (const std::exception& e) {
      text << "\nThe launch also failed: " << e.what();
    } catch (...) {
      text << "\nThe launch also failed with an unknown exception.";
    }
  }
  return text.str();
}

}  // namespace lockstep::emu::check
