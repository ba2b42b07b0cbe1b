// SPDX-License-Identifier: Apache-2.0
// See zero_shot_cli.h.
#include "zero_shot_cli.h"

#include "tensortune/cost_model/features.h"
#include "tensortune/cost_model/xgboost_model.h"
#include "tensortune/search/zero_shot.h"
#include "tensortune/support/error.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <unistd.h>

#ifndef TT_SOURCE_DIR
#define TT_SOURCE_DIR ""
#endif

namespace tensortune::cli {
namespace {

std::string model_file_name() {
  return "cpu.v" + std::to_string(cost_model::kFeatureVersion) + ".json";
}

std::string executable_dir() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : self.parent_path().string();
}

/// A file shipped with tensortune: the environment variable `env` when set, else
/// share/tensortune/RELATIVE beside an installed binary, else tuning_logs/RELATIVE of the source
/// tree; "" when none of them exists.
std::string shipped_file(const char* env, const std::string& relative) {
  if (const char* value = std::getenv(env); value != nullptr && *value != '\0') {
    return value;
  }
  std::vector<std::string> candidates;
  if (const std::string dir = executable_dir(); !dir.empty()) {
    candidates.push_back(dir + "/../share/tensortune/" + relative);
  }
  if (std::string(TT_SOURCE_DIR).size() > 0) {
    candidates.push_back(std::string(TT_SOURCE_DIR) + "/tuning_logs/" + relative);
  }
  for (const std::string& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec)) {
      return c;
    }
  }
  return "";
}

/// One load per path and process: a model of 1-2 MB takes tens of milliseconds to parse. Never
/// destroyed: freeing a booster after XGBoost's own statics are gone (at exit) aborts.
std::shared_ptr<const cost_model::CostModel> load_model(const std::string& path) {
  static auto* loaded = new std::map<std::string, std::shared_ptr<const cost_model::CostModel>>();
  auto it = loaded->find(path);
  if (it == loaded->end()) {
    it = loaded->emplace(path, cost_model::XGBoostModel::load(path)).first;
  }
  return it->second;
}

}  // namespace

void add_zero_shot_options(ArgParser& parser) {
  parser
      .flag("no-zero-shot",
            "give workloads without a usable record the default schedule (the naive loop nest) "
            "instead of a zero-shot one")
      .option("zero-shot-model", "PATH",
              "the cost model that ranks zero-shot schedules (default: the shipped one, "
              "tuning_logs/zero_shot/" +
                  model_file_name() + ", or TT_ZERO_SHOT_MODEL)")
      .flag("no-shipped",
            "do not use the tuning logs shipped with tensortune (tuning_logs/shipped/cpu.db, or "
            "TT_SHIPPED_LOGS): neither for workloads the database has no record of, nor (tune, "
            "tune-model) as the first candidates of a workload's search");
}

std::string shipped_logs_path() {
  return shipped_file("TT_SHIPPED_LOGS", "shipped/cpu.db");
}

const database::Database* shipped_logs() {
  // Opened once; never closed before exit, like the model cache.
  static const database::Database* shipped = []() -> const database::Database* {
    const std::string path = shipped_logs_path();
    if (path.empty()) {
      return nullptr;
    }
    try {
      return new database::Database(database::Database::open(path, true));
    } catch (const UserError& e) {
      std::cerr << "tensortune: warning: the shipped tuning logs cannot be used: " << e.what()
                << "\n";
      return nullptr;
    }
  }();
  return shipped;
}

std::string shipped_zero_shot_model() {
  return shipped_file("TT_ZERO_SHOT_MODEL", "zero_shot/" + model_file_name());
}

std::shared_ptr<const cost_model::CostModel> zero_shot_model(const ArgParser::Parsed& args) {
  if (args.has("no-zero-shot")) {
    return nullptr;
  }
  if (args.has("zero-shot-model")) {
    return load_model(args.get("zero-shot-model"));
  }
  if (const std::string path = shipped_zero_shot_model(); !path.empty()) {
    try {
      return load_model(path);
    } catch (const UserError& e) {
      std::cerr << "tensortune: warning: the zero-shot model cannot be used, ranking zero-shot "
                   "schedules by the sketch prior: "
                << e.what() << "\n";
    }
  }
  return nullptr;
}

void enable_zero_shot(const ArgParser::Parsed& args, driver::Compiler& compiler) {
  if (!args.has("no-shipped")) {
    compiler.set_shipped(shipped_logs());
  }
  if (args.has("no-zero-shot")) {
    return;
  }
  compiler.set_zero_shot(zero_shot_fn(zero_shot_model(args)));
}

driver::ZeroShotFn zero_shot_fn(std::shared_ptr<const cost_model::CostModel> model) {
  auto zero_shot = std::make_shared<search::ZeroShot>(std::move(model));
  return [zero_shot](const te::Workload& workload,
                     const target::Target& target) -> std::optional<driver::ZeroShotChoice> {
    std::optional<search::ZeroShotPick> pick = zero_shot->pick(workload, target);
    if (!pick) {
      return std::nullopt;
    }
    return driver::ZeroShotChoice{std::move(pick->steps), zero_shot->ranking(target), pick->config};
  };
}

}  // namespace tensortune::cli
