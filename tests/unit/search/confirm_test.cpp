// SPDX-License-Identifier: Apache-2.0
// The best a job reports after its confirmation: never a record that failed when measured again.
#include "search/confirm.h"

#include "common/db_records.h"
#include "tensortune/database/database.h"
#include "tensortune/target/target.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <unistd.h>

namespace tensortune::search {
namespace {

TEST(ConfirmBest, ARecordWhoseConfirmationFailedIsNotKeptAsBest) {
  const std::string path = testing::TempDir() + "tt_confirm_" + std::to_string(::getpid()) + ".db";
  std::remove(path.c_str());
  const TuneTask task = TuneTask::from_spec("matmul:M=32,N=32,K=32");
  detail::TaskState state(task, target::Target::parse("llvm -mcpu=znver4 -cores=2"), 1);
  const database::TargetKey key{"llvm -cores=2 -mcpu=znver4", "fp"};
  {
    database::Database db = database::Database::open(path);
    test::register_workload(db, task.workload);
    // An imported record, fast on paper, whose schedule's build timed out when measured again;
    // then two honest ones.
    const std::vector<int64_t> ids =
        db.add_records({test::raw_record(task.workload, key, "{\"steps\":[1]}", 1e-9),
                        test::raw_record(task.workload, key, "{\"steps\":[2]}", 2e-5),
                        test::raw_record(task.workload, key, "{\"steps\":[3]}", 3e-5)});
    state.result.workload_key = task.workload.key();
    state.result.best_record_id = ids[0];
    state.result.best_seconds = 1e-9;
    detail::choose_best_after_confirmation(state, db, key, {ids[0]});
    EXPECT_EQ(state.result.best_record_id, ids[1]);
    EXPECT_DOUBLE_EQ(state.result.best_seconds, 2e-5);
    EXPECT_NEAR(state.result.best_gflops, 2.0 * 32 * 32 * 32 / 2e-5 * 1e-9, 1e-6);
    EXPECT_EQ(state.result.unconfirmed_best_id, ids[0]);
    // Every candidate failed: no best at all rather than one that does not build.
    detail::choose_best_after_confirmation(state, db, key, ids);
    EXPECT_EQ(state.result.best_record_id, 0);
    EXPECT_DOUBLE_EQ(state.result.best_seconds, 0);
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tensortune::search
