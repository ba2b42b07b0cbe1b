// SPDX-License-Identifier: Apache-2.0
// See tune_common.h: the measurement and search options `tune`, `tune-model` and the Python
// package's tune() share, with their defaults.
#include "tune_common.h"

#include "peak.h"
#include "tensortune/driver/compile.h"
#include "tensortune/measure/timing.h"
#include "tensortune/support/error.h"
#include "zero_shot_cli.h"

#include <atomic>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <unistd.h>

namespace tensortune::cli {

ArgParser& add_search_options(ArgParser& parser) {
  return parser.option("trials", "N", "trial budget of the job over all workloads (default 200)")
      .option("db", "PATH", "tuning database (default tuning_logs/tensortune.db; created)")
      .option("tuner", "NAME", "search strategy (default xgb = XGBoost + simulated annealing)",
              {"xgb", "xgb-evo", "random", "grid"})
      .option("model", "NAME", "cost model for xgb/xgb-evo (default xgb)", {"xgb", "random"})
      .option("seed", "S", "seed of every random choice (default 0)")
      .option("batch", "N", "candidates measured per round (default 32)")
      .option("eps-greedy", "P", "share of each guided batch drawn at random (default 0.05)")
      .option("early-stop", "N", "stop a workload after N trials without improvement (0 = never)")
      .option("scheduler", "NAME", "how rounds are shared among workloads (default gradient)",
              {"gradient", "round-robin"})
      .flag("no-transfer", "do not warm-start the model from other workloads' records")
      .flag("no-prior",
            "draw the guided tuners' random candidates uniformly, not from the sketch rules' "
            "prior (full vectors, register tiles that fit, parallel work for every core), and "
            "let the model alone guide the search")
      .option("prior-weight", "W",
              "how strongly the prior steers the model-guided search: a configuration with half "
              "another's prior needs a lead of W times the spread of the model's scores "
              "(default 0.5; 0 = the model alone)")
      .option("measure-on", "WHERE",
              "local (default: this process's workers) or queue: each batch becomes jobs in "
              "--db that 'tensortune worker' processes of the target measure and store",
              {"local", "queue"})
      .option("priority", "N",
              "queue: urgency of this job's batches among other tuners' (default 0)")
      .option("lease", "S",
              "queue: seconds a worker holds a job without a heartbeat before it runs elsewhere "
              "(default 30)");
}

support::Json job_measure_options(const measure::MeasurerOptions& mo) {
  support::Json j = support::Json::object();
  j["threads"] = mo.run.threads;
  j["build_timeout_s"] = mo.build.timeout_s;
  j["run_timeout_s"] = mo.run.timeout_s;
  j["timing"] = mo.run.timing.to_json();
  return j;
}

measure::MeasurerOptions measurer_options_of_job(const std::string& text) {
  // A job row is data another client wrote: every value is checked as the flags would be.
  const support::Json j = support::Json::parse(text);
  TT_USER_CHECK(j.is_object()) << "job options are not a JSON object";
  measure::MeasurerOptions mo;
  const int64_t threads = j.at("threads").as_int("threads");
  TT_USER_CHECK(threads >= 0 && threads <= 4096) << "job options: threads " << threads;
  mo.run.threads = static_cast<int>(threads);
  mo.build.timeout_s = j.at("build_timeout_s").as_double("build_timeout_s");
  mo.run.timeout_s = j.at("run_timeout_s").as_double("run_timeout_s");
  for (double t : {mo.build.timeout_s, mo.run.timeout_s})
    TT_USER_CHECK(t >= 0.1 && t <= 86400) << "job options: a timeout of " << t << " s";
  mo.run.timing = measure::TimingOptions::from_json(j.at("timing"));
  TT_USER_CHECK(mo.run.timing.repeat >= 1 && mo.run.timing.repeat <= 1000 &&
                mo.run.timing.min_repeat_ms >= 0 && mo.run.timing.min_repeat_ms <= 60000 &&
                mo.run.timing.budget_s >= 0 && mo.run.timing.budget_s <= 86400)
      << "job options: timing out of range";
  return mo;
}

namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_stop_signal{0};

extern "C" void on_stop_signal(int sig) {
  if (g_stop.load()) {
    std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C aborts at once
    std::raise(SIGINT);
    return;
  }
  g_stop_signal.store(sig);
  g_stop.store(true);
  static const char kMessage[] =
      "\ntensortune: stopping after the batch in flight is saved (Ctrl-C again to abort)\n";
  (void)!write(2, kMessage, sizeof(kMessage) - 1);
}

void install(int sig, struct sigaction* previous) {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(sig, &action, previous);
}

}  // namespace

StopOnSignals::StopOnSignals(bool sigterm) : sigterm_(sigterm) {
  g_stop.store(false);
  g_stop_signal.store(0);
  install(SIGINT, &previous_int_);
  if (sigterm_)
    install(SIGTERM, &previous_term_);
}

StopOnSignals::~StopOnSignals() {
  sigaction(SIGINT, &previous_int_, nullptr);
  if (sigterm_)
    sigaction(SIGTERM, &previous_term_, nullptr);
}

const std::atomic<bool>& StopOnSignals::flag() const {
  return g_stop;
}

int StopOnSignals::signal() const {
  return g_stop_signal.load();
}

void StopOnSignals::request_stop() const {
  g_stop.store(true);
}

ArgParser& add_measurement_options(ArgParser& parser, bool flush_by_default) {
  if (flush_by_default) {
    parser.flag("no-cache-flush",
                "time candidates with their weights hot in the caches (by default the inputs but "
                "the first are flushed before each timed call, as a kernel inside a model finds "
                "them)");
  } else {
    parser.flag("cache-flush",
                "flush the inputs but the first (the weights) from the caches before each timed "
                "call, as a kernel inside a model finds them");
  }
  return parser
      .option("threads", "N", "threads for parallel loops (default: the target's -cores, else all)")
      .option("build-timeout", "S", "seconds per candidate build (default 10)")
      .option("run-timeout", "S", "seconds per candidate run (default 10)")
      .option("single-call-factor", "F",
              fmt::format("time a candidate by one warm call when its check call and that "
                          "call are F times slower than the best so far and that call lasts a "
                          "repeat ({:g} ms) (default 10; 0 = always the full protocol)",
                          measure::TimingOptions{}.min_repeat_ms))
      .option("timing-budget", "S",
              "stop repeating a candidate's timed calls once they took S seconds in all "
              "(default 1; 0 = always every repeat)")
      .option("measure-rounds", "R",
              "time each batch in R round-robin rounds, each candidate's repeats and timing "
              "budget shared among them, so that a change of the machine's speed hits the "
              "batch alike (default 3; 1 = each candidate timed once, in order)")
      .option("confirm", "K",
              "at the end, measure each workload's K best records again side by side and rank "
              "them by that (default 5; 0 = off): the best of many single measurements is "
              "biased towards lucky ones")
      .option(
          "confirm-rounds", "R",
          "how often each of those is measured again, each time in a fresh worker process; their "
          "median is the record's time (default 5)")
      .option("time-budget", "D",
              "the job's wall time, its confirmation included (600, 90s, 10m, 2h): no round "
              "starts that would leave the confirmation too little; without --trials the "
              "budget alone ends the job");
}

double parse_duration(const std::string& text) {
  size_t used = 0;
  double value = -1;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  const double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 0;
  TT_USER_CHECK(used > 0 && scale > 0 && std::isfinite(value) && value > 0)
      << "--time-budget: expected a positive duration such as 600, 90s, 10m or 2h, got '" << text
      << "'";
  return value * scale;
}

measure::MeasurerOptions measurer_options(const ArgParser::Parsed& p,
                                          const target::Target& target,
                                          bool flush_by_default) {
  measure::MeasurerOptions mo;
  mo.run.threads = static_cast<int>(p.get_int("threads", target.cores, 0, 4096));
  // A candidate LLVM needs more than 10 s for is an unrolled monster, not a contender: on conv2d
  // the one that hit the builder's 30 s default cost a sixth of a 200-trial run.
  mo.build.timeout_s = p.get_double("build-timeout", 10, 0.1, 86400);
  mo.run.timeout_s = p.get_double("run-timeout", mo.run.timeout_s, 0.1, 86400);
  // A candidate 10x slower than the best so far costs one call, not the whole protocol.
  mo.single_call_factor = p.get_double("single-call-factor", 10, 0, 1e9);
  // And a slow one that is not hopeless stops repeating after a second of timed calls.
  mo.run.timing.budget_s = p.get_double("timing-budget", 1.0, 0, 86400);
  // Repeats spread over the batch's timing order pairs more repeatably than repeats in a row.
  mo.rounds = static_cast<int>(p.get_int("measure-rounds", 3, 1, 1000));
  mo.run.timing.cache_flush = flush_by_default ? !p.has("no-cache-flush") : p.has("cache-flush");
  return mo;
}

// Four records per workload: a tenth of a first batch of 32, enough to carry a good schedule
// over, and a shipped log keeps its best few per device anyway.
constexpr int kShippedStarts = 4;

void add_shipped_starts(const ArgParser::Parsed& p, std::vector<search::TuneTask>& tasks) {
  const database::Database* shipped = p.has("no-shipped") ? nullptr : shipped_logs();
  if (shipped == nullptr)
    return;
  // Looked up as compile would: the target as written, resolved on this host.
  driver::Compiler compiler(nullptr, target::Target::parse(p.get("target")));
  compiler.set_shipped(shipped);
  size_t started = 0;
  for (search::TuneTask& t : tasks) {
    t.starts = compiler.shipped_records(t.workload, kShippedStarts);
    started += t.starts.empty() ? 0 : 1;
  }
  if (started > 0) {
    std::cerr << fmt::format(
        "tensortune: {} of {} workloads start from the shipped tuning logs' records "
        "(--no-shipped: from scratch)\n",
        started, tasks.size());
  }
}

void read_machine_speed(search::TuneOptions& o, const target::Target& target) {
  if (target.is_gpu())
    return;
  const int threads = std::max(1, target.cores);
  o.machine_speed = [threads] {
    return measure_fma_peak(threads, 50).gflops;
  };
}

search::TuneOptions tune_options(const ArgParser::Parsed& p) {
  search::TuneOptions o;
  o.tuner = search::parse_tuner(p.get("tuner", "xgb"));
  o.random_model = p.get("model", "xgb") == "random";
  // A time budget without --trials: the budget alone ends the job.
  o.trials =
      p.get_int("trials", p.has("time-budget") ? int64_t{1} << 40 : 200, 0, int64_t{1} << 40);
  if (p.has("time-budget"))
    o.time_budget_seconds = parse_duration(p.get("time-budget"));
  o.initial_model = zero_shot_model(p);
  o.seed = static_cast<uint64_t>(p.get_int("seed", 0, 0, INT64_MAX));
  o.batch_size = static_cast<int>(p.get_int("batch", search::TuneOptions{}.batch_size, 1, 4096));
  o.eps_greedy = p.get_double("eps-greedy", 0.05, 0, 1);
  o.early_stop = p.get_int("early-stop", 0, 0, int64_t{1} << 40);
  o.scheduler.policy = search::parse_policy(p.get("scheduler", "gradient"));
  o.transfer = !p.has("no-transfer");
  o.prior = !p.has("no-prior");
  o.prior_weight = p.get_double("prior-weight", o.prior_weight, 0, 1000);
  o.confirm_top = static_cast<int>(p.get_int("confirm", o.confirm_top, 0, 1000));
  o.confirm_rounds = static_cast<int>(p.get_int("confirm-rounds", o.confirm_rounds, 1, 1000));
  o.tool_version = TT_VERSION;
  o.git_revision = TT_GIT_REVISION;
  o.measure_on_queue = p.get("measure-on", "local") == "queue";
  o.queue_priority = p.get_int("priority", 0, -1000000, 1000000);
  o.queue_lease.lease_seconds = p.get_int("lease", 30, 2, 86400);
  TT_USER_CHECK(o.measure_on_queue || (!p.has("priority") && !p.has("lease")))
      << "--priority and --lease are for --measure-on queue";
  TT_USER_CHECK(!o.measure_on_queue || database::is_server_url(database_path(p)) || p.has("db"))
      << "--measure-on queue: give --db, the database the workers use";
  return o;
}

database::Database open_tuning_database(const ArgParser::Parsed& p, const std::string& command) {
  const std::string db_path = database_path(p);
  if (database::is_server_url(db_path))
    return database::Database::open(db_path);
  const std::filesystem::path parent = std::filesystem::path(db_path).parent_path();
  std::error_code ec;
  if (!parent.empty())
    std::filesystem::create_directories(parent, ec);
  TT_USER_CHECK(!ec) << command << ": cannot create the folder '" << parent.string()
                     << "': " << ec.message();
  return database::Database::open(db_path);
}

}  // namespace tensortune::cli
