// SPDX-License-Identifier: Apache-2.0
// Zero-shot schedules for the build commands (compile, compile-model, bench/show --schedule auto):
// the options, where the shipped model is found, and wiring search::ZeroShot into the driver.
#pragma once

#include "args.h"
#include "tensortune/cost_model/cost_model.h"
#include "tensortune/database/database.h"
#include "tensortune/driver/compile.h"

#include <memory>

#include <string>

namespace tensortune::cli {

/// Adds --no-zero-shot, --zero-shot-model PATH and --no-shipped to a build command.
void add_zero_shot_options(ArgParser& parser);

/// The shipped model of this build's feature version: TT_ZERO_SHOT_MODEL when set, else
/// share/tensortune/zero_shot/cpu.vN.json beside an installed binary, else the source tree's
/// tuning_logs/zero_shot/cpu.vN.json; "" when none of them exists.
std::string shipped_zero_shot_model();

/// Unless --no-zero-shot: the model of --zero-shot-model PATH (a UserError when it cannot be
/// loaded) or the shipped one (null, with a warning on stderr, when it cannot be used; null when
/// there is none).
std::shared_ptr<const cost_model::CostModel> zero_shot_model(const ArgParser::Parsed& args);

/// The shipped tuning logs (a tuning database, read only): TT_SHIPPED_LOGS when set, else
/// share/tensortune/shipped/cpu.db beside an installed binary, else the source tree's
/// tuning_logs/shipped/cpu.db; "" when none of them exists.
std::string shipped_logs_path();

/// The shipped tuning logs opened read-only for the rest of the process; null when there are
/// none or they cannot be opened (a warning on stderr then).
const database::Database* shipped_logs();

/// Zero-shot picks ranked by `model` (null: the sketch prior), for Compiler::set_zero_shot.
driver::ZeroShotFn zero_shot_fn(std::shared_ptr<const cost_model::CostModel> model);

/// Unless --no-shipped, gives `compiler` the shipped tuning logs (shipped_logs). Then, unless
/// --no-zero-shot: gives `compiler` zero-shot schedules ranked by the model of
/// --zero-shot-model PATH (a UserError when it cannot be loaded) or the shipped one. A shipped
/// model that cannot be used (another feature version, unreadable) is a warning on stderr, and
/// the schedules are then ranked by the sketch prior alone.
void enable_zero_shot(const ArgParser::Parsed& args, driver::Compiler& compiler);

}  // namespace tensortune::cli
