// What the workers of one checked launch share: the kernel, the memory it may
// touch (frozen when the launch starts), and the findings, which become a
// check_error when the launch ends.
#pragma once
#include <cstdint>
#include <exception>
#include <mutex>
#include <vector>

#include "check/device_memory.h"
#include "check/finding.h"
#include "check/thread_memory.h"
#include "execution/kernel_info.h"
#include "lockstep/emu/vector_types.h"

namespace lockstep::emu::check {

// Thrown (or set as the block's error) when a finding stops a block: the
// findings say what happened, so the launch reports those instead.
struct block_stopped {};

// Findings are kept per instruction (an unrolled loop has several for one
// line) and folded by source line when the launch ends, then listed.
inline constexpr std::size_t kept_findings = 256;
inline constexpr std::size_t listed_findings = 20;

class launch_session {
 public:
  launch_session(const kernel_info& kernel, const void* kernel_address, unsigned checks, dim3 grid, dim3 block);

  bool wants(check_tool tool) const { return checks_ & static_cast<unsigned>(tool); }
  unsigned checks() const { return checks_; }
  const kernel_info& kernel() const { return kernel_; }
  const void* kernel_address() const { return kernel_address_; }
  const memory_snapshot& memory() const { return memory_; }
  bool is_static_data(std::uintptr_t a) const { return static_data_.contains(a) || launcher_stack_.contains(a); }
  // Global-memory racecheck: launch_tag (1..global_races::tags) tells this
  // launch's records from older ones; 0 when the grid is too large for them.
  std::uint64_t launch_tag() const { return launch_tag_; }
  // A cooperative launch's grid.sync() released: what came before it in any
  // block is ordered before what comes after, as between two launches, so
  // the records take a new tag. Called while every block waits at it.
  void grid_synchronised();
  dim3 grid() const { return grid_; }
  dim3 block() const { return block_; }

  // Folds a block's findings into the launch's (thread-safe); `unlisted`
  // counts findings the block did not keep; `guess_sites`: plain reads the
  // block's threads followed with an atomic update of the word they read
  // (block_checker.h's last_read).
  void add(std::vector<finding>& found, std::size_t unlisted, std::vector<std::uintptr_t>& guess_sites);

  // After the launch: throws check_error if anything was found (mentioning
  // `failure` too, if the launch also failed otherwise); else rethrows
  // `failure` if set.
  void finish(std::exception_ptr failure);

 private:
  void drop_excused_reads();                    // findings whose read proved a guess (finding::unless_guess_at)
  std::vector<check_report> located_reports();  // the findings with their source lines, folded by line
  std::string message(const std::vector<check_report>& reports, std::exception_ptr failure) const;

  const kernel_info& kernel_;
  const void* kernel_address_;
  unsigned checks_;
  dim3 grid_, block_;
  memory_snapshot memory_;
  address_ranges static_data_;
  address_range launcher_stack_;
  std::uint64_t launch_tag_ = 0;

  std::mutex mutex_;
  std::vector<finding> findings_;
  std::vector<std::uintptr_t> guess_sites_;
  std::size_t total_ = 0;
};

}  // namespace lockstep::emu::check
