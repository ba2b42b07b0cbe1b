// SPDX-License-Identifier: Apache-2.0
// The C API's compile-time lookup with 10^6 records (the database of bench/driver_lookup),
// through libtensortune.so as a C program calls it: tt_lookup_best + tt_lookup_free for a tuned
// workload spec (the driver's lookup behind it: workload, best-record query, JSON parse, replay,
// plus the record's provenance). The database is filled through the library's C++ API. Prints
// the median and 99th percentile (goal: under 1 ms), the first lookup of a spec (which builds
// its workload), and the driver's own lookup in the same run for the C API's overhead.
#include "lookup_fixture.h"
#include "tensortune/c_api.h"
#include "tensortune/driver/compile.h"
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

/// The C API's status as an exception, for this program's one error path.
void check(tt_status status, const char* what) {
  if (status != TT_OK) {
    throw std::runtime_error(
        fmt::format("{}: {}: {}", what, tt_status_name(status), tt_last_error()));
  }
}

int run() {
  std::string path = temp_db_path("c_api_lookup");
  const char* target_text = "llvm -cores=2";
  target::Target target = target::Target::parse(target_text);
  std::vector<database::TargetKey> targets = {driver::target_key(target),
                                              {target_text, "cpu=another machine"}};
  std::vector<te::Workload> workloads;
  std::vector<std::string> specs;
  for (int w = 0; w < kWorkloads; ++w) {
    specs.push_back(spec_of(w));
    workloads.push_back(te::make_workload(specs.back()));
  }
  double t0 = now();
  {
    database::Database db = database::Database::open(path);
    fill(db, workloads, targets);
  }
  double fill_seconds = now() - t0;

  tt_db* db = nullptr;
  check(tt_db_open(path.c_str(), TT_DB_READ_ONLY, &db), "tt_db_open");
  int64_t records = 0;
  check(tt_db_count_records(db, &records), "tt_db_count_records");
  tt_compiler* compiler = nullptr;
  check(tt_compiler_create(db, target_text, &compiler), "tt_compiler_create");
  size_t tuned = 0;
  auto lookup = [&](const std::string& spec) {
    tt_lookup* found = nullptr;
    check(tt_lookup_best(compiler, spec.c_str(), &found), "tt_lookup_best");
    tuned += std::string(tt_lookup_source(found)) == "record" ? 1 : 0;
    tt_lookup_free(found);
  };
  // First lookups: each spec's workload is built once per compiler.
  Percentiles first = time_calls(kWorkloads, [&](int i) { lookup(specs[static_cast<size_t>(i)]); });
  support::Rng rng(2);
  Percentiles hit_cpu{};
  Percentiles hit = time_calls(
      kLookups,
      [&](int) { lookup(specs[static_cast<size_t>(rng.uniform_int(0, kWorkloads - 1))]); },
      &hit_cpu);
  // The driver's own lookup on the same database, same run.
  database::Database cxx_db = database::Database::open(path, true);
  driver::Compiler driver_compiler(&cxx_db, target);
  Percentiles direct = time_calls(kLookups, [&](int) {
    (void)driver_compiler.lookup(
        workloads[static_cast<size_t>(rng.uniform_int(0, kWorkloads - 1))]);
  });
  tt_compiler_free(compiler);
  tt_db_close(db);

  std::cout << fmt::format(
                   "c_api_lookup: {} records ({} workloads x 2 targets x {}), filled in "
                   "{:.1f} s; libtensortune {}\n",
                   records, kWorkloads, kRecordsPerPair, fill_seconds, tt_version())
            << fmt::format(
                   "  tt_lookup_best + tt_lookup_free, tuned spec: {} over {} lookups "
                   "({} from records); goal < 1000 us\n",
                   us(hit), kLookups, tuned - static_cast<size_t>(kWorkloads))
            << fmt::format("    thread CPU time of the same lookups: {}\n", us(hit_cpu))
            << fmt::format("  first lookup of each spec (builds its workload): {}\n", us(first))
            << fmt::format("  driver::Compiler::lookup, same database and run: {}\n", us(direct));
  remove_db(path);
  return tuned == static_cast<size_t>(kLookups + kWorkloads) ? 0 : 1;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::cerr << "c_api_lookup: error: " << e.what() << "\n";
    return 1;
  }
}
