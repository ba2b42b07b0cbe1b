// SPDX-License-Identifier: Apache-2.0
// `tensortune train-model`: the zero-shot cost model, trained on the records of tuning
// databases (scripts/train_zero_shot.sh makes the corpus and calls it).
#include "commands.h"
#include "model_common.h"
#include "output_file.h"
#include "tensortune/cost_model/features.h"
#include "tensortune/cost_model/xgboost_model.h"
#include "tensortune/database/database.h"
#include "tensortune/graph/partition.h"
#include "tensortune/search/zero_shot.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"

#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <set>

namespace tensortune::cli {
namespace {

/// Held-out workloads: every `folds`-th group (in name order) is left out of one training and
/// scored by it, so the figures say how well the model ranks schedules of workloads it has
/// never seen, which is what zero-shot asks of it.
struct Validation {
  double pairwise = 0;  ///< mean over folds of cost_model::pairwise_accuracy
  double top1 = 0;      ///< mean over folds of cost_model::top_k_score(1)
};

Validation validate(const std::vector<cost_model::Sample>& samples,
                    const cost_model::XGBoostOptions& options,
                    int folds) {
  std::map<std::string, int> fold_of;
  for (const cost_model::Sample& s : samples)
    fold_of.emplace(s.group, 0);
  int index = 0;
  for (auto& [group, fold] : fold_of)
    fold = index++ % folds;
  Validation v;
  int counted = 0;
  for (int f = 0; f < folds; ++f) {
    std::vector<cost_model::Sample> train, test;
    for (const cost_model::Sample& s : samples)
      (fold_of[s.group] == f ? test : train).push_back(s);
    if (test.empty() || train.empty())
      continue;
    cost_model::XGBoostModel model(options);
    model.train(train);
    std::vector<std::vector<float>> rows;
    for (const cost_model::Sample& s : test)
      rows.push_back(s.features);
    const std::vector<float> predicted = model.predict(rows);
    v.pairwise += cost_model::pairwise_accuracy(test, predicted);
    v.top1 += cost_model::top_k_score(test, predicted, 1);
    ++counted;
  }
  if (counted > 0) {
    v.pairwise /= counted;
    v.top1 /= counted;
  }
  return v;
}

}  // namespace

ArgParser train_parser() {
  ArgParser parser(
      "train-model",
      "train-model --db PATH [--db PATH ...] [--model M.onnx ...] --out FILE [--json]",
      "Trains the XGBoost cost model that ranks zero-shot schedules on every CPU record of the "
      "databases (each record's steps lowered again for features; ranked within its workload "
      "and target) and writes it to FILE with its feature version. Before that, it scores the "
      "model on workloads it was not trained on (4 folds by workload): pairwise ranking "
      "accuracy and the top-1 score (the held-out pick's throughput over the workload's best).");
  parser
      .option("db", "PATH", "a tuning database (read only; default tuning_logs/tensortune.db)", {},
              false, true)
      .option("model", "M.onnx",
              "an ONNX model whose kernels (tune-model's tasks) the databases hold records of: "
              "kernels have no workload spec, so only their model rebuilds them for features",
              {}, false, true)
      .option("out", "FILE", "the model file to write", {}, true)
      .option("rounds", "N", "boosting rounds (default 60)")
      .flag("json", "print one JSON document {samples, workloads, skipped, pairwise, top1, ...}");
  return parser;
}

int run_train(const std::vector<std::string>& args) {
  std::optional<ArgParser::Parsed> parsed = parse_command_line(train_parser(), args);
  if (!parsed)
    return 0;
  const ArgParser::Parsed& p = *parsed;
  // Every form of every kernel of the models, by key (tune-model's tasks, Winograd forms too).
  std::map<std::string, te::Workload> kernels;
  for (const std::string& path : p.get_all("model")) {
    const graph::Graph g = load_model(path, true);
    for (const graph::Task& t : graph::extract_tasks(g, graph::partition(g))) {
      kernels.emplace(t.workload.key(), t.workload);
      for (const te::Workload& w : t.alternatives)
        kernels.emplace(w.key(), w);
    }
  }
  std::vector<cost_model::Sample> samples;
  int64_t skipped = 0;
  int64_t unknown = 0;
  std::vector<std::string> paths = p.get_all("db");
  if (paths.empty())
    paths.push_back(kDefaultDatabase);
  for (const std::string& path : paths) {
    TT_USER_CHECK(std::filesystem::is_regular_file(path))
        << "train-model: database '" << path << "' does not exist";
    const database::Database db = database::Database::open(path, true);
    int64_t lost = 0;
    int64_t missing = 0;
    for (cost_model::Sample& s :
         search::corpus_samples(db, target::TargetKind::Llvm, &lost, &kernels, &missing)) {
      s.group = path + "|" + s.group;
      samples.push_back(std::move(s));
    }
    skipped += lost;
    unknown += missing;
  }
  if (unknown > 0)
    std::cerr << fmt::format(
        "train-model: warning: {} workload(s) without a spec left out (a model's kernels: give "
        "their model with --model)\n",
        unknown);
  std::set<std::string> groups;
  for (const cost_model::Sample& s : samples)
    groups.insert(s.group);
  TT_USER_CHECK(groups.size() >= 2)
      << "train-model: the databases hold records of " << groups.size()
      << " CPU workload(s) whose steps still apply; a model needs at least 2";
  cost_model::XGBoostOptions options;
  options.rounds = static_cast<int>(p.get_int("rounds", options.rounds, 1, 10000));
  const Validation v = validate(samples, options, 4);
  const auto t0 = std::chrono::steady_clock::now();
  cost_model::XGBoostModel model(options);
  model.train(samples);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  TT_USER_CHECK(model.trained()) << "train-model: too few samples to train on (" << samples.size()
                                 << ")";
  const std::string out = p.get("out");
  model.save(out);
  if (p.has("json")) {
    support::Json j = support::Json::object();
    j["model"] = out;
    j["feature_version"] = cost_model::kFeatureVersion;
    j["samples"] = static_cast<int64_t>(samples.size());
    j["workloads"] = static_cast<int64_t>(groups.size());
    j["skipped"] = skipped;
    j["unknown_workloads"] = unknown;
    j["heldout_pairwise"] = v.pairwise;
    j["heldout_top1"] = v.top1;
    j["train_seconds"] = seconds;
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << fmt::format(
      "{}: feature version {}, {} samples of {} workloads ({} records skipped); held-out "
      "workloads: pairwise accuracy {:.3f}, top-1 score {:.3f}; trained in {:.1f} s\n",
      out, cost_model::kFeatureVersion, samples.size(), groups.size(), skipped, v.pairwise, v.top1,
      seconds);
  return 0;
}

}  // namespace tensortune::cli
