// SPDX-License-Identifier: Apache-2.0
// The search's starting points: the task's fastest configurations, and the best of each other
// sketch that is close behind, so a second sketch is refined too.
#include "search/task_state.h"

#include "tensortune/database/database.h"
#include "tensortune/support/rng.h"
#include "tensortune/target/target.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <vector>

namespace tensortune::search {
namespace {

/// `count` distinct sampled configurations of each of the first two sketches.
std::map<int, std::vector<Config>> two_sketches(const SearchSpace& space, size_t count) {
  std::map<int, std::vector<Config>> out;
  support::Rng rng(3);
  for (int attempt = 0; attempt < 10000 && (out[0].size() < count || out[1].size() < count);
       ++attempt) {
    const Config c = space.sample(rng);
    std::vector<Config>& list = out[c.sketch];
    if (c.sketch <= 1 && list.size() < count &&
        std::find(list.begin(), list.end(), c) == list.end())
      list.push_back(c);
  }
  return out;
}

TEST(TaskStateStarts, AnotherSketchCloseBehindStartsTheSearchToo) {
  const TuneTask task = TuneTask::from_spec("dense:M=32,N=64,K=48,bias=1,epilogue=gelu");
  detail::TaskState state(task, target::Target::parse("llvm -mcpu=znver4 -cores=2"), 1);
  ASSERT_GE(state.space.sketches().size(), 2u);
  std::map<int, std::vector<Config>> configs = two_sketches(state.space, 8);
  ASSERT_EQ(configs[0].size(), 8u);
  ASSERT_EQ(configs[1].size(), 8u);
  // Sketch 0 holds the eight fastest (1.0 .. 1.07 ms); sketch 1's best is 1.3 ms, the rest slower.
  int64_t id = 0;
  const auto note = [&](detail::TaskState& s, const Config& c, double seconds) {
    ++id;
    s.note_measured(&c, "{}", seconds, id, id);
  };
  for (size_t i = 0; i < 8; ++i) {
    note(state, configs[0][i], 1e-3 * (1.0 + 0.01 * static_cast<double>(i)));
    note(state, configs[1][i], 1e-3 * (1.3 + 0.5 * static_cast<double>(i)));
  }
  const std::vector<Config> starts = state.top_configs(4);
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_EQ(starts[0], configs[0][0]);  // the fastest first
  EXPECT_EQ(starts[1], configs[0][1]);
  EXPECT_EQ(starts[2], configs[0][2]);
  EXPECT_EQ(starts[3], configs[1][0]);  // sketch 1's best within 1.5x takes the last place
  // Plain top order when the other sketch is far behind (2x).
  detail::TaskState far(task, target::Target::parse("llvm -mcpu=znver4 -cores=2"), 1);
  for (size_t i = 0; i < 8; ++i) {
    note(far, configs[0][i], 1e-3 * (1.0 + 0.01 * static_cast<double>(i)));
    note(far, configs[1][i], 2e-3 * (1.0 + static_cast<double>(i)));
  }
  const std::vector<Config> plain = far.top_configs(4);
  ASSERT_EQ(plain.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(plain[i], configs[0][i]) << i;
  }
}

TEST(TaskStateResume, ARecordWhoseKnobsNowGiveOtherStepsCountsByItsStepsAlone) {
  const TuneTask task = TuneTask::from_spec("matmul:M=16,N=32,K=16");
  const target::Target target = target::Target::parse("llvm -mcpu=znver4 -cores=2");
  std::vector<std::unique_ptr<detail::TaskState>> states;
  states.push_back(std::make_unique<detail::TaskState>(task, target, 1));
  detail::TaskState& state = *states[0];
  std::map<int, std::vector<Config>> configs = two_sketches(state.space, 2);
  ASSERT_EQ(configs[0].size(), 2u);
  const Config same = configs[0][0];
  const Config changed = configs[0][1];
  const std::string path = ::testing::TempDir() + "tt_resume_stale_knobs.db";
  std::remove(path.c_str());
  {
    database::Database db = database::Database::open(path);
    db.put_workload({task.workload.key(), task.workload.name(), task.workload.canonical_text(),
                     task.workload.flop_count(), task.op, task.spec});
    const database::TargetKey key{target.to_string(), "test"};
    auto record = [&](const Config& knobs, const Config& steps, double seconds) {
      database::Record r;
      r.workload_key = task.workload.key();
      r.target = key;
      r.knobs = state.space.to_json(knobs).dump();
      r.schedule = state.schedule_text(steps);
      r.repeats = {seconds};
      r.median_seconds = seconds;
      r.timestamp = 1;
      return r;
    };
    // `changed`'s knobs stored with the steps of `same` (the rules mapped them so then).
    db.add_records({record(same, same, 1e-3), record(changed, same, 2e-3)});
    detail::SampleSet samples;
    detail::warm_start(states, db, key, target, TuneOptions{}, samples);
  }
  std::remove(path.c_str());
  EXPECT_TRUE(state.is_measured(state.space.key(same)));
  EXPECT_FALSE(state.is_measured(state.space.key(changed)));  // measured as it is now
  EXPECT_EQ(state.measured_schedules.count(state.schedule_text(same)), 1u);
  EXPECT_EQ(state.result.resumed, 2);
}

}  // namespace
}  // namespace tensortune::search
