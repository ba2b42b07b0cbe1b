// SPDX-License-Identifier: Apache-2.0
// The XGBoost cost model through XGBoost's C API: a gradient-boosted ranker (rank:pairwise within
// each group) over program feature vectors, retrained from scratch on all samples, as in
// AutoTVM/Ansor. tree_method=hist and an explicit nthread make it fast and bit-reproducible.
#include "tensortune/cost_model/xgboost_model.h"

#include "tensortune/cost_model/features.h"
#include "tensortune/support/error.h"
#include "tensortune/support/file.h"
#include "tensortune/support/log.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace tensortune::cost_model {
namespace {

constexpr const char* kVersionAttr = "tt_feature_version";

// Throws InternalError with XGBoost's message when a C API call fails (a failure there is ours:
// the inputs were checked before).
void check(int rc, const char* what) {
  if (rc != 0) {
    throw InternalError(std::string("xgb: ") + what + " failed: " + XGBGetLastError());
  }
}

class DMatrix {
 public:
  DMatrix(const std::vector<float>& rows, size_t num_rows, size_t num_cols) {
    // NaN marks missing values, so that zeros stay real feature values.
    check(XGDMatrixCreateFromMat(rows.data(), num_rows, num_cols,
                                 std::numeric_limits<float>::quiet_NaN(), &handle_),
          "XGDMatrixCreateFromMat");
  }
  ~DMatrix() { XGDMatrixFree(handle_); }
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  DMatrixHandle get() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

// The number of features every vector must have, with the message naming the version.
void check_width(size_t width, size_t row, const char* what) {
  const size_t expected = program_feature_names().size();
  TT_USER_CHECK(width == expected)
      << "xgb: " << what << " " << row << " has " << width << " features, expected " << expected
      << " (feature version " << kFeatureVersion << ")";
}

// True when some group has two samples with different scores (a ranking signal exists).
bool has_signal(const std::vector<Sample>& samples) {
  std::map<std::string, std::set<float>> scores;
  for (const Sample& s : samples) {
    auto& set = scores[s.group];
    set.insert(s.score);
    if (set.size() >= 2) {
      return true;
    }
  }
  return false;
}

}  // namespace

struct XGBoostModel::Impl {
  BoosterHandle booster = nullptr;
  std::atomic<bool> trained{false};  // set with the booster, under the mutex
  mutable std::mutex mutex;          // XGBoost's prediction buffer belongs to the booster

  ~Impl() { reset(nullptr); }
  void reset(BoosterHandle next) {
    if (booster != nullptr) {
      XGBoosterFree(booster);
    }
    booster = next;
  }
};

XGBoostModel::XGBoostModel(XGBoostOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  TT_USER_CHECK(options_.rounds > 0) << "xgb: rounds must be positive, got " << options_.rounds;
  TT_USER_CHECK(options_.objective == "rank:pairwise" || options_.objective == "reg:squarederror")
      << "xgb: unknown objective '" << options_.objective
      << "' (expected rank:pairwise or reg:squarederror)";
}

XGBoostModel::~XGBoostModel() = default;

bool XGBoostModel::trained() const {
  return impl_->trained;
}

namespace {

// Booster parameters; nthread 0 means 1 so that results are reproducible by default (XGBoost's
// pairwise sampling uses one random stream per thread).
void set_params(BoosterHandle booster, const XGBoostOptions& o) {
  auto set = [&](const char* key, const std::string& value) {
    check(XGBoosterSetParam(booster, key, value.c_str()), "XGBoosterSetParam");
  };
  std::ostringstream eta;
  std::ostringstream weight;
  eta.precision(17);
  weight.precision(17);
  eta << o.eta;
  weight << o.min_child_weight;
  set("objective", o.objective);
  if (o.objective == "rank:pairwise") {
    set("num_pairsample", std::to_string(o.pair_samples));
  }
  set("tree_method", "hist");
  set("max_depth", std::to_string(o.max_depth));
  set("eta", eta.str());
  set("min_child_weight", weight.str());
  set("nthread", std::to_string(o.threads > 0 ? o.threads : 1));
  set("seed", std::to_string(o.seed));
  set("verbosity", "0");
}

}  // namespace

void XGBoostModel::train(const std::vector<Sample>& samples) {
  for (size_t i = 0; i < samples.size(); ++i) {
    check_width(samples[i].features.size(), i, "sample");
  }
  if (samples.size() < static_cast<size_t>(std::max(1, options_.min_samples)) ||
      !has_signal(samples)) {
    TT_LOG(2) << "xgb: " << samples.size() << " samples are not enough to train; model unchanged";
    return;
  }
  // XGBoost wants the members of a group contiguous: order by group name, stably.
  std::vector<size_t> order(samples.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return samples[a].group < samples[b].group; });
  const size_t width = program_feature_names().size();
  std::vector<float> rows;
  rows.reserve(samples.size() * width);
  std::vector<float> labels;
  std::vector<unsigned> group_sizes;
  for (size_t r = 0; r < order.size(); ++r) {
    const Sample& s = samples[order[r]];
    rows.insert(rows.end(), s.features.begin(), s.features.end());
    labels.push_back(s.score);
    if (r == 0 || s.group != samples[order[r - 1]].group) {
      group_sizes.push_back(0);
    }
    ++group_sizes.back();
  }
  DMatrix data(rows, samples.size(), width);
  check(XGDMatrixSetFloatInfo(data.get(), "label", labels.data(), labels.size()), "label");
  check(XGDMatrixSetUIntInfo(data.get(), "group", group_sizes.data(), group_sizes.size()), "group");
  BoosterHandle booster = nullptr;
  DMatrixHandle handle = data.get();
  check(XGBoosterCreate(&handle, 1, &booster), "XGBoosterCreate");
  try {
    set_params(booster, options_);
    for (int round = 0; round < options_.rounds; ++round) {
      check(XGBoosterUpdateOneIter(booster, round, data.get()), "XGBoosterUpdateOneIter");
    }
  } catch (...) {
    XGBoosterFree(booster);
    throw;
  }
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->reset(booster);
  impl_->trained = true;
  TT_LOG(2) << "xgb: trained on " << samples.size() << " samples in " << group_sizes.size()
            << " groups";
}

std::vector<float> XGBoostModel::predict(const std::vector<std::vector<float>>& features) const {
  const size_t width = program_feature_names().size();
  for (size_t i = 0; i < features.size(); ++i) {
    check_width(features[i].size(), i, "feature vector");
  }
  std::vector<float> scores(features.size(), 0.0f);
  if (!impl_->trained || features.empty()) {
    return scores;  // uninformative but valid: every candidate ties
  }
  std::vector<float> rows;
  rows.reserve(features.size() * width);
  for (const std::vector<float>& f : features) {
    rows.insert(rows.end(), f.begin(), f.end());
  }
  DMatrix data(rows, features.size(), width);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  bst_ulong length = 0;
  const float* out = nullptr;
  check(XGBoosterPredict(impl_->booster, data.get(), 0, 0, 0, &length, &out), "XGBoosterPredict");
  TT_CHECK(length == features.size())
      << "xgb returned " << length << " predictions for " << features.size() << " rows";
  std::copy(out, out + length, scores.begin());
  return scores;
}

void XGBoostModel::save(const std::string& path) const {
  TT_USER_CHECK(impl_->trained) << "xgb: cannot save an untrained model to '" << path << "'";
  std::lock_guard<std::mutex> lock(impl_->mutex);
  check(XGBoosterSetAttr(impl_->booster, kVersionAttr, std::to_string(kFeatureVersion).c_str()),
        "XGBoosterSetAttr");
  bst_ulong length = 0;
  const char* data = nullptr;
  check(XGBoosterSaveModelToBuffer(impl_->booster, R"({"format": "json"})", &length, &data),
        "XGBoosterSaveModelToBuffer");
  support::write_file_atomically(path, std::string_view(data, length), "xgb: model file");
}

std::unique_ptr<XGBoostModel> XGBoostModel::load(const std::string& path, XGBoostOptions options) {
  const std::string bytes = support::read_regular_file(path, int64_t{1} << 30, "xgb: model file");
  auto model = std::make_unique<XGBoostModel>(std::move(options));
  BoosterHandle booster = nullptr;
  check(XGBoosterCreate(nullptr, 0, &booster), "XGBoosterCreate");
  model->impl_->reset(booster);  // owned from here on
  if (XGBoosterLoadModelFromBuffer(booster, bytes.data(), bytes.size()) != 0) {
    throw UserError("xgb: model file '" + path + "' is not an XGBoost model: " + XGBGetLastError());
  }
  const char* version = nullptr;
  int found = 0;
  check(XGBoosterGetAttr(booster, kVersionAttr, &version, &found), "XGBoosterGetAttr");
  TT_USER_CHECK(found != 0) << "xgb: model file '" << path << "' has no tensortune feature version";
  TT_USER_CHECK(std::string(version) == std::to_string(kFeatureVersion))
      << "xgb: model file '" << path << "' was trained on feature version " << version
      << ", but this build extracts feature version " << kFeatureVersion << "; retrain the model";
  set_params(booster, model->options_);
  model->impl_->trained = true;
  return model;
}

}  // namespace tensortune::cost_model
