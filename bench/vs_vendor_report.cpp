// SPDX-License-Identifier: Apache-2.0
// bench/vs_vendor's report: the ratio table, the geomean of each group against issue 6's goal,
// the oneDNN variants timed, and the JSON document.
#include "vs_vendor_report.h"

#include "vs_vendor_cases.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace tensortune::bench {
namespace {

struct GroupSummary {
  Goal goal;
  int cases = 0;
  /// The group's cases in all_cases() (fewer ran under --only).
  int total = 0;
  int ok = 0;
  double geomean = 0;
  double min = 0;
  /// % of peak of RunInfo::peak_case when the group holds it (GEMM), else < 0.
  double peak_share = -1;
  bool met = false;
};

GroupSummary summarize(const Goal& goal,
                       const RunInfo& info,
                       const std::vector<CaseResult>& results) {
  GroupSummary s;
  s.goal = goal;
  double log_sum = 0;
  s.min = 1e300;
  for (const Case& c : all_cases()) {
    s.total += c.group == goal.group ? 1 : 0;
  }
  for (const CaseResult& r : results) {
    if (r.c->group != goal.group) {
      continue;
    }
    ++s.cases;
    if (!r.ok()) {
      continue;
    }
    ++s.ok;
    log_sum += std::log(r.ratio());
    s.min = std::min(s.min, r.ratio());
    if (r.c->name == info.peak_case && info.peak_gflops > 0) {
      s.peak_share = r.gflops() / info.peak_gflops;
    }
  }
  if (s.ok == 0) {
    return s;
  }
  s.geomean = std::exp(log_sum / s.ok);
  s.met = s.ok == s.total && (goal.each ? s.min : s.geomean) >= goal.ratio &&
          (s.peak_share < 0 || s.peak_share >= info.peak_goal);
  return s;
}

std::string schedule_label(const CaseResult& r) {
  return fmt::format("{} (n={})", r.source, r.records);
}

}  // namespace

std::vector<Goal> issue_goals() {
  return {
      {"GEMM", 1.0, false, "geomean >= 1.0x oneDNN; gemm_1024 >= 85% of FMA peak"},
      {"odd GEMM", 1.0, true, "each >= 1.0x oneDNN"},
      {"ResNet-18 conv", 1.0, false,
       "geomean >= 1.0x oneDNN (preferred layout, activation reorders counted)"},
      {"fused", 1.3, true, "each >= 1.3x oneDNN op by op"},
      {"depthwise/pointwise", 1.0, true, "each >= 1.0x oneDNN"},
  };
}

void print_report(std::ostream& out, const RunInfo& info, const std::vector<CaseResult>& results) {
  out << fmt::format(
      "vs_vendor: float32, {} threads, target '{}', OMP_WAIT_POLICY={}, FMA peak {:.1f} GFLOP/s "
      "({}); medians of the timing protocol; ratio = baseline time / ours (>1: ours faster)\n\n",
      info.threads, info.target, info.omp_wait_policy, info.peak_gflops, info.peak_isa);
  out << fmt::format("{:<30}{:<22}{:>10}{:>11}{:>9}{:>11}{:>10}  {}\n", "case", "schedule",
                     "ours ms", "oneDNN ms", "GFLOP/s", "vs oneDNN", "vs BLAS", "oneDNN baseline");
  for (const CaseResult& r : results) {
    if (!r.ok()) {
      out << fmt::format("{:<30}{}\n", r.c->name, r.status);
      continue;
    }
    std::string blas = r.openblas_seconds > 0
                           ? fmt::format("{:.2f}x", r.openblas_seconds / r.ours_seconds)
                           : std::string("-");
    out << fmt::format("{:<30}{:<22}{:>10.3f}{:>11.3f}{:>9.1f}{:>10.2f}x{:>10}  {}\n", r.c->name,
                       schedule_label(r), r.ours_seconds * 1e3, r.vendor_seconds * 1e3, r.gflops(),
                       r.ratio(), blas, r.vendor_name);
  }
  out << "\nper group (issue 6's goals):\n";
  for (const Goal& goal : issue_goals()) {
    GroupSummary s = summarize(goal, info, results);
    if (s.cases == 0) {
      continue;
    }
    std::string verdict = s.ok == 0 ? "no figures"
                          : s.ok < s.total
                              ? fmt::format("incomplete ({} of {} cases measured)", s.ok, s.total)
                              : (s.met ? "met" : "MISSED");
    std::string peak = s.peak_share >= 0 ? fmt::format(", {} at {:.0f}% of peak", info.peak_case,
                                                       100 * s.peak_share)
                                         : std::string();
    out << fmt::format("  {:<22} geomean {:.2f}x, min {:.2f}x{}  goal: {}  -> {}\n", goal.group,
                       s.geomean, s.ok > 0 ? s.min : 0.0, peak, goal.text, verdict);
  }
  out << "\noneDNN variants (ms; * = baseline; (info) = not a baseline):\n";
  for (const CaseResult& r : results) {
    if (!r.ok()) {
      continue;
    }
    out << fmt::format("  {}\n", r.c->name);
    for (const VariantTime& v : r.variants) {
      out << fmt::format("    {:<40}{:>10.3f}{}  {}\n", v.name, v.seconds * 1e3,
                         v.name == r.vendor_name ? " *" : (v.primary ? "  " : " (info)"), v.impl);
    }
  }
}

support::Json report_json(const RunInfo& info, const std::vector<CaseResult>& results) {
  support::Json doc = support::Json::object();
  doc["threads"] = info.threads;
  doc["target"] = info.target;
  doc["db"] = info.db;
  doc["tune_trials"] = info.tune_trials;
  doc["omp_wait_policy"] = info.omp_wait_policy;
  doc["peak_gflops"] = info.peak_gflops;
  doc["peak_isa"] = info.peak_isa;
  support::Json cases = support::Json::array();
  for (const CaseResult& r : results) {
    support::Json j = support::Json::object();
    j["name"] = r.c->name;
    j["group"] = r.c->group;
    j["spec"] = r.c->spec;
    j["status"] = r.status;
    if (r.ok()) {
      j["schedule"] = r.source;
      j["tuned"] = r.tuned;
      j["records"] = r.records;
      j["record_id"] = r.record_id;
      j["flop"] = r.flop;
      j["ours_seconds"] = r.ours_seconds;
      j["ours_gflops"] = r.gflops();
      j["onednn_seconds"] = r.vendor_seconds;
      j["onednn_variant"] = r.vendor_name;
      j["ratio_onednn"] = r.ratio();
      if (r.openblas_seconds > 0) {
        j["openblas_seconds"] = r.openblas_seconds;
        j["ratio_openblas"] = r.openblas_seconds / r.ours_seconds;
      }
      if (r.c->name == info.peak_case && info.peak_gflops > 0) {
        j["share_of_peak"] = r.gflops() / info.peak_gflops;
      }
      support::Json variants = support::Json::array();
      for (const VariantTime& v : r.variants) {
        support::Json vj = support::Json::object();
        vj["name"] = v.name;
        vj["impl"] = v.impl;
        vj["primary"] = v.primary;
        vj["seconds"] = v.seconds;
        variants.push_back(std::move(vj));
      }
      j["onednn_variants"] = std::move(variants);
    }
    cases.push_back(std::move(j));
  }
  doc["cases"] = std::move(cases);
  support::Json groups = support::Json::array();
  for (const Goal& goal : issue_goals()) {
    GroupSummary s = summarize(goal, info, results);
    if (s.cases == 0) {
      continue;
    }
    support::Json g = support::Json::object();
    g["group"] = goal.group;
    g["goal"] = goal.text;
    g["cases"] = s.total;
    g["measured"] = s.ok;
    g["geomean_ratio"] = s.geomean;
    g["min_ratio"] = s.ok > 0 ? s.min : 0.0;
    if (s.peak_share >= 0) {
      g["peak_share"] = s.peak_share;
    }
    g["met"] = s.met;
    groups.push_back(std::move(g));
  }
  doc["groups"] = std::move(groups);
  return doc;
}

}  // namespace tensortune::bench
