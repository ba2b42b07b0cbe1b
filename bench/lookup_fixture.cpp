// SPDX-License-Identifier: Apache-2.0
// See lookup_fixture.h.
#include "lookup_fixture.h"

#include "tensortune/schedule/serialize.h"
#include "tensortune/support/rng.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <unistd.h>

namespace tensortune::bench {
namespace {

std::string schedule_of(const te::Workload& w, int64_t fi, int64_t fj) {
  using schedule::Split;
  std::vector<schedule::Step> steps = {Split{"C", "i", fi, false}, Split{"C", "j", fj, false},
                                       schedule::Reorder{"C", {"i.o", "j.o", "k", "i.i", "j.i"}},
                                       schedule::Annotate{"C", "i.o", ir::ForKind::Parallel},
                                       schedule::Annotate{"C", "j.i", ir::ForKind::Vectorized}};
  return schedule::to_json(schedule::Schedule{w.key(), steps}).dump();
}

double thread_cpu_now() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

Percentiles percentiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v[v.size() * 99 / 100], v.back()};
}

}  // namespace

std::string spec_of(int w) {
  return fmt::format("matmul:M={},N={},K={}", 64 + w % 40 * 8, 64 + w / 40 * 8, 128);
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

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Percentiles time_calls(int n, const std::function<void(int)>& call, Percentiles* cpu) {
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

std::string temp_db_path(const std::string& stem) {
  return fmt::format("{}/tensortune_{}_{}.db", std::filesystem::temp_directory_path().string(),
                     stem, ::getpid());
}

void remove_db(const std::string& path) {
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
}

}  // namespace tensortune::bench
