// SPDX-License-Identifier: Apache-2.0
// The subcommands of the tensortune binary, one file each, and what they share with main().
#pragma once

#include "args.h"

#include <string>
#include <vector>

namespace tensortune::cli {

/// `tensortune show`: prints a schedule's steps, lowered loop IR, LLVM IR or assembly.
ArgParser show_parser();
int run_show(const std::vector<std::string>& args);

/// `tensortune bench`: builds, verifies and times one kernel.
ArgParser bench_parser();
int run_bench(const std::vector<std::string>& args);

/// `tensortune tune`: searches schedules and stores every measurement in the database.
ArgParser tune_parser();
int run_tune(const std::vector<std::string>& args);
/// `tensortune report`: an HTML report and a text summary of a tuning database.
ArgParser report_parser();
int run_report(const std::vector<std::string>& args);
ArgParser ops_parser();
int run_ops(const std::vector<std::string>& args);
/// `tensortune compile`: ahead-of-time build into DIR/NAME.so and DIR/NAME.h.
ArgParser compile_parser();
int run_compile(const std::vector<std::string>& args);
/// `tensortune tune-model MODEL.onnx`: tunes every kernel of a model with the task scheduler.
ArgParser tune_model_parser();
int run_tune_model(const std::vector<std::string>& args);
/// `tensortune compile-model MODEL.onnx`: builds a model folder with the best records.
ArgParser compile_model_parser();
int run_compile_model(const std::vector<std::string>& args);
/// `tensortune run-model DIR`: runs and times a compiled model folder on .npy inputs.
ArgParser run_model_parser();
int run_run_model(const std::vector<std::string>& args);
/// `tensortune train-model`: the zero-shot cost model from tuning databases.
ArgParser train_parser();
int run_train(const std::vector<std::string>& args);
/// `tensortune db ACTION`: queries and maintains the tuning database.
ArgParser worker_parser();
int run_worker(const std::vector<std::string>& args);
ArgParser workers_parser();
int run_workers(const std::vector<std::string>& args);

ArgParser db_parser();
int run_db(const std::vector<std::string>& args);
/// `tensortune db shipped|shipped-import|shipped-update`: the shipped tuning logs.
int run_db_shipped(const std::string& action, const std::vector<std::string>& args);

/// The options every kernel command takes, in the same words.
inline constexpr const char* kWorkloadHelp =
    "workload spec NAME:key=value,..., e.g. matmul:M=1024,N=1024,K=1024";
inline constexpr const char* kTargetHelp = "target: native, 'llvm -mcpu=znver4 -cores=2', ...";
inline constexpr const char* kScheduleHelp =
    "'default' (no steps), 'best' (the database's, as compile chooses it; needs --db), 'auto' "
    "(what compile builds: the database's record when --db has one, else a shipped one, else a "
    "zero-shot schedule), 'zero-shot' (the shipped cost model's pick, records ignored) or a "
    "schedule JSON file (default: default)";

}  // namespace tensortune::cli
