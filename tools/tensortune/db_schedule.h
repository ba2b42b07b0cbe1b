// SPDX-License-Identifier: Apache-2.0
// Schedules from a tuning database for the kernel commands (show, bench): --schedule best and
// --record ID|best go through the driver's compile-time lookup, as `tensortune compile` does.
#pragma once

#include "args.h"
#include "pipeline.h"
#include "tensortune/driver/compile.h"
#include "tensortune/support/json.h"

#include <string>
#include <vector>

namespace tensortune::cli {

/// The schedule a kernel command uses. `--schedule default|FILE` as pipeline's load_schedule;
/// `--schedule best` or `--record best` (needs --db PATH): the driver's lookup for the target
/// as written in --target, with its fallbacks; `--record ID` (needs --db): exactly that record,
/// a UserError when it is of another workload or its steps do not apply. The database is opened
/// read-only (a missing file is a UserError). Where the schedule came from and the driver's
/// warnings are printed on stderr. `command` names the subcommand in usage errors.
ScheduleChoice choose_schedule(const ArgParser::Parsed& args,
                               const te::Workload& workload,
                               const std::string& command);

/// What compile would build for `workload` (`--schedule auto`): the database's record when --db
/// holds one, else an adapted record, else a shipped one, else a zero-shot schedule, else the
/// default. `zero_shot_only` (`--schedule zero-shot`): the zero-shot pick, records ignored.
ScheduleChoice auto_schedule(const ArgParser::Parsed& args,
                             const te::Workload& workload,
                             bool zero_shot_only = false);

/// The database's best schedule for `workload` (the driver's lookup, as --schedule best);
/// needs --db PATH.
ScheduleChoice best_schedule(const ArgParser::Parsed& args,
                             const te::Workload& workload,
                             const std::string& command);

/// The `k` best records of (`info`, `target`) whose schedules replay onto the workload, as
/// Database::best ranks them. A record that does not replay (imported from another version, its
/// steps changed since) is skipped with a warning on stderr naming it and why. When this build
/// cannot rebuild the workload from `info.spec`, nothing can be checked: Database::best's list.
std::vector<database::Record> replaying_best(const database::Database& db,
                                             const database::WorkloadInfo& info,
                                             const database::TargetKey& target,
                                             int64_t k);

/// The compiler's warnings: each stale-record warning, then the summary of untuned workloads.
std::vector<std::string> driver_warnings(const driver::Compiler& compiler);

/// Prints driver_warnings on stderr, each as "tensortune: warning: ...".
void print_driver_warnings(const driver::Compiler& compiler);

/// Sets `out`'s "untuned" (Compiler::untuned) and "warnings" (driver_warnings) arrays, as every
/// --json build result lists them.
void add_driver_notes(const driver::Compiler& compiler, support::Json* out);

}  // namespace tensortune::cli
