// SPDX-License-Identifier: Apache-2.0
// `tensortune tune`: tunes workloads into the database, resuming from what it holds, with a
// progress bar, and stops cleanly on Ctrl-C or SIGTERM after saving the batch in flight.
#include "commands.h"
#include "peak.h"
#include "pipeline.h"
#include "progress.h"
#include "tensortune/database/database.h"
#include "tensortune/driver/compile.h"
#include "tensortune/measure/machine_load.h"
#include "tensortune/measure/measurer.h"
#include "tensortune/measure/timing.h"
#include "tensortune/search/tuner.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/te/operators.h"
#include "tune_common.h"
#include "zero_shot_cli.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <sstream>

namespace tensortune::cli {

ArgParser tune_parser() {
  ArgParser parser(
      "tune",
      "tune --workload SPEC [--workload SPEC ...] --target T [--trials N] [--db PATH] "
      "[--tuner xgb|xgb-evo|random|grid] [--seed S] [--batch N] [--cache-flush] [--json]",
      "Generates the schedule space of each workload, searches it with the cost model and "
      "measures candidates on this machine, writing every measurement to the database. Records "
      "already stored count towards --trials and are never measured again, so rerunning a "
      "stopped job finishes it. Ctrl-C or SIGTERM stops after the batch in flight is saved. "
      "Exit codes: 0 done, 1 error in the input, 2 usage error, 130 stopped by Ctrl-C (SIGINT), "
      "143 stopped by SIGTERM.");
  parser.option("workload", "SPEC", kWorkloadHelp, {}, true, true)
      .option("weight", "W", "weight of the matching --workload in the total latency (default 1)",
              {}, false, true)
      .option("target", "T", kTargetHelp, {}, true)
      .option("progress", "STYLE", "auto (bar on a terminal), bar, lines or none",
              {"auto", "bar", "lines", "none"})
      .flag("json",
            "print one JSON document {workload, target, trials, best: {seconds, gflops, "
            "record_id}, tasks, times, ...}");
  add_search_options(parser);
  add_measurement_options(parser);
  add_zero_shot_options(parser);
  return parser;
}

namespace {

/// The job's FMA peak readings: the peak is the best reading (a physical limit that a busy
/// moment only hides), the spread (best - worst) / best.
struct JobPeak {
  std::vector<double> readings;
  double gflops = 0;
  double spread = 0;
  void add(double g) {
    if (g <= 0)
      return;
    readings.push_back(g);
    const auto [lo, hi] = std::minmax_element(readings.begin(), readings.end());
    gflops = *hi;
    spread = (*hi - *lo) / *hi;
  }
};

/// "confirmed: median of 5 rounds side by side, spread 2.1%" or "unconfirmed: a single
/// measurement".
std::string time_label(const search::TaskResult& t) {
  if (!t.best_confirmed)
    return "unconfirmed: a single measurement";
  return fmt::format("confirmed side by side, middle rounds spread {:.1f}%", 100 * t.best_spread);
}

std::vector<search::TuneTask> make_tasks(const ArgParser::Parsed& p) {
  const std::vector<std::string> specs = p.get_all("workload");
  const std::vector<std::string> weights = p.get_all("weight");
  if (!weights.empty() && weights.size() != specs.size()) {
    throw UsageError("give one --weight per --workload (" + std::to_string(specs.size()) +
                         " workloads, " + std::to_string(weights.size()) + " weights)",
                     "tune");
  }
  std::vector<search::TuneTask> tasks;
  for (size_t i = 0; i < specs.size(); ++i) {
    search::TuneTask t = search::TuneTask::from_spec(specs[i]);
    if (!weights.empty()) {
      std::istringstream in(weights[i]);
      TT_USER_CHECK((in >> t.weight) && in.eof() && t.weight > 0)
          << "tune: --weight '" << weights[i] << "' is not a positive number";
    }
    tasks.push_back(std::move(t));
  }
  search::check_distinct_workloads(tasks);  // before the database is opened
  return tasks;
}

support::Json result_json(const search::TuneResult& r,
                          const std::vector<search::TuneTask>& tasks,
                          const target::Target& target,
                          const std::string& db_path,
                          const JobPeak& peak) {
  support::Json out = support::Json::object();
  const search::TaskResult& first = r.tasks.front();
  out["workload"] = first.workload_name;
  out["workload_key"] = first.workload_key;
  out["target"] = target.to_string();
  out["db"] = database::display_name(db_path);
  out["trials"] = first.resumed + first.trials;
  out["measured"] = r.trials;
  out["run_id"] = r.run_id;
  out["interrupted"] = r.interrupted;
  out["stop_reason"] = r.stop_reason;
  out["wall_seconds"] = r.wall_seconds;
  auto best_of = [](const search::TaskResult& t) {
    if (t.best_seconds <= 0)
      return support::Json();
    support::Json b = support::Json::object();
    b["seconds"] = t.best_seconds;
    b["gflops"] = t.best_gflops;
    b["record_id"] = t.best_record_id;
    // Where `seconds` comes from (database::Record::seconds), and how sure it is.
    b["time"] = t.best_confirmed ? "confirmed" : "unconfirmed";
    if (t.best_confirmed) {
      b["spread"] = t.best_spread;
      b["noisy"] = t.best_spread > search::kNoisySpread;
      b["runner_up_gap"] = t.runner_up_gap;
    }
    if (t.confirmed > 0) {
      b["confirmed"] = t.confirmed;
      b["unconfirmed_record_id"] = t.unconfirmed_best_id;
    }
    if (t.refuted > 0)
      b["refuted"] = t.refuted;
    return b;
  };
  out["best"] = best_of(first);
  support::Json list = support::Json::array();
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    const search::TaskResult& t = r.tasks[i];
    support::Json j = support::Json::object();
    j["workload"] = t.workload_name;
    j["workload_key"] = t.workload_key;
    j["spec"] = tasks[i].spec;
    j["resumed"] = t.resumed;
    j["trials"] = t.trials;
    j["ok"] = t.ok;
    j["best"] = best_of(t);
    list.push_back(std::move(j));
  }
  out["tasks"] = std::move(list);
  support::Json times = support::Json::object();
  times["search"] = r.times.search;
  times["features"] = r.times.features;
  times["training"] = r.times.training;
  times["build"] = r.times.build;
  times["run"] = r.times.run;
  times["database"] = r.times.database;
  out["times"] = std::move(times);
  if (peak.gflops > 0) {
    support::Json pk = support::Json::object();
    pk["gflops"] = peak.gflops;
    pk["spread"] = peak.spread;
    out["peak"] = std::move(pk);
  }
  if (r.confirm_speed > 0) {  // how fast the machine ran the confirmation's kept rounds
    support::Json c = support::Json::object();
    c["speed"] = r.confirm_speed;
    c["slow_rounds"] = r.confirm_slow_rounds;
    c["stayed_slow"] = r.confirm_stayed_slow;
    out["confirmation"] = std::move(c);
  }
  return out;
}

void print_text(const search::TuneResult& r, const std::string& db_path, const JobPeak& peak) {
  for (const search::TaskResult& t : r.tasks) {
    const std::string share =
        peak.gflops > 0 ? fmt::format(", {:.1f}% of peak", 100 * t.best_gflops / peak.gflops) : "";
    const std::string best =
        t.best_seconds > 0
            ? fmt::format("best {:.3f} ms, {:.1f} GFLOP/s{} (record {}, {})", t.best_seconds * 1e3,
                          t.best_gflops, share, t.best_record_id, time_label(t))
            : std::string("no working candidate yet");
    std::cout << fmt::format("{}: {} trials ({} measured now, {} ok), {}\n", t.workload_name,
                             t.resumed + t.trials, t.trials, t.ok, best);
    if (t.confirmed > 0) {
      std::cout << fmt::format(
          "  confirmed: its {} best records measured again side by side; {}\n", t.confirmed,
          t.unconfirmed_best_id == t.best_record_id
              ? std::string("the same record is the best")
              : fmt::format("record {} (best by single measurements) ranks below it",
                            t.unconfirmed_best_id));
      if (t.best_spread > search::kNoisySpread) {
        std::cout << fmt::format(
            "  too noisy to decide: the best's middle rounds spread {:.1f}%; tune again on a "
            "quieter machine\n",
            100 * t.best_spread);
      } else if (t.runner_up_gap >= 0 && t.runner_up_gap < t.best_spread) {
        std::cout << fmt::format(
            "  the runner-up is {:.1f}% behind, within the middle rounds' spread ({:.1f}%): the "
            "two are equally fast as far as this machine can tell\n",
            100 * t.runner_up_gap, 100 * t.best_spread);
      }
    }
    if (t.refuted > 0) {
      std::cout << fmt::format(
          "  {} records failed their confirmation (their schedules no longer replay, or they "
          "failed when measured again): no longer best\n",
          t.refuted);
    }
  }
  std::cout << fmt::format(
      "time: {} (search {:.1f}s, features {:.1f}s, training {:.1f}s, build {:.1f}s, run {:.1f}s, "
      "database {:.1f}s); records in {}\n",
      format_duration(r.wall_seconds), r.times.search, r.times.features, r.times.training,
      r.times.build, r.times.run, r.times.database, database::display_name(db_path));
  if (!r.stop_reason.empty())
    std::cout << "stopped: " << r.stop_reason << "\n";
  if (r.confirm_load.busy()) {
    std::cout << fmt::format(
        "machine: busy during the confirmation ({:.1f} other runnable tasks on {} CPUs): the "
        "confirmed times may read slow\n",
        r.confirm_load.others_runnable, r.confirm_load.cpus);
  }
  if (r.confirm_slow_rounds > 0 || r.confirm_stayed_slow) {
    std::cout << fmt::format(
        "machine: {} confirmation rounds ran slow against the rounds around them and were set "
        "aside; the rounds kept ran at {:.0f}% of the machine's fastest reading{}\n",
        r.confirm_slow_rounds, 100 * r.confirm_speed,
        r.confirm_stayed_slow ? " (the machine stayed slow: the figures count it as noise)" : "");
  }
}

/// The FMA peak readings of the job, its spread and the machine's state, stored with the run
/// (Database::set_run_machine) so that reports show the peak of the tuning time.
void store_machine(database::Database& db,
                   const search::TuneResult& r,
                   const JobPeak& peak,
                   int threads) {
  if (r.run_id <= 0 || peak.gflops <= 0)
    return;
  support::Json m = support::Json::object();
  m["threads"] = threads;
  support::Json readings = support::Json::array();
  for (double g : peak.readings)
    readings.push_back(g);
  m["peak_readings"] = std::move(readings);
  const measure::MachineLoad now = measure::sample_machine_load(0.2);
  m["cpus"] = now.cpus;
  m["loadavg_1min"] = now.loadavg_1min;
  m["confirm_others_runnable"] = r.confirm_load.others_runnable;
  m["confirm_busy"] = r.confirm_load.busy();
  if (r.confirm_speed > 0) {
    m["confirm_speed"] = r.confirm_speed;
    m["confirm_slow_rounds"] = r.confirm_slow_rounds;
    m["confirm_stayed_slow"] = r.confirm_stayed_slow;
  }
  db.set_run_machine(r.run_id, peak.gflops, peak.spread, m.dump());
}

}  // namespace

int run_tune(const std::vector<std::string>& args) {
  std::optional<ArgParser::Parsed> parsed = parse_command_line(tune_parser(), args);
  if (!parsed)
    return 0;
  const ArgParser::Parsed& p = *parsed;
  std::vector<search::TuneTask> tasks = make_tasks(p);
  add_shipped_starts(p, tasks);
  search::TuneOptions options = tune_options(p);
  const target::Target target = resolve_target(p.get("target"));
  check_target_runs_here(p.get("target"), "tune", true);
  read_machine_speed(options, target);
  // Before the database: a machine that cannot measure (no GPU, no NVRTC) must not create one.
  const measure::MeasurerOptions mo = measurer_options(p, target);
  options.queue_options = job_measure_options(mo).dump();
  measure::Measurer measurer(target, mo);
  const std::string db_path = database_path(p);
  database::Database db = open_tuning_database(p, "tune");
  // Keyed as the driver looks records up: the target as written, plus the device fingerprint.
  const database::TargetKey key = driver::target_key(target::Target::parse(p.get("target")));

  const ProgressStyle style = parse_progress_style(p.get("progress", "auto"));
  // The host's FMA peak, read before and after the job and stored with the run: the progress
  // line's and the reports' % of peak. Meaningless for a GPU target.
  const int threads = std::max(1, target.cores);
  JobPeak peak;
  if (!target.is_gpu())
    peak.add(measure_fma_peak(threads, 200).gflops);
  ProgressPrinter printer(style, peak.gflops);
  search::TuneResult result;
  int sig = 0;  // the signal that asked to stop, for the exit code
  {
    const StopOnSignals stop(true);
    result = search::tune(
        tasks, target, key, db, measurer, options,
        [&](const search::TuneProgress& pr) { printer.update(pr); }, &stop.flag());
    sig = stop.signal();
  }
  printer.finish();
  if (!target.is_gpu()) {
    for (int i = 0; i < 2; ++i)
      peak.add(measure_fma_peak(threads, 200).gflops);
  }
  store_machine(db, result, peak, threads);
  if (p.has("json")) {
    std::cout << result_json(result, tasks, target, db_path, peak).dump() << "\n";
  } else {
    print_text(result, db_path, peak);
  }
  // Everything measured is saved, but the job did not finish: a script running it must be able
  // to tell, as the shell convention 128 + signal says (130 after Ctrl-C, 143 after SIGTERM).
  return sig != 0 ? 128 + sig : 0;
}

}  // namespace tensortune::cli
