// SPDX-License-Identifier: Apache-2.0
// The tensortune binary: global options, subcommand dispatch, and the only catch-all, which maps
// errors to exit codes (0 ok, 1 user error, 2 usage, 70 internal error).
#include "args.h"
#include "commands.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <cstddef>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

namespace tensortune::cli {
namespace {

constexpr int kExitUserError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInternalError = 70;

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>&);
};

/// The subcommands, in the order --help lists them.
std::vector<Command> commands() {
  return {
      {"tune", "search schedules for workloads and store every measurement in the database",
       run_tune},
      {"show", "print a schedule's steps, loop IR, LLVM IR or assembly", run_show},
      {"bench", "build, verify and time one kernel; compare with the FMA peak", run_bench},
      {"compile", "build workloads with their best records into a .so and a C header", run_compile},
      {"tune-model", "tune every kernel of an ONNX model with the task scheduler", run_tune_model},
      {"compile-model", "build an ONNX model with the best records into a model folder",
       run_compile_model},
      {"run-model", "run and time a compiled model folder on .npy inputs", run_run_model},
      {"report", "write an HTML report of a tuning database and print a summary", run_report},
      {"db", "query and maintain a tuning database (list, best, export, import, ...)", run_db},
      {"train-model", "train the zero-shot cost model on tuning databases", run_train},
      {"ops", "list the operators of workload specs, with their keys", run_ops},
      {"worker", "measure the jobs tuners queue in a shared database, on this machine", run_worker},
      {"workers", "list a database's measurement workers, their jobs and throughput", run_workers},
  };
}

std::string program_help() {
  std::string text =
      "usage: tensortune [-v|-vv] [--version] [-h|--help] COMMAND [OPTIONS]\n\n"
      "Auto-tuning of tensor kernel schedules.\n\ncommands:\n";
  for (const Command& c : commands()) {
    text += "  " + std::string(c.name) + std::string(15 - std::string(c.name).size(), ' ') +
            c.summary + "\n";
  }
  text +=
      "\nRun 'tensortune COMMAND --help' for the options of a command.\n"
      "Exit codes: 0 ok, 1 error in the input, 2 usage error, 70 internal error.\n";
  return text;
}

/// "tune, show, ..." in the order of commands().
std::string command_names() {
  std::string names;
  for (const Command& c : commands()) {
    names += names.empty() ? "" : ", ";
    names += c.name;
  }
  return names;
}

int dispatch(const std::vector<std::string>& args) {
  size_t i = 0;
  int verbosity = 0;
  for (; i < args.size() && !args[i].empty() && args[i][0] == '-'; ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << program_help();
      return 0;
    }
    if (arg == "--version") {
      std::cout << "tensortune " << TT_VERSION << "\n";
      return 0;
    }
    if (int v = verbosity_of(arg); v > 0) {
      verbosity += v;
      continue;
    }
    throw UsageError("unknown option '" + arg + "'", "");
  }
  apply_verbosity(std::min(verbosity, 3));
  if (i == args.size()) {
    throw UsageError("missing command (one of: " + command_names() + ")", "");
  }
  std::vector<std::string> rest(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
  if (args[i] == "help") {
    return dispatch(rest.empty() ? std::vector<std::string>{"--help"}
                                 : std::vector<std::string>{rest[0], "--help"});
  }
  for (const Command& c : commands()) {
    if (args[i] == c.name) {
      return c.run(rest);
    }
  }
  throw UsageError("unknown command '" + args[i] + "' (one of: " + command_names() + ")", "");
}

}  // namespace

}  // namespace tensortune::cli

int main(int argc, char** argv) {
  using tensortune::cli::UsageError;
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    const int rc = tensortune::cli::dispatch(args);
    // What a command printed is its result: a full disk or a closed pipe is an error, not a
    // silent success with nothing written.
    std::cout.flush();
    TT_USER_CHECK(std::cout.good() || rc != 0) << "cannot write to standard output";
    return rc;
  } catch (const UsageError& e) {
    std::string help =
        e.command().empty() ? "tensortune --help" : "tensortune " + e.command() + " --help";
    std::cerr << "tensortune: error: " << e.what() << "\n(see '" << help << "')\n";
    return tensortune::cli::kExitUsage;
  } catch (const tensortune::UserError& e) {
    std::cerr << "tensortune: error: " << e.what() << "\n";
    return tensortune::cli::kExitUserError;
  } catch (const std::exception& e) {  // InternalError and anything else: a bug
    std::cerr << "tensortune: internal error: " << e.what() << " (this is a bug)\n";
    return tensortune::cli::kExitInternalError;
  } catch (...) {
    std::cerr << "tensortune: internal error: unknown exception (this is a bug)\n";
    return tensortune::cli::kExitInternalError;
  }
}
