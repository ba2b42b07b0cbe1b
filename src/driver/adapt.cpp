// SPDX-License-Identifier: Apache-2.0
// Reading a record's steps, fitting steps tuned for one shape to another shape of the same
// operator, and the distance between two shapes that decides which record is nearest.
#include "tensortune/driver/compile.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/error.h"
#include "tensortune/te/operators.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>

namespace tensortune::driver {

schedule::Schedule record_schedule(const database::Record& record) {
  schedule::Schedule parsed;
  try {
    parsed = schedule::parse_schedule(record.schedule);
  } catch (const UserError& e) {
    throw UserError("record #" + std::to_string(record.id) + ": " + e.what());
  }
  TT_USER_CHECK(parsed.workload_key == record.workload_key)
      << "record #" << record.id << ": its schedule is for workload '" << parsed.workload_key
      << "', not '" << record.workload_key << "'";
  return parsed;
}

namespace {

/// The extent of leaf axis `axis` of stage `stage` in `state`, or 0 when there is none.
int64_t leaf_extent(const schedule::LoopState& state,
                    const std::string& stage,
                    const std::string& axis) {
  int s = state.stage_index(stage);
  if (s < 0) {
    return 0;
  }
  const schedule::Stage& st = state.stages()[static_cast<size_t>(s)];
  int a = st.leaf_index(axis);
  return a < 0 ? 0 : st.leaf_axes[static_cast<size_t>(a)].extent;
}

void clamp(int64_t& factor, int64_t extent) {
  if (extent > 0 && factor > extent) {
    factor = extent;
  }
}

/// `step` with its factors clamped to the extents its axes have in `state`.
schedule::Step fit(const schedule::LoopState& state, schedule::Step step) {
  if (auto* split = std::get_if<schedule::Split>(&step)) {
    clamp(split->factor, leaf_extent(state, split->stage, split->axis));
  } else if (auto* tile = std::get_if<schedule::Tile>(&step)) {
    clamp(tile->x_factor, leaf_extent(state, tile->stage, tile->x));
    clamp(tile->y_factor, leaf_extent(state, tile->stage, tile->y));
  }
  return step;
}

/// The value of a spec parameter as a number, when it is one.
bool as_number(const std::string& text, double& value) {
  if (text.empty()) {
    return false;
  }
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(value);
}

}  // namespace

std::vector<schedule::Step> adapt_steps(const te::Workload& workload,
                                        const std::vector<schedule::Step>& steps) {
  std::vector<schedule::Step> adapted;
  adapted.reserve(steps.size());
  schedule::LoopState state(workload);
  for (size_t i = 0; i < steps.size(); ++i) {
    adapted.push_back(fit(state, steps[i]));
    try {
      state = schedule::apply(state, adapted.back());
    } catch (const UserError&) {
      // Not ours to report: the caller replays the result and gets the same error with context.
      adapted.insert(adapted.end(), steps.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                     steps.end());
      break;
    }
  }
  return adapted;
}

double spec_distance(const std::string& spec_a, const std::string& spec_b) {
  constexpr double kMismatch = 10;
  te::WorkloadSpec a = te::parse_workload_spec(spec_a);
  te::WorkloadSpec b = te::parse_workload_spec(spec_b);
  if (a.name != b.name) {
    return std::numeric_limits<double>::infinity();
  }
  std::set<std::string> keys;
  for (const auto& [key, value] : a.params) {
    keys.insert(key);
  }
  for (const auto& [key, value] : b.params) {
    keys.insert(key);
  }
  double distance = 0;
  for (const std::string& key : keys) {
    auto ia = a.params.find(key);
    auto ib = b.params.find(key);
    if (ia == a.params.end() || ib == b.params.end()) {
      distance += kMismatch;
      continue;
    }
    double va = 0;
    double vb = 0;
    if (as_number(ia->second, va) && as_number(ib->second, vb)) {
      distance += std::fabs(std::log1p(std::fabs(va)) - std::log1p(std::fabs(vb)));
    } else if (ia->second != ib->second) {
      distance += kMismatch;
    }
  }
  return distance;
}

}  // namespace tensortune::driver
