// SPDX-License-Identifier: Apache-2.0
// The driver's compile-time lookup with 10^6 records (as bench/db_lookup: 1000 workloads x 2
// target identities x 500 records, one in eight a failure), timed per call of
// driver::Compiler::lookup for a tuned workload: workload key, best-record query, JSON parse and
// replay of the steps (no lowering, no LLVM). Prints the median and 99th percentile (goal:
// under 1 ms), and for reference the nearest-shape fallback (which also lowers) and the default.
#include "tensortune/database/database.h"
#include "tensortune/driver/compile.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/rng.h"
#include "tensortune/te/operators.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace tensortune;  // NOLINT(google-build-using-namespace): a small program

constexpr int kWorkloads = 1000;
constexpr int kRecordsPerPair = 500;
constexpr int kLookups = 20000;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// The spec of workload `w`: distinct matmul shapes.
std::string spec_of(int w) {
  return fmt::format("matmul:M={},N={},K={}", 64 + w % 40 * 8, 64 + w / 40 * 8, 128);
}

/// A real schedule of `w`: i and j split, reordered, the outer loop parallel, j.i vectorized.
std::string schedule_of(const te::Workload& w, int64_t fi, int64_t fj) {
  using schedule::Split;
  std::vector<schedule::Step> steps = {Split{"C", "i", fi, false}, Split{"C", "j", fj, false},
                                       schedule::Reorder{"C", {"i.o", "j.o", "k", "i.i", "j.i"}},
                                       schedule::Annotate{"C", "i.o", ir::ForKind::Parallel},
                                       schedule::Annotate{"C", "j.i", ir::ForKind::Vectorized}};
  return schedule::to_json(schedule::Schedule{w.key(), steps}).dump();
}

void fill(database::Database& db,
          const std::vector<te::Workload>& workloads,
          const std::vector<database::TargetKey>& targets) {
  support::Rng rng(1);
  const std::array<int64_t, 5> factors = {2, 4, 8, 16, 32};
  for (int w = 0; w < kWorkloads; ++w) {
    const te::Workload& wl = workloads[static_cast<size_t>(w)];
    db.put_workload(
        {wl.key(), wl.name(), wl.canonical_text(), wl.flop_count(), "matmul", spec_of(w)});
    std::vector<database::Record> batch;
    for (const database::TargetKey& target : targets) {
      for (int i = 0; i < kRecordsPerPair; ++i) {
        database::Record r;
        r.workload_key = wl.key();
        r.target = target;
        r.schedule = schedule_of(wl, factors.at(static_cast<size_t>(i % 5)),
                                 factors.at(static_cast<size_t>(i / 5 % 5)));
        r.status = i % 8 == 7 ? "RunTimeout" : "Ok";
        r.median_seconds = r.status == "Ok" ? 1e-3 * (1 + rng.uniform()) : 0;
        r.repeats = {r.median_seconds};
        r.timestamp = 1700000000 + i;
        batch.push_back(std::move(r));
      }
    }
    db.add_records(batch);
  }
}

/// CPU time of this thread: unlike wall time, it does not count the time the thread waited for
/// a core while other processes ran (on a loaded two-core machine, whole 4 ms scheduler slices).
double thread_cpu_now() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Percentiles {
  double median, p99, max;
};

Percentiles percentiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v[v.size() * 99 / 100], v.back()};
}

/// Wall-time percentiles of `n` calls; with `cpu`, also their thread-CPU-time percentiles.
Percentiles time_calls(int n, const std::function<void(int)>& call, Percentiles* cpu = nullptr) {
  std::vector<double> wall;
  std::vector<double> cpu_times;
  wall.reserve(static_cast<size_t>(n));
  cpu_times.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    double start = now();
    double cpu_start = thread_cpu_now();
    call(i);
    cpu_times.push_back(thread_cpu_now() - cpu_start);
    wall.push_back(now() - start);
  }
  if (cpu != nullptr) {
    *cpu = percentiles(cpu_times);
  }
  return percentiles(wall);
}

std::string us(const Percentiles& p) {
  return fmt::format("median {:.1f} us, p99 {:.1f} us, max {:.1f} us", p.median * 1e6, p.p99 * 1e6,
                     p.max * 1e6);
}

int run() {
  std::string path = fmt::format("{}/tensortune_driver_lookup_{}.db",
                                 std::filesystem::temp_directory_path().string(), ::getpid());
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
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
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
