// SPDX-License-Identifier: Apache-2.0
// The tuning loop end to end: real spaces, the real measurer and a real database in a temp folder.
#include "tensortune/search/tuner.h"

#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/measure/timing.h"
#include "tensortune/search/search_space.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <thread>
#include <unistd.h>

namespace tensortune::search {
namespace {

namespace fs = std::filesystem;

class TunerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tt_tuner_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    target_ = codegen::resolve_host(target::Target::parse("llvm -cores=1"));
    key_ = {target_.to_string(), "test-machine"};
  }
  void TearDown() override { fs::remove_all(dir_); }

  static TuneTask task(const std::string& spec) { return TuneTask::from_spec(spec); }
  measure::MeasurerOptions measurer_options() const {
    measure::MeasurerOptions o;
    o.run.threads = 1;
    o.run.timing.repeat = 3;
    o.run.timing.min_repeat_ms = 2;
    return o;
  }
  std::string db_path() const { return (dir_ / "tune.db").string(); }
  /// Options of a small deterministic run (XGBoost single-threaded, trained from 8 samples).
  static TuneOptions run_options(TunerKind tuner, int64_t trials, int batch, uint64_t seed = 0) {
    TuneOptions o;
    o.tuner = tuner;
    o.trials = trials;
    o.batch_size = batch;
    o.seed = seed;
    o.xgb.threads = 1;
    o.xgb.min_samples = 8;
    return o;
  }

  /// A small random run whose end confirms its 3 best in 3 rounds, judged by `speed`.
  static TuneOptions confirm_options(std::function<double()> speed) {
    TuneOptions o = run_options(TunerKind::Random, 8, 4);
    o.confirm_top = 3;
    o.confirm_rounds = 3;
    o.machine_speed = std::move(speed);
    return o;
  }

  fs::path dir_;
  target::Target target_;
  database::TargetKey key_;
};

std::set<std::string> knob_set(const std::vector<database::Record>& records) {
  std::set<std::string> out;
  for (const database::Record& r : records)
    out.insert(r.knobs);
  return out;
}

TEST_F(TunerTest, RandomTunerStoresEveryTrialAndResumesWithoutRemeasuring) {
  const std::vector<TuneTask> tasks{task("matmul:M=32,N=32,K=32")};
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  TuneOptions o = run_options(TunerKind::Random, 12, 6, 7);
  const TuneResult first = tune(tasks, target_, key_, db, measurer, o);
  EXPECT_EQ(first.trials, 12);
  ASSERT_EQ(first.tasks.size(), 1u);
  EXPECT_GT(first.tasks[0].ok, 0);
  EXPECT_GT(first.tasks[0].best_gflops, 0);
  const std::vector<database::Record> stored = db.history(tasks[0].workload.key(), key_);
  ASSERT_EQ(stored.size(), 12u);
  EXPECT_EQ(knob_set(stored).size(), 12u);
  // The best record is the one the result names.
  EXPECT_EQ(db.best(tasks[0].workload.key(), key_, 1).at(0).id, first.tasks[0].best_record_id);

  // Same budget again: everything is already stored, nothing is measured.
  const TuneResult again = tune(tasks, target_, key_, db, measurer, o);
  EXPECT_EQ(again.trials, 0);
  EXPECT_EQ(again.tasks[0].resumed, 12);
  EXPECT_DOUBLE_EQ(again.tasks[0].best_seconds, first.tasks[0].best_seconds);

  // A larger budget measures only new configurations.
  o.trials = 18;
  const TuneResult more = tune(tasks, target_, key_, db, measurer, o);
  EXPECT_EQ(more.trials, 6);
  const std::vector<database::Record> all = db.history(tasks[0].workload.key(), key_);
  EXPECT_EQ(all.size(), 18u);
  EXPECT_EQ(knob_set(all).size(), 18u);
  EXPECT_EQ(db.runs().size(), 3u);
}

TEST_F(TunerTest, ModelGuidedTuningBeatsTheDefaultScheduleOfASmallMatmul) {
  const std::vector<TuneTask> tasks{task("matmul:M=128,N=128,K=128")};
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  TuneOptions o = run_options(TunerKind::Xgb, 32, 16, 3);
  std::vector<TuneProgress> rounds;
  const TuneResult r = tune(tasks, target_, key_, db, measurer, o,
                            [&](const TuneProgress& p) { rounds.push_back(p); });
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_EQ(rounds.back().trials, 32);
  EXPECT_GT(rounds.back().total_times.training, 0);
  EXPECT_GT(rounds.back().total_times.build, 0);
  ASSERT_GT(r.tasks[0].best_seconds, 0);

  // The default schedule was measured once, in the same run, as one of the trials.
  const std::vector<database::Record> stored = db.history(tasks[0].workload.key(), key_);
  int defaults = 0;
  for (const database::Record& rec : stored) {
    if (rec.knobs != "{}")
      continue;
    ++defaults;
    ASSERT_TRUE(rec.ok()) << rec.error;
    EXPECT_LT(r.tasks[0].best_seconds, rec.median_seconds);
  }
  EXPECT_EQ(defaults, 1);
  // Every stored record's knobs name a configuration of the space, and no two are equal.
  EXPECT_EQ(knob_set(stored).size(), stored.size());
  for (const database::Record& rec : stored) {
    if (rec.knobs != "{}") {
      EXPECT_TRUE(support::Json::parse(rec.knobs).contains("sketch"));
    }
  }
}

TEST_F(TunerTest, ANewShapeFirstMeasuresTheNearestOfAnotherShapesBestConfigurations) {
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  TuneOptions o = run_options(TunerKind::Xgb, 24, 12, 11);
  const TuneTask source = task("matmul:M=64,N=64,K=64");
  tune({source}, target_, key_, db, measurer, o);

  const TuneTask target_task = task("matmul:M=48,N=64,K=32");
  const SearchSpace space = SearchSpace::generate(target_task.workload, target_);
  std::set<std::string> expected;
  for (const database::Record& r : db.best(source.workload.key(), key_, 4)) {
    std::optional<Config> c = space.nearest(support::Json::parse(r.knobs));
    if (c)
      expected.insert(space.key(*c));
  }
  ASSERT_FALSE(expected.empty());
  o.trials = 8;
  o.batch_size = 8;
  const TuneResult r = tune({target_task}, target_, key_, db, measurer, o);
  EXPECT_EQ(r.trials, 8);
  const std::set<std::string> measured = knob_set(db.history(target_task.workload.key(), key_));
  for (const std::string& k : expected) {
    EXPECT_EQ(measured.count(k), 1u) << k;
  }
}

TEST_F(TunerTest, AWarmStartedTaskMeasuresPartOfItsFirstBatchThenRetrainsOnItsOwnShape) {
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  TuneOptions o = run_options(TunerKind::Xgb, 24, 12, 3);
  tune({task("matmul:M=64,N=64,K=64")}, target_, key_, db, measurer, o);
  // The model starts from the other shape's records: 8 of a batch of 16, then the other 8.
  o.trials = 16;
  o.batch_size = 16;
  std::vector<int64_t> per_round;
  const auto count = [&](const TuneProgress& p) {
    per_round.push_back(p.measured - (per_round.empty() ? 0 : per_round.back()));
  };
  tune({task("matmul:M=48,N=64,K=32")}, target_, key_, db, measurer, o, count);
  EXPECT_EQ(per_round, (std::vector<int64_t>{8, 8}));
  // A full first round when asked, and without transfer (the model knows nothing yet).
  per_round.clear();
  o.first_batch_share = 1;
  tune({task("matmul:M=32,N=64,K=32")}, target_, key_, db, measurer, o, count);
  EXPECT_EQ(per_round, (std::vector<int64_t>{16}));
  per_round.clear();
  o.first_batch_share = 0.5;
  o.transfer = false;
  tune({task("matmul:M=32,N=32,K=64")}, target_, key_, db, measurer, o, count);
  EXPECT_EQ(per_round, (std::vector<int64_t>{16}));
}

TEST_F(TunerTest, ATasksFirstRoundMeasuresTheBestOfTheRunsOtherTaskMappedToItsSpace) {
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  TuneOptions o = run_options(TunerKind::Xgb, 16, 8, 5);
  o.scheduler.policy = SchedulePolicy::RoundRobin;
  o.confirm_top = 0;  // db.best must be the order the run saw, not a confirmation after it
  const std::vector<TuneTask> tasks{task("matmul:M=64,N=64,K=64"), task("matmul:M=48,N=64,K=32")};
  tune(tasks, target_, key_, db, measurer, o);
  // One round each: the first task's best (of its only round) was known when the second task's
  // first batch was proposed.
  const std::vector<database::Record> first = db.best(tasks[0].workload.key(), key_, 2);
  ASSERT_FALSE(first.empty());
  const SearchSpace space = SearchSpace::generate(tasks[1].workload, target_);
  const std::set<std::string> measured = knob_set(db.history(tasks[1].workload.key(), key_));
  EXPECT_EQ(measured.size(), 8u);
  for (const database::Record& r : first) {
    if (r.knobs == "{}")
      continue;  // the default schedule is not a configuration of the space
    const std::optional<Config> c = space.nearest(support::Json::parse(r.knobs));
    ASSERT_TRUE(c.has_value()) << r.knobs;
    EXPECT_EQ(measured.count(space.key(*c)), 1u) << r.knobs;
  }
}

TEST_F(TunerTest, RecordsTunedElsewhereAreMeasuredInTheTasksFirstBatch) {
  measure::Measurer measurer(target_, measurer_options());
  TuneOptions o = run_options(TunerKind::Xgb, 16, 8, 11);
  o.confirm_top = 0;
  TuneTask elsewhere_task = task("matmul:M=64,N=64,K=64");
  database::Database elsewhere = database::Database::open((dir_ / "elsewhere.db").string());
  tune({elsewhere_task}, target_, key_, elsewhere, measurer, o);
  std::vector<database::Record> starts;
  for (const database::Record& r : elsewhere.best(elsewhere_task.workload.key(), key_, 4)) {
    if (r.knobs != "{}")  // the default schedule is not a configuration of the space
      starts.push_back(r);
  }
  ASSERT_GE(starts.size(), 2u);
  starts.resize(2);
  // A fresh database: the task knows nothing but its starts, and measures them first.
  database::Database db = database::Database::open(db_path());
  TuneTask t = task("matmul:M=64,N=64,K=64");
  t.starts = starts;
  o.trials = 8;
  o.seed = 99;  // not the run that found them
  tune({t}, target_, key_, db, measurer, o);
  const SearchSpace space = SearchSpace::generate(t.workload, target_);
  const std::set<std::string> measured = knob_set(db.history(t.workload.key(), key_));
  for (const database::Record& r : starts) {
    const std::optional<Config> c = space.nearest(support::Json::parse(r.knobs));
    ASSERT_TRUE(c.has_value()) << r.knobs;
    EXPECT_EQ(measured.count(space.key(*c)), 1u) << r.knobs;
  }
}

TEST_F(TunerTest, TasksResumedWithABestSkipTheWarmUpRound) {
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  TuneOptions o = run_options(TunerKind::Random, 16, 8, 2);
  o.scheduler.eps_random = 0;
  // The second task runs 1000 times per model: once both have a best, it gets every round.
  const std::vector<TuneTask> tasks{task("matmul:M=32,N=32,K=32"),
                                    TuneTask::from_spec("matmul:M=32,N=32,K=64", 1000)};
  tune(tasks, target_, key_, db, measurer, o);  // one round each
  o.trials = 32;
  std::vector<int> picked;
  const TuneResult r = tune(tasks, target_, key_, db, measurer, o,
                            [&](const TuneProgress& p) { picked.push_back(p.task); });
  EXPECT_EQ(r.trials, 16);
  EXPECT_EQ(picked, (std::vector<int>{1, 1}));
}

TEST_F(TunerTest, StopFlagEndsTheRunAfterTheBatchInFlightIsSaved) {
  const std::vector<TuneTask> tasks{task("matmul:M=32,N=32,K=32"), task("relu:M=64,N=64")};
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  TuneOptions o = run_options(TunerKind::Random, 100, 4);
  std::atomic<bool> stop{false};
  const TuneResult r = tune(
      tasks, target_, key_, db, measurer, o, [&](const TuneProgress&) { stop.store(true); }, &stop);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.trials, 4);
  EXPECT_EQ(db.count_records(), 4);
  const std::vector<database::TuningRun> runs = db.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].trials, 4);
  EXPECT_GT(runs[0].ended, 0);
  for (const database::Record& rec : db.all_records())
    EXPECT_DOUBLE_EQ(rec.confirmed_seconds, 0);  // a stop ends it at once: nothing confirmed
}

TEST_F(TunerTest, ABudgetSmallerThanABatchPerTaskReachesEveryTask) {
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  TuneOptions o = run_options(TunerKind::Random, 12, 8);
  o.confirm_top = 0;
  const std::vector<TuneTask> tasks{task("matmul:M=32,N=32,K=32"), task("relu:M=64,N=64"),
                                    task("matmul:M=16,N=16,K=16")};
  const TuneResult r = tune(tasks, target_, key_, db, measurer, o);
  EXPECT_EQ(r.trials, 12);
  ASSERT_EQ(r.tasks.size(), 3U);
  for (const TaskResult& t : r.tasks)
    EXPECT_EQ(t.trials, 4) << t.workload_name;  // 12 / 3, not 8 + 4 + 0
}

TEST_F(TunerTest, OneWorkloadGivenTwiceIsAUserError) {
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  const std::vector<TuneTask> tasks{task("matmul:M=32,N=32,K=32"),
                                    task("matmul:K=32,N=32,M=32")};  // the same workload
  EXPECT_THROW(check_distinct_workloads(tasks), UserError);
  EXPECT_THROW(tune(tasks, target_, key_, db, measurer, run_options(TunerKind::Random, 8, 4)),
               UserError);
  EXPECT_EQ(db.count_records(), 0);
}

TEST_F(TunerTest, AStopDuringTheLastBatchSkipsTheConfirmation) {
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  TuneOptions o = run_options(TunerKind::Random, 4, 4);
  o.confirm_top = 3;
  std::atomic<bool> stop{false};
  const TuneResult r = tune(
      {task("matmul:M=32,N=32,K=32")}, target_, key_, db, measurer, o,
      [&](const TuneProgress&) { stop.store(true); }, &stop);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.stop_reason, "stopped on request");
  EXPECT_EQ(r.trials, 4);
  EXPECT_EQ(r.tasks.at(0).confirmed, 0);
  for (const database::Record& rec : db.all_records())
    EXPECT_DOUBLE_EQ(rec.confirmed_seconds, 0);
}

TEST_F(TunerTest, AConfirmationRoundTheMachineRanSlowForIsMeasuredAgain) {
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  // The job's start, then before each round: the second round meets a machine 30% slower.
  std::vector<double> readings;
  const TuneOptions o = confirm_options([&readings] {
    readings.push_back(readings.size() == 2 ? 70.0 : 100.0);
    return readings.back();
  });
  const TuneResult r = tune({task("matmul:M=32,N=32,K=32")}, target_, key_, db, measurer, o);
  ASSERT_GE(r.tasks.at(0).confirmed, 2);
  EXPECT_EQ(r.confirm_slow_rounds, 1);
  EXPECT_FALSE(r.confirm_stayed_slow);
  EXPECT_DOUBLE_EQ(r.confirm_speed, 1.0);
  EXPECT_GE(readings.size(), 5U);  // the start and 4 rounds (at least: one more confirmation)
  const database::Record best = db.best(r.tasks[0].workload_key, key_, 1).at(0);
  EXPECT_EQ(best.confirm_rounds, 3);  // the slow round is not among them
}

TEST_F(TunerTest, AMachineThatStaysSlowMarksTheConfirmedFiguresNoisy) {
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  int reads = 0;
  const TuneOptions o = confirm_options([&reads] {
    return ++reads == 1 ? 100.0 : 80.0;  // fast at the start, 20% slower from then on
  });
  const TuneResult r = tune({task("matmul:M=32,N=32,K=32")}, target_, key_, db, measurer, o);
  const TaskResult& t = r.tasks.at(0);
  ASSERT_GE(t.confirmed, 2);
  EXPECT_TRUE(r.confirm_stayed_slow);
  EXPECT_EQ(r.confirm_slow_rounds, 0);  // none set aside: all of them kept
  EXPECT_NEAR(r.confirm_speed, 0.8, 1e-9);
  // The start and 3 rounds a confirmation: alike among themselves, none is measured again.
  EXPECT_EQ((reads - 1) % 3, 0) << reads;
  const database::Record best = db.best(t.workload_key, key_, 1).at(0);
  EXPECT_EQ(best.confirm_rounds, 3);
  EXPECT_GE(best.confirm_spread, 0.2 - 1e-9);
  EXPECT_GT(t.best_spread, kNoisySpread);  // every surface marks it noisy
}

TEST_F(TunerTest, AClockThatSettlesAfterTheJobsStartIsNeitherMeasuredAgainNorNoisy) {
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  int reads = 0;
  const TuneOptions o = confirm_options([&reads] {
    return ++reads == 1 ? 100.0 : 93.0;  // a boost clock at the start, 7% lower once busy
  });
  const TuneResult r = tune({task("matmul:M=32,N=32,K=32")}, target_, key_, db, measurer, o);
  const TaskResult& t = r.tasks.at(0);
  ASSERT_GE(t.confirmed, 2);
  EXPECT_FALSE(r.confirm_stayed_slow);
  EXPECT_EQ(r.confirm_slow_rounds, 0);
  EXPECT_NEAR(r.confirm_speed, 0.93, 1e-9);  // still reported against the start
  EXPECT_EQ((reads - 1) % 3, 0) << reads;
  EXPECT_EQ(db.best(t.workload_key, key_, 1).at(0).confirm_rounds, 3);
}

TEST_F(TunerTest, AfterItsDeadlineAJobMeasuresNoSlowRoundAgain) {
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  TuneOptions o = confirm_options(nullptr);
  o.time_budget_seconds = 0.5;
  // The first confirmation round is read past the deadline; its second one is slow.
  std::vector<double> readings;
  double start = 0;
  o.machine_speed = [&] {
    if (readings.empty())
      start = measure::now_seconds();
    if (readings.size() == 1) {
      while (measure::now_seconds() < start + o.time_budget_seconds + 0.05)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    readings.push_back(readings.size() == 2 ? 70.0 : 100.0);
    return readings.back();
  };
  const TuneResult r = tune({task("matmul:M=32,N=32,K=32")}, target_, key_, db, measurer, o);
  ASSERT_GE(r.tasks.at(0).confirmed, 2);
  EXPECT_EQ(r.confirm_slow_rounds, 1);
  // 3 rounds a confirmation (without the deadline, the slow one would have had a fourth).
  EXPECT_EQ((readings.size() - 1) % 3, 0U) << readings.size();
  if (readings.size() == 4) {  // one confirmation: the best's figure is of its 2 fast rounds
    EXPECT_EQ(db.best(r.tasks[0].workload_key, key_, 1).at(0).confirm_rounds, 2);
  }
}

TEST_F(TunerTest, TheBestRecordsAreMeasuredAgainSideBySideAtTheEnd) {
  const std::vector<TuneTask> tasks{task("matmul:M=32,N=32,K=32"), task("relu:M=64,N=64")};
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  TuneOptions o = run_options(TunerKind::Random, 24, 6, 4);
  o.confirm_top = 3;
  o.confirm_rounds = 2;
  const TuneResult r = tune(tasks, target_, key_, db, measurer, o);
  EXPECT_EQ(db.count_records(), 24);  // a confirmation is not a trial
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TaskResult& t = r.tasks[i];
    EXPECT_GE(t.confirmed, 3) << t.workload_name;
    const std::vector<database::Record> history = db.history(t.workload_key, key_);
    const database::Record* fastest = nullptr;  // by single measurements
    int confirmed = 0;
    for (const database::Record& rec : history) {
      confirmed += rec.confirmed_seconds > 0 ? 1 : 0;
      if (rec.ok() && (fastest == nullptr || rec.median_seconds < fastest->median_seconds))
        fastest = &rec;
    }
    EXPECT_GE(confirmed, 3) << t.workload_name;
    ASSERT_NE(fastest, nullptr);
    EXPECT_EQ(t.unconfirmed_best_id, fastest->id);
    const database::Record best = db.best(t.workload_key, key_, 1).at(0);
    EXPECT_EQ(t.best_record_id, best.id);
    EXPECT_GT(best.confirmed_seconds, 0);
    // The one time of a record: the confirmed median of the rounds, each in a fresh worker.
    EXPECT_TRUE(t.best_confirmed);
    EXPECT_DOUBLE_EQ(t.best_seconds, best.confirmed_seconds);
    EXPECT_EQ(best.confirm_rounds, 2);
    EXPECT_GE(best.confirm_spread, 0);
    EXPECT_DOUBLE_EQ(t.best_spread, best.confirm_spread);
    EXPECT_GE(t.runner_up_gap, 0);
  }
  // A run that measures nothing confirms nothing; confirm_top 0 turns it off.
  const TuneResult again = tune(tasks, target_, key_, db, measurer, o);
  EXPECT_EQ(again.trials, 0);
  EXPECT_EQ(again.tasks[0].confirmed, 0);
  EXPECT_EQ(again.tasks[0].best_record_id, r.tasks[0].best_record_id);
  o.trials = 30;
  o.confirm_top = 0;
  const TuneResult off = tune(tasks, target_, key_, db, measurer, o);
  EXPECT_EQ(off.trials, 6);
  EXPECT_EQ(off.tasks[0].confirmed + off.tasks[1].confirmed, 0);
}

TEST_F(TunerTest, AResumedRunsBestIsMeasuredAgainBesideTheDatabasesBest) {
  const std::vector<TuneTask> tasks{task("matmul:M=32,N=32,K=32")};
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  TuneOptions o = run_options(TunerKind::Random, 12, 6, 8);
  o.confirm_top = 0;
  tune(tasks, target_, key_, db, measurer, o);
  o.trials = 18;
  o.confirm_top = 2;
  o.confirm_rounds = 1;
  const TuneResult second = tune(tasks, target_, key_, db, measurer, o);
  ASSERT_EQ(second.trials, 6);
  std::vector<database::Record> history = db.history(tasks[0].workload.key(), key_);
  std::stable_sort(history.begin(), history.end(), [](const auto& a, const auto& b) {
    return a.ok() && (!b.ok() || a.median_seconds < b.median_seconds);
  });
  // The two fastest by single measurements, and the second run's fastest, wherever it ranks.
  std::set<int64_t> expected{history.at(0).id, history.at(1).id};
  for (const database::Record& r : history) {
    if (r.ok() && r.run_id == second.run_id) {
      expected.insert(r.id);
      break;
    }
  }
  std::set<int64_t> confirmed;
  for (const database::Record& r : history) {
    if (r.confirmed_seconds > 0)
      confirmed.insert(r.id);
  }
  EXPECT_EQ(confirmed, expected);
  EXPECT_EQ(second.tasks[0].confirmed, static_cast<int64_t>(expected.size()));
}

TEST_F(TunerTest, GridTunerWalksTheSpaceInOrderAndStopsWhenExhausted) {
  const std::vector<TuneTask> tasks{task("relu:M=16,N=4")};
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  TuneOptions o = run_options(TunerKind::Grid, 100000, 64);
  const TuneResult r = tune(tasks, target_, key_, db, measurer, o);
  EXPECT_FALSE(r.interrupted);
  EXPECT_NE(r.stop_reason.find("exhausted"), std::string::npos);
  EXPECT_GT(r.trials, 0);
  // Every configuration once, plus the default schedule.
  EXPECT_LE(static_cast<double>(r.trials),
            SearchSpace::generate(tasks[0].workload, target_).size() + 1);
}

TEST_F(TunerTest, BadOptionsAreUserErrors) {
  const std::vector<TuneTask> tasks{task("matmul:M=8,N=8,K=8")};
  database::Database db = database::Database::open(db_path());
  measure::Measurer measurer(target_, measurer_options());
  TuneOptions o;
  o.batch_size = 0;
  EXPECT_THROW(tune(tasks, target_, key_, db, measurer, o), UserError);
  EXPECT_THROW(tune({}, target_, key_, db, measurer, TuneOptions{}), UserError);
  TuneOptions share;
  share.first_batch_random_share = 1.5;
  EXPECT_THROW(tune(tasks, target_, key_, db, measurer, share), UserError);
  TuneOptions part;
  part.first_batch_share = 0;
  EXPECT_THROW(tune(tasks, target_, key_, db, measurer, part), UserError);
  EXPECT_THROW(parse_tuner("anneal"), UserError);
  EXPECT_EQ(db.count_records(), 0);
}

}  // namespace
}  // namespace tensortune::search
