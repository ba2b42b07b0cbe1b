// SPDX-License-Identifier: Apache-2.0
// The driver's compile-time lookup with 10^6 records (as bench/db_lookup: 1000 workloads x 2
// target identities x 500 records, one in eight a failure), timed per call of
// driver::Compiler::lookup for a tuned workload: workload key, best-record query, JSON parse and
// replay of the steps (no lowering, no LLVM). Prints the median and 99th percentile (goal:
// under 1 ms), and for reference the nearest-shape fallback (which also lowers) and the default.
#include "lookup_fixture.h"
#include "tensortune/database/database.h"
#include "tensortune/driver/compile.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/rng.h"
#include "tensortune/te/operators.h"

#include <exception>
#include <fmt/format.h>
#include <iostream>
#include <string>
#include <vector>

namespace {

using namespace tensortune;         // NOLINT(google-build-using-namespace): a small program
using namespace tensortune::bench;  // NOLINT(google-build-using-namespace)

constexpr int kLookups = 20000;

int run() {
  std::string path = temp_db_path("driver_lookup");
  target::Target target = target::Target::parse("llvm -cores=2");
  std::vector<database::TargetKey> targets = {driver::target_key(target),
                                              {"llvm -cores=2", "cpu=another machine"}};
  std::vector<te::Workload> workloads;
  workloads.reserve(kWorkloads);
  for (int w = 0; w < kWorkloads; ++w) {
    workloads.push_back(te::make_workload(spec_of(w)));
  }
  double t0 = now();
  {
    database::Database db = database::Database::open(path);
    fill(db, workloads, targets);
  }
  double fill_seconds = now() - t0;
  database::Database db = database::Database::open(path, true);
  driver::Compiler compiler(&db, target);
  support::Rng rng(2);
  size_t tuned = 0;
  Percentiles hit_cpu{};
  Percentiles hit = time_calls(
      kLookups,
      [&](int) {
        const te::Workload& w = workloads[static_cast<size_t>(rng.uniform_int(0, kWorkloads - 1))];
        tuned += compiler.lookup(w).source == driver::Source::Record ? 1 : 0;
      },
      &hit_cpu);
  // Where the time of a tuned lookup goes, step by step.
  const te::Workload& w0 = workloads[0];
  std::vector<std::string> keys;
  keys.reserve(workloads.size());
  for (const te::Workload& w : workloads) {
    keys.push_back(w.key());
  }
  Percentiles key_cost = time_calls(2000, [&](int) { (void)w0.key(); });
  Percentiles best_cost = time_calls(kLookups, [&](int) {
    (void)db.best(keys[static_cast<size_t>(rng.uniform_int(0, kWorkloads - 1))], targets[0], 3);
  });
  database::Record best = db.best(keys[0], targets[0], 1).at(0);
  Percentiles parse_cost =
      time_calls(2000, [&](int) { (void)schedule::parse_schedule(best.schedule); });
  schedule::Schedule parsed = schedule::parse_schedule(best.schedule);
  Percentiles replay_cost =
      time_calls(2000, [&](int) { (void)schedule::apply_steps(w0, parsed.steps); });
  std::vector<te::Workload> untuned;
  untuned.reserve(50);
  for (int w = 0; w < 50; ++w) {
    untuned.push_back(te::make_workload(fmt::format("matmul:M={},N=100,K=100", 30 + w)));
  }
  Percentiles adapted = time_calls(50, [&](int i) {
    compiler.lookup(untuned[static_cast<size_t>(i)],
                    fmt::format("matmul:M={},N=100,K=100", 30 + i));
  });
  te::Workload relu = te::make_workload("relu:M=64,N=64");
  Percentiles fallback = time_calls(1000, [&](int) { compiler.lookup(relu, "relu:M=64,N=64"); });

  std::cout << fmt::format(
                   "driver_lookup: {} records ({} workloads x 2 targets x {}), filled in "
                   "{:.1f} s\n",
                   db.count_records(), kWorkloads, kRecordsPerPair, fill_seconds)
            << fmt::format(
                   "  tuned workload (key + best + parse + replay): {} over {} lookups "
                   "({} from records); goal < 1000 us\n",
                   us(hit), kLookups, tuned)
            << fmt::format("    thread CPU time of the same lookups: {}\n", us(hit_cpu))
            << fmt::format(
                   "    medians: workload key {:.1f} us, parse {:.1f} us, replay {:.1f} "
                   "us; the query alone, best(key, target, 3): {}\n",
                   key_cost.median * 1e6, parse_cost.median * 1e6, replay_cost.median * 1e6,
                   us(best_cost))
            << fmt::format(
                   "  untuned shape, nearest record adapted + lowered: {} over 50 (the "
                   "first builds the operator's neighbour list)\n",
                   us(adapted))
            << fmt::format("  operator never tuned, default schedule: {}\n", us(fallback));
  remove_db(path);
  return tuned == static_cast<size_t>(kLookups) ? 0 : 1;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::cerr << "driver_lookup: error: " << e.what() << "\n";
    return 1;
  }
}
