// SPDX-License-Identifier: Apache-2.0
// What `tune` and `tune-model` share (defined in cmd_tune.cpp): the search and measurement
// options with their defaults, and opening the database records go to.
#pragma once

#include "args.h"
#include "tensortune/database/database.h"
#include "tensortune/measure/measurer.h"
#include "tensortune/search/tuner.h"
#include "tensortune/target/target.h"

#include <string>

namespace tensortune::cli {

/// Adds --threads, --build-timeout, --run-timeout, --single-call-factor, --timing-budget,
/// --confirm, --confirm-rounds, --time-budget, and
/// --cache-flush (or, when `flush_by_default`, --no-cache-flush: tune-model's timings flush).
ArgParser& add_measurement_options(ArgParser& parser, bool flush_by_default = false);
/// Seconds of "600", "90s", "10m" or "2h"; UserError otherwise.
double parse_duration(const std::string& text);
/// The measurer's options from those flags (their defaults when absent), for `target`.
measure::MeasurerOptions measurer_options(const ArgParser::Parsed& p,
                                          const target::Target& target,
                                          bool flush_by_default = false);
/// The search options from --tuner, --model, --trials (default 200), --seed, --batch,
/// --eps-greedy, --early-stop, --scheduler, --no-transfer, --no-prior, --confirm and
/// --confirm-rounds (defaults when absent); --time-budget (trials then default to no limit); the
/// zero-shot model as the initial model unless --no-zero-shot (add_zero_shot_options).
search::TuneOptions tune_options(const ArgParser::Parsed& p);
/// Opens (creating it and its folder) the database of --db, default tuning_logs/tensortune.db;
/// UserError naming `command` when the folder cannot be created.
database::Database open_tuning_database(const ArgParser::Parsed& p, const std::string& command);

}  // namespace tensortune::cli
