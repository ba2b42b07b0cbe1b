// SPDX-License-Identifier: Apache-2.0
// The outcome of measuring one candidate: a status with its message, every timed repeat and
// their median, and where the time went. A failed trial is a result, never an exception.
#pragma once

#include "tensortune/support/json.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::measure {

enum class MeasureStatus {
  Ok,              ///< verified and timed
  CompileError,    ///< code generation, the LLVM build or loading the object failed
  CompileTimeout,  ///< the build took longer than the builder's timeout
  RuntimeError,    ///< the kernel returned non-zero, or crashed its worker (with the signal)
  RunTimeout,      ///< no result within the runner's timeout; the worker was killed
  WrongResult,     ///< an output differs from the reference, or an element was left unwritten
};

/// "Ok", "CompileError", ... (the names stored in records).
const char* status_name(MeasureStatus status);
/// Inverse of status_name; throws UserError listing the accepted names.
MeasureStatus parse_status(const std::string& name);

struct MeasureResult {
  MeasureStatus status = MeasureStatus::Ok;
  /// Empty for Ok; otherwise one or more lines saying what went wrong.
  std::string message;
  /// RuntimeError: the signal that killed the worker (SIGSEGV = 11, ...), 0 when it returned.
  int signal = 0;
  /// Seconds per call of each timed repeat, in the order they ran.
  std::vector<double> repeats;
  /// The median of `repeats` (the result); 0 unless Ok.
  double median_seconds = 0;
  /// Calls per repeat.
  int64_t number = 0;
  /// Code generation and compilation of this candidate (its own work, not the batch's wall time).
  double build_seconds = 0;
  /// The timed part of the run: calibration and repeats.
  double run_seconds = 0;
  /// The check run (also the warm-up) and the comparison with the reference.
  double verify_seconds = 0;
  /// Everything this candidate cost the measurer, transfers and worker restarts included.
  double wall_seconds = 0;

  bool ok() const { return status == MeasureStatus::Ok; }
  support::Json to_json() const;
  /// Throws UserError naming the field for a malformed document.
  static MeasureResult from_json(const support::Json& json);
};

}  // namespace tensortune::measure
