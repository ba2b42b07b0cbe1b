// SPDX-License-Identifier: Apache-2.0
// `tensortune show`: a schedule's steps, its lowered loop IR, or the code generated from it.
#include "commands.h"
#include "db_schedule.h"
#include "pipeline.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/te/operators.h"
#include "zero_shot_cli.h"

#include <iostream>

namespace tensortune::cli {

ArgParser show_parser() {
  ArgParser parser("show",
                   "show --workload SPEC --target T [--schedule default|best|FILE.json | --db "
                   "PATH --record ID|best] --emit steps|ir|llvm|asm|cuda|ptx [--json]",
                   "Prints a schedule's steps, its lowered loop IR, or the code generated from "
                   "it: LLVM IR or assembly for a CPU target, CUDA C or PTX for a CUDA target. "
                   "--record ID shows one record of the database; --record best (or --schedule "
                   "best) the schedule `tensortune compile` would use.");
  parser.option("workload", "SPEC", kWorkloadHelp, {}, true)
      .option("target", "T", kTargetHelp, {}, true)
      .option("schedule", "S", kScheduleHelp)
      .option("db", "PATH",
              "the tuning database (read only) for --record and --schedule best (default "
              "tuning_logs/tensortune.db)")
      .option("record", "ID", "a record id of --db, or 'best'")
      .option("emit", "WHAT", "what to print", {"steps", "ir", "llvm", "asm", "cuda", "ptx"}, true)
      .option("build-timeout", "S", kBuildTimeoutHelp)
      .flag("json",
            "print one JSON document {workload, workload_key, target, schedule, emit, text}");
  add_zero_shot_options(parser);
  return parser;
}

int run_show(const std::vector<std::string>& args) {
  std::optional<ArgParser::Parsed> parsed = parse_command_line(show_parser(), args);
  if (!parsed) {
    return 0;
  }
  te::Workload workload = te::make_workload(parsed->get("workload"));
  std::string target_text = parsed->get("target");
  target::Target target = resolve_target(target_text);
  check_target_runs_here(target_text, "show", false);
  std::string text;
  std::string emit = parsed->get("emit");
  ScheduleChoice choice;
  {
    const BuildDeadline deadline(
        parsed->get_double("build-timeout", kDefaultBuildTimeout, 0.001, 86400), "show");
    choice = choose_schedule(*parsed, workload, "show");
    text = render_kernel(emit, workload, choice.schedule, target);
  }
  if (!parsed->has("json")) {
    std::cout << text;
    return 0;
  }
  support::Json out = support::Json::object();
  out["workload"] = workload.name();
  out["workload_key"] = workload.key();
  out["target"] = target::Target::parse(target_text).to_string();
  out["schedule"] = schedule::to_json(choice.schedule);
  out["schedule_source"] = choice.source;
  out["emit"] = emit;
  out["text"] = text;
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace tensortune::cli
