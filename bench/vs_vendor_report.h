// SPDX-License-Identifier: Apache-2.0
// bench/vs_vendor's cases and results, and their report: the table of ratios, the per-group
// geomeans against issue 6's goals, the oneDNN variants, and the JSON document of every figure.
#pragma once

#include "tensortune/support/json.h"
#include "vs_vendor_dnnl.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace tensortune::bench {

/// What the tensortune workload computes, hence which baselines apply.
enum class CaseKind : uint8_t { Gemm, Dense, Conv };

/// One benchmark case: a tensortune workload spec and the same problem for oneDNN (its shape;
/// the buffer pointers are set when it runs).
struct Case {
  std::string name;
  std::string group;
  std::string spec;
  /// Other forms computing the same output from the same inputs (Winograd for a 3x3 stride-1
  /// conv): tuned as well, and the form whose stored best is the fastest is the one timed.
  std::vector<std::string> alternatives;
  CaseKind kind = CaseKind::Gemm;
  GemmProblem gemm;
  ConvProblem conv;
};

/// A oneDNN variant's median time.
struct VariantTime {
  std::string name, impl;
  bool primary = true;
  double seconds = 0;
};

/// Every figure of one case. Ratios are baseline seconds / ours (> 1: tensortune is faster).
struct CaseResult {
  const Case* c = nullptr;
  /// "ok", "skipped: WHY" (nothing measured) or "error: WHY".
  std::string status = "ok";
  /// "record #12", "adapted #7" (another shape's record) or "untuned" (the default schedule).
  std::string source;
  bool tuned = false;
  /// Records of this workload and target in the database (failed ones included).
  int64_t records = 0;
  int64_t record_id = 0;
  double flop = 0;
  double ours_seconds = 0;
  std::vector<VariantTime> variants;
  /// The fastest primary oneDNN variant: the baseline.
  std::string vendor_name;
  double vendor_seconds = 0;
  /// OpenBLAS cblas_sgemm (GEMM cases only; 0 otherwise).
  double openblas_seconds = 0;

  bool ok() const { return status == "ok"; }
  double ratio() const { return vendor_seconds / ours_seconds; }
  double gflops() const { return flop / ours_seconds / 1e9; }
};

/// Issue 6's goal for one group of cases.
struct Goal {
  std::string group;
  /// The least ratio to oneDNN.
  double ratio = 1.0;
  /// True: every case must reach it; false: the group's geomean must.
  bool each = false;
  std::string text;
};

/// The run's context, printed in the header and stored in the JSON.
struct RunInfo {
  int threads = 2;
  std::string target;
  std::string db;
  int64_t tune_trials = 0;
  std::string omp_wait_policy;
  double peak_gflops = 0;
  std::string peak_isa;
  /// The case whose % of peak is checked (gemm_1024) and the least share.
  std::string peak_case = "gemm_1024";
  double peak_goal = 0.85;
};

/// The issue's goals, one per group, in report order.
std::vector<Goal> issue_goals();

/// The table (one line per case), the group summary and the oneDNN variants of each case.
void print_report(std::ostream& out, const RunInfo& info, const std::vector<CaseResult>& results);

/// Every figure of the run as one JSON document.
support::Json report_json(const RunInfo& info, const std::vector<CaseResult>& results);

}  // namespace tensortune::bench
