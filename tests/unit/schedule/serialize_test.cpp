// SPDX-License-Identifier: Apache-2.0
// Schedule JSON: round trips for every step kind, the exact field names, and strict reading.
#include "tensortune/schedule/serialize.h"

#include "tensortune/support/error.h"
#include "unit/schedule/all_steps.h"
#include "unit/schedule/test_workloads.h"

#include <gtest/gtest.h>

namespace tensortune::schedule {
namespace {

using support::Json;

// The message of the UserError that parsing `text` throws, or "" (with a failure) when none.
std::string parse_error(const std::string& text) {
  try {
    parse_schedule(text);
  } catch (const ScheduleError& e) {
    ADD_FAILURE() << "a ScheduleError is for steps that do not apply: " << e.what();
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UserError for " << text;
  return "";
}

std::string with_steps(const std::string& steps) {
  return R"({"version":1,"workload_key":"w","steps":[)" + steps + "]}";
}

TEST(Serialize, EveryStepKindRoundTripsThroughText) {
  for (const Step& step : testing::one_step_of_each_kind()) {
    std::string text = to_json(step).dump();
    Step back = step_from_json(Json::parse(text));
    EXPECT_TRUE(back == step) << text;
    EXPECT_EQ(to_json(back).dump(), text);
  }
}

TEST(Serialize, ASchedulesRoundTripsThroughText) {
  Schedule schedule{"matmul_0123456789abcdef", testing::one_step_of_each_kind()};
  std::string text = to_json(schedule).dump(2);
  Schedule back = parse_schedule(text);
  EXPECT_EQ(back.workload_key, schedule.workload_key);
  ASSERT_EQ(back.steps.size(), schedule.steps.size());
  for (size_t i = 0; i < back.steps.size(); ++i) {
    EXPECT_TRUE(back.steps[i] == schedule.steps[i]) << i;
  }
}

TEST(Serialize, UsesTheDocumentedFieldNames) {
  EXPECT_EQ(to_json(Split{"C", "i", 8, false}).dump(),
            R"({"axis":"i","factor":8,"kind":"split","nparts":false,"stage":"C"})");
  EXPECT_EQ(to_json(Tile{"C", "i", "j", 8, 4}).dump(),
            R"({"kind":"tile","stage":"C","x":"i","x_factor":8,"y":"j","y_factor":4})");
  EXPECT_EQ(to_json(Annotate{"C", "j.i", ir::ForKind::Vectorized}).dump(),
            R"({"axis":"j.i","kind":"vectorize","stage":"C"})");
  EXPECT_EQ(to_json(Annotate{"C", "i.o", ir::ForKind::BlockX}).dump(),
            R"({"axis":"i.o","kind":"blockIdx.x","stage":"C"})");
  EXPECT_EQ(to_json(ComputeAt{"B", "C", "i"}).dump(),
            R"({"kind":"compute_at","stage":"B","target_axis":"i","target_stage":"C"})");
  EXPECT_EQ(to_json(CacheRead{"A", ir::MemoryScope::Shared, {"C"}}).dump(),
            R"({"kind":"cache_read","readers":["C"],"scope":"shared","stage":"A"})");
  EXPECT_EQ(
      to_json(CacheRead{"B", ir::MemoryScope::Local, {}, {{1, 16}, {0, 2}}}).dump(),
      R"({"blocks":[[1,16],[0,2]],"kind":"cache_read","readers":[],"scope":"local","stage":"B"})");
  EXPECT_EQ(
      to_json(CacheRead{"B", ir::MemoryScope::Local, {}, {{1, 16, true}}}).dump(),
      R"({"blocks":[[1,16,1]],"kind":"cache_read","readers":[],"scope":"local","stage":"B"})");
  EXPECT_EQ(
      to_json(
          CacheRead{"B", ir::MemoryScope::Local, {}, {{1, 16, true, true}, {0, 3, false, true}}})
          .dump(),
      R"({"blocks":[[1,16,3],[0,3,2]],"kind":"cache_read","readers":[],"scope":"local",)"
      R"("stage":"B"})");
  EXPECT_EQ(to_json(Schedule{"w", {ComputeRoot{"B"}}}).dump(),
            R"({"steps":[{"kind":"compute_root","stage":"B"}],"version":1,"workload_key":"w"})");
}

TEST(Serialize, ParsedStepsApplyLikeTheOriginals) {
  te::Workload w = testing::matmul_relu();
  std::vector<Step> steps = {CacheWrite{"C", ir::MemoryScope::Local}, Tile{"C", "i", "j", 8, 8},
                             ComputeAt{"C.local", "C", "j.o"}, Fuse{"D", {"i", "j"}},
                             Annotate{"D", "i@j", ir::ForKind::Parallel}};
  Schedule back = parse_schedule(to_json(Schedule{w.key(), steps}).dump());
  LoopState a = apply_steps(w, steps);
  LoopState b = apply_schedule(w, back);
  for (const Stage& stage : a.stages()) {
    EXPECT_EQ(testing::leaves(a, stage.name), testing::leaves(b, stage.name)) << stage.name;
  }
}

TEST(Serialize, RejectsMalformedText) {
  std::string message = parse_error(R"({"version":1,"steps":[)");
  EXPECT_NE(message.find("schedule: malformed JSON"), std::string::npos) << message;
}

TEST(Serialize, RejectsAnUnknownVersionAndMissingTopLevelFields) {
  EXPECT_NE(parse_error(R"({"version":2,"workload_key":"w","steps":[]})")
                .find("unknown format version 2"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"workload_key":"w","steps":[]})").find("'version'"), std::string::npos);
  EXPECT_NE(parse_error(R"({"version":1,"steps":[]})").find("'workload_key'"), std::string::npos);
  EXPECT_NE(parse_error(R"({"version":1,"workload_key":"w","steps":{}})").find("'steps'"),
            std::string::npos);
  EXPECT_NE(parse_error(R"([1,2])").find("must be a JSON object"), std::string::npos);
}

TEST(Serialize, RejectsAMistypedFieldNamingTheStepAndField) {
  std::string message = parse_error(
      with_steps(R"({"kind":"compute_root","stage":"B"},{"kind":"compute_root","stage":"C"},)"
                 R"({"kind":"compute_root","stage":"D"},)"
                 R"({"kind":"split","stage":"C","axis":"i","factor":"8","nparts":false})"));
  EXPECT_EQ(message, "schedule step 3 (split): field 'factor' must be an integer");
  EXPECT_EQ(parse_error(with_steps(
                R"({"kind":"split","stage":"C","axis":"i","factor":2.5,"nparts":false})")),
            "schedule step 0 (split): field 'factor' must be an integer");
  EXPECT_EQ(parse_error(with_steps(R"({"kind":"fuse","stage":"C","axes":["i",3]})")),
            "schedule step 0 (fuse): field 'axes' must be an array of strings");
  EXPECT_EQ(parse_error(with_steps(R"({"kind":"split","stage":"C","axis":"i","factor":2,)"
                                   R"("nparts":1})")),
            "schedule step 0 (split): field 'nparts' must be true or false");
  EXPECT_EQ(parse_error(with_steps(R"({"kind":"cache_read","stage":"B","scope":"local",)"
                                   R"("readers":[],"blocks":[[1]]})")),
            "schedule step 0 (cache_read): field 'blocks' must be an array of [dim, factor] or "
            "[dim, factor, flags] integer arrays (flags 1: the outer part first, 2: padded, 3: "
            "both)");
  EXPECT_EQ(parse_error(with_steps(R"({"kind":"cache_read","stage":"B","scope":"local",)"
                                   R"("readers":[],"blocks":[[1,16,4]]})")),
            "schedule step 0 (cache_read): field 'blocks' must be an array of [dim, factor] or "
            "[dim, factor, flags] integer arrays (flags 1: the outer part first, 2: padded, 3: "
            "both)");
}

TEST(Serialize, RejectsAMissingField) {
  EXPECT_EQ(parse_error(with_steps(R"({"kind":"split","stage":"C","axis":"i","nparts":false})")),
            "schedule step 0 (split): missing field 'factor'");
  EXPECT_EQ(parse_error(with_steps(R"({"kind":"vectorize","stage":"C"})")),
            "schedule step 0 (vectorize): missing field 'axis'");
  EXPECT_EQ(parse_error(with_steps(R"({"stage":"C"})")),
            "schedule step 0: field 'kind' must be a string");
}

TEST(Serialize, RejectsAnUnknownKindFieldOrScope) {
  EXPECT_EQ(parse_error(with_steps(R"({"kind":"splat","stage":"C"})")),
            "schedule step 0 (splat): unknown kind 'splat'");
  EXPECT_EQ(parse_error(with_steps(R"({"kind":"compute_root","stage":"C","axis":"i"})")),
            "schedule step 0 (compute_root): unknown field 'axis'");
  std::string scope =
      parse_error(with_steps(R"({"kind":"cache_write","stage":"C","scope":"register"})"));
  EXPECT_NE(scope.find("schedule step 0 (cache_write): field 'scope' must be"), std::string::npos)
      << scope;
  EXPECT_EQ(parse_error(with_steps("3")), "schedule step 0: must be an object");
}

TEST(Serialize, StepFromJsonAloneNamesNoIndex) {
  EXPECT_THROW(
      {
        try {
          step_from_json(Json::parse(R"({"kind":"tile","stage":"C","x":"i","y":"j"})"));
        } catch (const UserError& e) {
          EXPECT_STREQ(e.what(), "schedule step (tile): missing field 'x_factor'");
          throw;
        }
      },
      UserError);
}

}  // namespace
}  // namespace tensortune::schedule
