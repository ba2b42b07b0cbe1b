// SPDX-License-Identifier: Apache-2.0
// How busy the machine is with work other than ours: the tuner reads it before its end-of-job
// confirmation and stores it with the run, so a figure taken on a busy machine says so.
#pragma once

#include <string>

namespace tensortune::measure {

struct MachineLoad {
  /// Mean number of runnable tasks on the machine outside this process and its children over
  /// the sampling window (/proc/loadavg's running count, sampled); -1 when it cannot be read.
  double others_runnable = -1;
  /// The 1-minute load average (-1 when unknown).
  double loadavg_1min = -1;
  /// Logical CPUs online.
  int cpus = 0;
  /// True when others_runnable is at least half a CPU.
  bool busy() const { return others_runnable >= 0.5; }
};

/// Samples the machine for `seconds` (every 10 ms). Linux only; elsewhere every figure is -1.
MachineLoad sample_machine_load(double seconds);

/// Samples for up to `max_wait_seconds` until a window of `window_seconds` is quiet (not busy),
/// and returns the last window's figures: a loaded machine delays a measurement that must be
/// taken quiet, but never for longer than that.
MachineLoad wait_for_quiet(double window_seconds, double max_wait_seconds);

}  // namespace tensortune::measure
