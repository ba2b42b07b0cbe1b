// SPDX-License-Identifier: Apache-2.0
// The schedule space: sketches from the rules, and the operations the search runs on
// configurations (sample, enumerate, neighbours, mutate, crossover) and their stable JSON form.
// The split mutation follows Ansor (OSDI'20, section 5.2): move a factor between tile levels.
#include "tensortune/search/search_space.h"

#include "search/sketch/rules.h"
#include "search/sketch/split_factors.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace tensortune::search {

const char* knob_kind_name(KnobKind kind) {
  switch (kind) {
    case KnobKind::Split:
      return "split";
    case KnobKind::Reorder:
      return "reorder";
    case KnobKind::ComputeLocation:
      return "compute_location";
    case KnobKind::Unroll:
      return "unroll";
    case KnobKind::VectorLength:
      return "vector_length";
    case KnobKind::Parallel:
      return "parallel";
    case KnobKind::Choice:
      return "choice";
  }
  return "?";
}

namespace {

double sketch_size(const Sketch& sketch) {
  double n = 1;
  for (const Knob& k : sketch.knobs) {
    n *= static_cast<double>(k.choices.size());
  }
  return n;
}

/// Indices of the knobs that have more than one choice.
std::vector<size_t> movable_knobs(const Sketch& sketch) {
  std::vector<size_t> out;
  for (size_t k = 0; k < sketch.knobs.size(); ++k) {
    if (sketch.knobs[k].choices.size() > 1) {
      out.push_back(k);
    }
  }
  return out;
}

/// A choice of knob `knob` other than `current`: a moved split factor when possible, else a
/// neighbouring choice half of the time, else any other.
int mutate_choice(const Knob& knob, int current, support::Rng& rng) {
  auto n = static_cast<int>(knob.choices.size());
  if (knob.kind == KnobKind::Split && rng.uniform() < 0.85) {
    int moved = detail::move_split_factor(knob.choices, current, rng);
    if (moved >= 0) {
      return moved;
    }
  }
  if (rng.uniform() < 0.5) {
    int step = (current == 0 || (current + 1 < n && rng.uniform_int(0, 1) == 0)) ? 1 : -1;
    return current + step;
  }
  auto other = static_cast<int>(rng.uniform_int(0, n - 2));
  return other >= current ? other + 1 : other;
}

support::Json values_json(const std::vector<int64_t>& values) {
  support::Json array = support::Json::array();
  for (int64_t v : values) {
    array.push_back(support::Json(v));
  }
  return array;
}

std::string values_text(const std::vector<int64_t>& values) {
  if (values.size() == 1) {
    return std::to_string(values[0]);
  }
  std::string text = "[";
  for (size_t k = 0; k < values.size(); ++k) {
    text += (k == 0 ? "" : ",") + std::to_string(values[k]);
  }
  return text + "]";
}

}  // namespace

SearchSpace SearchSpace::generate(const te::Workload& workload, const target::Target& target) {
  SearchSpace space;
  space.workload_key_ = workload.key();
  space.sketches_ = detail::generate_sketches(workload, target);
  TT_CHECK(!space.sketches_.empty()) << "no sketch for workload " << workload.name();
  for (const Sketch& sketch : space.sketches_) {
    std::vector<std::vector<std::vector<int>>> per_knob;
    for (const Knob& k : sketch.knobs) {
      std::map<int64_t, std::vector<int>> by_innermost;
      bool levels = k.kind == KnobKind::Split && !k.choices.empty() && k.choices[0].size() >= 2;
      for (size_t c = 0; levels && c < k.choices.size(); ++c) {
        by_innermost[k.choices[c].back()].push_back(static_cast<int>(c));
      }
      std::vector<std::vector<int>> groups;
      for (auto& [innermost, group] : by_innermost)
        groups.push_back(std::move(group));
      per_knob.push_back(std::move(groups));
    }
    space.strata_.push_back(std::move(per_knob));
  }
  return space;
}

double SearchSpace::size() const {
  double total = 0;
  for (const Sketch& s : sketches_) {
    total += sketch_size(s);
  }
  return total;
}

Config SearchSpace::sample(support::Rng& rng) const {
  Config config;
  config.sketch = static_cast<int>(rng.pick(sketches_.size()));
  const auto& strata = strata_[static_cast<size_t>(config.sketch)];
  const std::vector<Knob>& knobs = sketches_[static_cast<size_t>(config.sketch)].knobs;
  for (size_t k = 0; k < knobs.size(); ++k) {
    if (strata[k].empty()) {
      config.choice.push_back(static_cast<int>(rng.pick(knobs[k].choices.size())));
    } else {
      const std::vector<int>& group = strata[k][rng.pick(strata[k].size())];
      config.choice.push_back(group[rng.pick(group.size())]);
    }
  }
  return config;
}

std::vector<Config> SearchSpace::enumerate(double offset, size_t limit) const {
  std::vector<Config> out;
  double skip = std::floor(std::max(offset, 0.0));
  for (size_t s = 0; s < sketches_.size() && out.size() < limit; ++s) {
    double n = sketch_size(sketches_[s]);
    if (skip >= n) {
      skip -= n;
      continue;
    }
    const std::vector<Knob>& knobs = sketches_[s].knobs;
    Config config{static_cast<int>(s), std::vector<int>(knobs.size(), 0)};
    double rest = skip;  // mixed-radix digits, last knob fastest
    for (size_t k = knobs.size(); k-- > 0;) {
      auto radix = static_cast<double>(knobs[k].choices.size());
      config.choice[k] = static_cast<int>(std::fmod(rest, radix));
      rest = std::floor(rest / radix);
    }
    skip = 0;
    while (out.size() < limit) {
      out.push_back(config);
      size_t k = knobs.size();
      while (k > 0 && ++config.choice[k - 1] == static_cast<int>(knobs[k - 1].choices.size())) {
        config.choice[--k] = 0;
      }
      if (k == 0) {
        break;
      }
    }
  }
  return out;
}

std::vector<Config> SearchSpace::neighbours(const Config& config) const {
  const Sketch& sketch = checked(config);
  std::vector<Config> out;
  for (size_t k = 0; k < sketch.knobs.size(); ++k) {
    for (int delta : {-1, 1}) {
      int c = config.choice[k] + delta;
      if (c >= 0 && c < static_cast<int>(sketch.knobs[k].choices.size())) {
        Config next = config;
        next.choice[k] = c;
        out.push_back(next);
      }
    }
  }
  return out;
}

Config SearchSpace::mutate(const Config& config, support::Rng& rng) const {
  const Sketch& sketch = checked(config);
  std::vector<size_t> movable = movable_knobs(sketch);
  if (movable.empty()) {
    return config;
  }
  Config next = config;
  int changes = movable.size() > 1 && rng.uniform() < 0.25 ? 2 : 1;
  for (int n = 0; n < changes; ++n) {
    size_t k = movable[rng.pick(movable.size())];
    next.choice[k] = mutate_choice(sketch.knobs[k], next.choice[k], rng);
  }
  if (next == config) {  // the second change undid the first
    size_t k = movable[rng.pick(movable.size())];
    next.choice[k] = mutate_choice(sketch.knobs[k], next.choice[k], rng);
  }
  return next;
}

Config SearchSpace::crossover(const Config& a, const Config& b, support::Rng& rng) const {
  checked(a);
  checked(b);
  if (a.sketch != b.sketch) {
    return a;
  }
  Config child = a;
  for (size_t k = 0; k < child.choice.size(); ++k) {
    child.choice[k] = rng.uniform_int(0, 1) == 0 ? a.choice[k] : b.choice[k];
  }
  return child;
}

const Sketch& SearchSpace::checked(const Config& config) const {
  TT_CHECK(config.sketch >= 0 && config.sketch < static_cast<int>(sketches_.size()))
      << "config names sketch " << config.sketch << " of " << sketches_.size();
  const Sketch& sketch = sketches_[static_cast<size_t>(config.sketch)];
  TT_CHECK(config.choice.size() == sketch.knobs.size())
      << "config has " << config.choice.size() << " choices for " << sketch.knobs.size()
      << " knobs of sketch '" << sketch.name << "'";
  for (size_t k = 0; k < sketch.knobs.size(); ++k) {
    int c = config.choice[k];
    TT_CHECK(c >= 0 && c < static_cast<int>(sketch.knobs[k].choices.size()))
        << "choice " << c << " out of range for knob '" << sketch.knobs[k].name << "'";
  }
  return sketch;
}

namespace {

/// The chosen value of each knob of `sketch` (`config` checked against it).
detail::Values values_of(const Sketch& sketch, const Config& config) {
  detail::Values values;
  for (size_t k = 0; k < sketch.knobs.size(); ++k) {
    values.push_back(sketch.knobs[k].choices[static_cast<size_t>(config.choice[k])]);
  }
  return values;
}

}  // namespace

std::vector<schedule::Step> SearchSpace::steps(const Config& config) const {
  const Sketch& sketch = checked(config);
  return sketch.build(values_of(sketch, config));
}

double SearchSpace::prior(const Config& config) const {
  const Sketch& sketch = checked(config);
  return sketch.prior ? sketch.prior(values_of(sketch, config)) : 1.0;
}

Config SearchSpace::sample_plausible(support::Rng& rng) const {
  constexpr int kDraws = 64;
  Config best;
  double best_prior = -1;
  for (int draw = 0; draw < kDraws; ++draw) {
    Config c = sample(rng);
    const double p = prior(c);
    if (rng.uniform() < p) {
      return c;
    }
    if (p > best_prior) {
      best_prior = p;
      best = std::move(c);
    }
  }
  return best;
}

support::Json SearchSpace::to_json(const Config& config) const {
  const Sketch& sketch = checked(config);
  support::Json knobs = support::Json::object();
  for (size_t k = 0; k < sketch.knobs.size(); ++k) {
    knobs[sketch.knobs[k].name] =
        values_json(sketch.knobs[k].choices[static_cast<size_t>(config.choice[k])]);
  }
  support::Json json = support::Json::object();
  json["sketch"] = support::Json(sketch.name);
  json["knobs"] = std::move(knobs);
  return json;
}

int SearchSpace::sketch_index(const std::string& name) const {
  for (size_t s = 0; s < sketches_.size(); ++s) {
    if (sketches_[s].name == name) {
      return static_cast<int>(s);
    }
  }
  return -1;
}

Config SearchSpace::from_json(const support::Json& json) const {
  const std::string& name = json.at("sketch").as_string("configuration field 'sketch'");
  Config config;
  config.sketch = sketch_index(name);
  TT_USER_CHECK(config.sketch >= 0)
      << "configuration: unknown sketch '" << name << "' for workload " << workload_key_;
  const Sketch& sketch = sketches_[static_cast<size_t>(config.sketch)];
  const support::Json::Object& knobs = json.at("knobs").as_object("configuration field 'knobs'");
  for (const auto& [knob_name, value] : knobs) {
    bool known = false;
    for (const Knob& k : sketch.knobs) {
      known = known || k.name == knob_name;
    }
    TT_USER_CHECK(known) << "configuration: sketch '" << name << "' has no knob '" << knob_name
                         << "'";
  }
  for (const Knob& k : sketch.knobs) {
    auto it = knobs.find(k.name);
    if (it == knobs.end() && k.absent >= 0) {
      config.choice.push_back(k.absent);
      continue;
    }
    TT_USER_CHECK(it != knobs.end())
        << "configuration: knob '" << k.name << "' of sketch '" << name << "' is missing";
    std::vector<int64_t> values;
    for (const support::Json& v : it->second.as_array("configuration knob value")) {
      values.push_back(v.as_int("configuration knob value"));
    }
    int found = -1;
    for (size_t c = 0; c < k.choices.size() && found < 0; ++c) {
      found = k.choices[c] == values ? static_cast<int>(c) : -1;
    }
    TT_USER_CHECK(found >= 0) << "configuration: value " << values_text(values) << " of knob '"
                              << k.name << "' is not one of its " << k.choices.size() << " choices";
    config.choice.push_back(found);
  }
  return config;
}

std::optional<Config> SearchSpace::nearest(const support::Json& json) const {
  if (!json.is_object() || !json.contains("sketch") || !json.at("sketch").is_string() ||
      !json.contains("knobs") || !json.at("knobs").is_object()) {
    return std::nullopt;
  }
  const std::string& name = json.at("sketch").as_string();
  Config config;
  config.sketch = sketch_index(name);
  if (config.sketch < 0) {
    return std::nullopt;
  }
  const support::Json::Object& knobs = json.at("knobs").as_object();
  const auto log2p = [](int64_t v) {
    return std::log2(static_cast<double>(std::max<int64_t>(v, 0)) + 1);
  };
  for (const Knob& k : sketches_[static_cast<size_t>(config.sketch)].knobs) {
    std::vector<int64_t> want;
    auto it = knobs.find(k.name);
    if (it != knobs.end() && it->second.is_array()) {
      for (const support::Json& v : it->second.as_array()) {
        if (!v.is_int())
          return std::nullopt;
        want.push_back(v.as_int());
      }
    }
    int best = 0;
    double best_distance = std::numeric_limits<double>::infinity();
    for (size_t c = 0; c < k.choices.size() && !want.empty(); ++c) {
      const std::vector<int64_t>& have = k.choices[c];
      double d = have.size() == want.size() ? 0.0 : 1e6;
      for (size_t i = 0; i < std::min(have.size(), want.size()); ++i) {
        d += std::abs(log2p(have[i]) - log2p(want[i]));
      }
      if (d < best_distance) {
        best_distance = d;
        best = static_cast<int>(c);
      }
    }
    config.choice.push_back(best);
  }
  return config;
}

std::string SearchSpace::key(const Config& config) const {
  return to_json(config).dump();
}

std::string SearchSpace::describe(const Config& config) const {
  const Sketch& sketch = checked(config);
  std::string text = sketch.name;
  for (size_t k = 0; k < sketch.knobs.size(); ++k) {
    text += " " + sketch.knobs[k].name + "=" +
            values_text(sketch.knobs[k].choices[static_cast<size_t>(config.choice[k])]);
  }
  return text;
}

}  // namespace tensortune::search
