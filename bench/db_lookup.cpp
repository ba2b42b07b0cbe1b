// SPDX-License-Identifier: Apache-2.0
// The compile-time lookup's latency with 10^6 records: 1000 workloads x 2 targets x 500 records
// (one in eight a failure), then best(key, target) for random (workload, target) pairs. Prints the
// median and 99th percentile per lookup, and the cost of opening the file read-only.
#include "tensortune/database/database.h"
#include "tensortune/support/rng.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <fmt/format.h>
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
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

database::TargetKey target_of(int t) {
  return {"llvm -mcpu=znver4 -cores=" + std::to_string(2 * (t + 1)), "{\"cpu\":\"zen4\"}"};
}

std::string key_of(int w) {
  return fmt::format("matmul_{0}x{0}x{0}_float32_{1:016x}", 16 + w, 0x9e3779b97f4a7c15ULL * w);
}

void fill(database::Database& db) {
  support::Rng rng(1);
  for (int w = 0; w < kWorkloads; ++w) {
    database::WorkloadInfo info;
    info.key = key_of(w);
    info.name = info.key.substr(0, info.key.size() - 17);
    info.op = "matmul";
    info.canonical_text = "compute " + info.name;
    info.flop_count = 1e9;
    db.put_workload(info);
    std::vector<database::Record> batch;
    for (int t = 0; t < 2; ++t) {
      for (int i = 0; i < kRecordsPerPair; ++i) {
        database::Record r;
        r.workload_key = info.key;
        r.target = target_of(t);
        r.schedule = fmt::format("{{\"steps\":[{{\"kind\":\"split\",\"factor\":{}}}]}}", i);
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

int run() {
  std::string path = fmt::format("{}/tensortune_db_lookup_{}.db",
                                 std::filesystem::temp_directory_path().string(), ::getpid());
  double t0 = now();
  {
    database::Database db = database::Database::open(path);
    fill(db);
  }
  double fill_seconds = now() - t0;
  t0 = now();
  database::Database db = database::Database::open(path, true);
  double open_seconds = now() - t0;
  int64_t records = db.count_records();
  support::Rng rng(2);
  std::vector<double> latencies;
  latencies.reserve(kLookups);
  size_t found = 0;
  for (int i = 0; i < kLookups; ++i) {
    std::string key = key_of(static_cast<int>(rng.uniform_int(0, kWorkloads - 1)));
    database::TargetKey target = target_of(static_cast<int>(rng.uniform_int(0, 1)));
    double start = now();
    std::vector<database::Record> best = db.best(key, target, 1);
    latencies.push_back(now() - start);
    found += best.size();
  }
  std::sort(latencies.begin(), latencies.end());
  std::cout << fmt::format("db_lookup: {} records ({} workloads x 2 targets x {}), filled in {:.1f} s\n",
                           records, kWorkloads, kRecordsPerPair, fill_seconds)
            << fmt::format("  open read-only: {:.3f} ms\n", open_seconds * 1e3)
            << fmt::format("  best(key, target): median {:.1f} us, p99 {:.1f} us, max {:.1f} us "
                           "over {} lookups ({} found); goal < 1000 us\n",
                           latencies[latencies.size() / 2] * 1e6,
                           latencies[latencies.size() * 99 / 100] * 1e6, latencies.back() * 1e6,
                           kLookups, found);
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  return found == static_cast<size_t>(kLookups) ? 0 : 1;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::cerr << "db_lookup: error: " << e.what() << "\n";
    return 1;
  }
}
