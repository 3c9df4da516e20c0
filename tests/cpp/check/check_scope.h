// Turns check mode on (all four checks) for a scope, with a thread order.
#pragma once
#include "lockstep/emu/check.h"
#include "lockstep/emu/options.h"

class check_scope {
 public:
  explicit check_scope(lockstep::emu::thread_order order = lockstep::emu::thread_order::forward) : saved_(lockstep::emu::get_options()) {
    lockstep::emu::options o = saved_;
    o.checks = lockstep::emu::all_checks;
    o.order = order;
    o.seed = 7;
    lockstep::emu::set_options(o);
  }
  ~check_scope() { lockstep::emu::set_options(saved_); }
  check_scope(const check_scope&) = delete;
  check_scope& operator=(const check_scope&) = delete;

 private:
  lockstep::emu::options saved_;
};
