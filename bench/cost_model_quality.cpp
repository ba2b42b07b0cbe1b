// SPDX-License-Identifier: Apache-2.0
// Cost-model quality on measured records: for each database given, every record of the CPU
// target is re-lowered for features; a seeded 75/25 split per workload trains XGBoost on one part
// and scores the other (pairwise ranking accuracy, top-5 peak score), next to the random model.
// The sketch rules' prior (SearchSpace::prior, which needs no training) is scored on every record
// whose knobs still name a configuration of the space.
// The xgb line's breakdown: accuracy on the pairs more than --margin (0.05) apart, and the share
// of pairs whose feature vectors are identical.
// --dump FILE writes every scored record as a tab-separated row (its group, record id, sketch,
// score, knobs and program features, under a header of names) for analysis outside this program.
// `cost_model_quality --help` lists the options.
#include "args.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/cost_model/features.h"
#include "tensortune/cost_model/random_model.h"
#include "tensortune/cost_model/xgboost_model.h"
#include "tensortune/database/database.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/search/evolutionary_search.h"
#include "tensortune/search/search_space.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/support/rng.h"
#include "tensortune/te/operators.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>

namespace tt = tensortune;

namespace {

// Where the model's pairwise errors lie: pairs whose scores differ by more than `margin` (which
// two measurements of the same records order alike far more often than close ones), and pairs
// whose feature vectors are identical (no model can order those).
struct PairBreakdown {
  double wide_pairs = 0, wide_correct = 0;  // scores more than margin apart
  double same_features = 0;                 // pairs with different scores, identical features
  double pairs = 0;
};

/// Calls `visit(a, b, correct)` for every pair of test records of one group with different
/// scores; `correct` is 1 when the prediction orders them as the scores do, 0.5 on a tie, else 0.
template <typename Visit>
void for_each_scored_pair(const std::vector<tt::cost_model::Sample>& test,
                          const std::vector<float>& predicted,
                          Visit visit) {
  for (size_t a = 0; a < test.size(); ++a) {
    for (size_t b = a + 1; b < test.size(); ++b) {
      const float sa = test[a].score;
      const float sb = test[b].score;
      if (test[a].group != test[b].group || sa == sb) {
        continue;
      }
      const float guess = predicted[a] - predicted[b];
      visit(a, b, guess == 0 ? 0.5 : ((guess > 0) == (sa > sb) ? 1.0 : 0.0));
    }
  }
}

PairBreakdown break_down(const std::vector<tt::cost_model::Sample>& test,
                         const std::vector<float>& predicted,
                         double margin) {
  PairBreakdown out;
  for_each_scored_pair(test, predicted, [&](size_t a, size_t b, double correct) {
    out.pairs += 1;
    if (test[a].features == test[b].features) {
      out.same_features += 1;
    }
    const float sa = test[a].score;
    const float sb = test[b].score;
    if (std::max(sa, sb) > (1 + margin) * std::min(sa, sb)) {
      out.wide_pairs += 1;
      out.wide_correct += correct;
    }
  });
  return out;
}

/// The model's accuracy on the pairs of one group whose two records share a sketch (one line per
/// sketch) and on the pairs of two different sketches.
void print_per_sketch(const std::vector<tt::cost_model::Sample>& test,
                      const std::vector<std::string>& sketches,
                      const std::vector<float>& predicted) {
  std::map<std::string, std::pair<double, double>> tally;  // sketch -> (pairs, correct)
  for_each_scored_pair(test, predicted, [&](size_t a, size_t b, double correct) {
    auto& t = tally[sketches[a] == sketches[b] ? sketches[a] : "(two sketches)"];
    t.first += 1;
    t.second += correct;
  });
  for (const auto& [name, t] : tally) {
    std::cout << fmt::format("  split 0: {:7.0f} pairs, pairwise {:.3f}  {}\n", t.first,
                             t.second / t.first, name);
  }
}

/// Where a sample came from, for --dump.
struct SampleOrigin {
  int64_t record = 0;
  std::string sketch;  // "?" when the record's knobs name no configuration of the space
  std::string knobs;
};

/// --dump: one tab-separated row per sample under a header line of column names.
void dump_samples(const std::string& path,
                  const std::vector<tt::cost_model::Sample>& samples,
                  const std::vector<SampleOrigin>& origins) {
  std::ofstream out(path);
  TT_USER_CHECK(out.good()) << "cannot write --dump file '" << path << "'";
  out << "group\trecord\tsketch\tscore\tknobs";
  for (const std::string& name : tt::cost_model::program_feature_names()) {
    out << '\t' << name;
  }
  out << '\n';
  for (size_t i = 0; i < samples.size(); ++i) {
    out << fmt::format("{}\t{}\t{}\t{}\t{}", samples[i].group, origins[i].record, origins[i].sketch,
                       samples[i].score, origins[i].knobs);
    for (float x : samples[i].features) {
      out << fmt::format("\t{}", x);
    }
    out << '\n';
  }
  out.close();
  TT_USER_CHECK(out.good()) << "writing --dump file '" << path << "' failed";
}

tt::cli::ArgParser parser() {
  tt::cli::ArgParser p("cost_model_quality", "cost_model_quality DB [DB...] [options]",
                       "The cost model's pairwise ranking accuracy and top-5 peak score on "
                       "held-out records of the databases (seeded 75/25 splits per workload), "
                       "next to the random model and the sketch rules' prior.",
                       "");
  const tt::cost_model::XGBoostOptions d;
  p.positional("DB...", "tuning databases whose CPU records are scored", 1)
      .option("splits", "N", "random 75/25 splits (default 10)")
      .option("margin", "X", "the breakdown's 'far apart' (default 0.05)")
      .flag("per-workload", "the first split's accuracy per workload")
      .flag("per-sketch",
            "the first split's accuracy on pairs within each sketch and on pairs of two sketches")
      .option("dump", "FILE",
              "also write every scored record (group, id, sketch, score, knobs, features) as "
              "tab-separated rows")
      .option("rounds", "N", fmt::format("XGBoost boosting rounds (default {})", d.rounds))
      .option("depth", "N", fmt::format("XGBoost max_depth (default {})", d.max_depth))
      .option("eta", "X", fmt::format("XGBoost eta (default {})", d.eta))
      .option("min-child-weight", "X",
              fmt::format("XGBoost min_child_weight (default {})", d.min_child_weight))
      .option("pair-samples", "N",
              fmt::format("XGBoost num_pairsample (default {})", d.pair_samples))
      .option("objective", "OBJ",
              "XGBoost objective, rank:pairwise or reg:squarederror (default " + d.objective + ")");
  return p;
}

int quality(const std::vector<std::string>& args) {
  const tt::cli::ArgParser options = parser();
  const std::optional<tt::cli::ArgParser::Parsed> parsed =
      tt::cli::parse_command_line(options, args);
  if (!parsed) {
    return 0;  // --help
  }
  const tt::cli::ArgParser::Parsed& given = *parsed;
  tt::cost_model::XGBoostOptions xgb;
  xgb.threads = 1;
  const int splits = static_cast<int>(given.get_int("splits", 10, 1, 1000));
  const double margin = given.get_double("margin", 0.05, 0, 1);  // the breakdown's "far apart"
  const bool per_workload = given.has("per-workload");  // the first split's accuracy per workload
  const bool per_sketch = given.has("per-sketch");
  xgb.rounds = static_cast<int>(given.get_int("rounds", xgb.rounds, 1, 100000));
  xgb.max_depth = static_cast<int>(given.get_int("depth", xgb.max_depth, 1, 64));
  xgb.eta = given.get_double("eta", xgb.eta, 0, 1);
  xgb.min_child_weight = given.get_double("min-child-weight", xgb.min_child_weight, 0, 1e9);
  xgb.pair_samples = static_cast<int>(given.get_int("pair-samples", xgb.pair_samples, 1, 10000));
  xgb.objective = given.get("objective", xgb.objective);
  std::vector<tt::cost_model::Sample> samples;
  std::vector<SampleOrigin> origins;                  // where samples[i] came from
  std::vector<tt::cost_model::Sample> prior_samples;  // the records with a configuration
  std::vector<float> priors;
  for (const std::string& arg : given.positionals()) {
    const tt::database::Database db = tt::database::Database::open(arg, true);
    for (const tt::database::WorkloadInfo& w : db.workloads()) {
      const tt::te::Workload workload = tt::te::make_workload(w.spec);
      for (const tt::database::TargetKey& key : db.targets()) {
        const tt::target::Target target =
            tt::codegen::resolve_host(tt::target::Target::parse(key.target));
        const std::vector<tt::database::Record> records = db.history(w.key, key);
        const tt::search::SearchSpace space = tt::search::SearchSpace::generate(workload, target);
        double best = 0;
        for (const auto& r : records)
          best = std::max(best, r.ok() ? 1 / r.median_seconds : 0.0);
        for (const auto& r : records) {
          auto f = tt::search::feature_vector(
              workload, tt::schedule::parse_schedule(r.schedule).steps, target);
          if (!f || best <= 0)
            continue;
          samples.push_back({arg + "|" + w.key, std::move(*f),
                             r.ok() ? static_cast<float>(1 / r.median_seconds / best) : 0.0f});
          std::optional<tt::search::Config> config;
          try {
            config = space.from_json(tt::support::Json::parse(r.knobs));
          } catch (const std::exception&) {  // knobs of an older space
          }
          origins.push_back(
              {r.id, config ? space.sketches()[static_cast<size_t>(config->sketch)].name : "?",
               r.knobs});
          if (config) {
            prior_samples.push_back(samples.back());
            priors.push_back(static_cast<float>(space.prior(*config)));
          }
        }
      }
    }
  }
  if (given.has("dump")) {
    dump_samples(given.get("dump", ""), samples, origins);
  }
  std::cout << fmt::format(
      "cost_model_quality: {} samples, {} random 75/25 splits; xgb {} rounds, "
      "depth {}, eta {}, min_child_weight {}, {}\n",
      samples.size(), splits, xgb.rounds, xgb.max_depth, xgb.eta, xgb.min_child_weight,
      xgb.objective);
  std::vector<double> acc, top5, racc, rtop5, wide_acc, wide_share, same_share, train_seconds;
  tt::support::Rng rng(42);
  for (int s = 0; s < splits; ++s) {
    std::vector<tt::cost_model::Sample> train, test;
    std::vector<std::string> test_sketches;
    for (size_t i = 0; i < samples.size(); ++i) {
      if (rng.uniform() < 0.75) {
        train.push_back(samples[i]);
      } else {
        test.push_back(samples[i]);
        test_sketches.push_back(origins[i].sketch);
      }
    }
    tt::cost_model::XGBoostOptions o = xgb;
    o.seed = static_cast<uint64_t>(s);
    tt::cost_model::XGBoostModel model(o);
    const auto t0 = std::chrono::steady_clock::now();
    model.train(train);
    train_seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    std::vector<std::vector<float>> rows;
    for (const auto& x : test)
      rows.push_back(x.features);
    const std::vector<float> p = model.predict(rows);
    acc.push_back(tt::cost_model::pairwise_accuracy(test, p));
    const PairBreakdown parts = break_down(test, p, margin);
    if (parts.pairs > 0) {
      wide_share.push_back(parts.wide_pairs / parts.pairs);
      same_share.push_back(parts.same_features / parts.pairs);
    }
    if (parts.wide_pairs > 0) {
      wide_acc.push_back(parts.wide_correct / parts.wide_pairs);
    }
    if (per_workload && s == 0) {
      std::map<std::string, std::pair<std::vector<tt::cost_model::Sample>, std::vector<float>>> by;
      for (size_t i = 0; i < test.size(); ++i) {
        by[test[i].group].first.push_back(test[i]);
        by[test[i].group].second.push_back(p[i]);
      }
      for (const auto& [group, data] : by) {
        std::cout << fmt::format(
            "  split 0: {:4} test records, pairwise {:.3f}, top-5 {:.3f}  {}\n", data.first.size(),
            tt::cost_model::pairwise_accuracy(data.first, data.second),
            tt::cost_model::top_k_score(data.first, data.second, 5), group);
      }
    }
    if (per_sketch && s == 0) {
      print_per_sketch(test, test_sketches, p);
    }
    top5.push_back(tt::cost_model::top_k_score(test, p, 5));
    tt::cost_model::RandomModel random(static_cast<uint64_t>(s));
    const std::vector<float> q = random.predict(rows);
    racc.push_back(tt::cost_model::pairwise_accuracy(test, q));
    rtop5.push_back(tt::cost_model::top_k_score(test, q, 5));
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::cout << fmt::format(
      "  xgb:    pairwise accuracy {:.3f}  top-5 score {:.3f}  (medians; training {:.2f} s)\n",
      median(acc), median(top5), median(train_seconds));
  if (!wide_acc.empty()) {
    std::cout << fmt::format(
        "          pairwise accuracy {:.3f} on the {:.1f}% of pairs more than {:.0f}% apart; "
        "{:.1f}% of pairs have identical features\n",
        median(wide_acc), 100 * median(wide_share), 100 * margin, 100 * median(same_share));
  }
  std::cout << fmt::format("  random: pairwise accuracy {:.3f}  top-5 score {:.3f}\n", median(racc),
                           median(rtop5));
  if (!prior_samples.empty()) {
    std::cout << fmt::format(
        "  prior:  pairwise accuracy {:.3f}  top-5 score {:.3f}  (all {} records with knobs of "
        "this space)\n",
        tt::cost_model::pairwise_accuracy(prior_samples, priors),
        tt::cost_model::top_k_score(prior_samples, priors, 5), prior_samples.size());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tt::cli::run_program("cost_model_quality", argc, argv, quality);
}
