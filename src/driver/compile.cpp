// SPDX-License-Identifier: Apache-2.0
// The compile-time lookup: the workload's own best record, else the nearest record of another
// shape of its operator (adapted), else the default schedule. A record that no longer applies is a
// warning and a fall-through, never an error: a stale database must not break a build.
#include "tensortune/driver/compile.h"

#include "tensortune/codegen/host.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/lower/lower.h"
#include "tensortune/support/error.h"
#include "tensortune/support/log.h"
#include "tensortune/te/operators.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace tensortune::driver {
namespace {

/// Records of the workload itself tried, fastest first, before looking elsewhere.
constexpr int64_t kTunedTries = 3;
/// Records of other shapes tried, nearest first.
constexpr size_t kAdaptTries = 4;

double flop_distance(double a, double b) {
  return std::fabs(std::log(std::max(a, 1.0)) - std::log(std::max(b, 1.0)));
}

}  // namespace

const char* source_name(Source source) {
  switch (source) {
    case Source::Record:
      return "record";
    case Source::Adapted:
      return "adapted";
    case Source::Shipped:
      return "shipped";
    case Source::ZeroShot:
      return "zero-shot";
    case Source::Default:
      return "default";
  }
  return "?";
}

std::string Lookup::describe() const {
  switch (source) {
    case Source::Record:
      return "record #" + std::to_string(record_id);
    case Source::Adapted:
      return "adapted from record #" + std::to_string(record_id) + " (" + from_workload + ")";
    case Source::Shipped:
      return "shipped record #" + std::to_string(record_id) + " (" + from_workload + ")";
    case Source::ZeroShot:
      return "zero-shot (" + from_workload.substr(0, from_workload.find(':')) + ")";
    case Source::Default:
      return "default schedule";
  }
  return "?";
}

support::Json Lookup::to_json() const {
  support::Json j = support::Json::object();
  j["source"] = source_name(source);
  j["provenance"] = describe();
  j["record_id"] = record_id;
  j["from_workload"] = from_workload;
  j["record_seconds"] = record_seconds;
  return j;
}

database::TargetKey target_key(const target::Target& target) {
  return database::TargetKey{target.to_string(), codegen::device_fingerprint(target)};
}

/// One choice in progress: the function name, whether records of the workload itself must also
/// lower before they are accepted, and the result.
struct Compiler::Attempt {
  std::string name;
  bool lower_tuned = false;
  Compiled result;
};

Compiler::Compiler(const database::Database* db, const target::Target& target)
    : db_(db),
      resolved_(target.is_gpu() ? target : codegen::resolve_host(target)),
      identity_(target_key(target)) {}

Lookup Compiler::lookup(const te::Workload& workload, const std::string& spec) {
  return choose(workload, spec, "", false).lookup;
}

Compiled Compiler::lower_kernel(const te::Workload& workload,
                                const std::string& spec,
                                const std::string& name) {
  return choose(workload, spec, name, true);
}

Compiled Compiler::compile(const te::Workload& workload,
                           const std::string& spec,
                           const std::string& name) {
  Compiled compiled = lower_kernel(workload, spec, name);
  compiled.artifact = codegen::build_cpu(compiled.func, resolved_);
  return compiled;
}

Compiled Compiler::choose(const te::Workload& workload,
                          const std::string& spec,
                          const std::string& name,
                          bool lower_tuned) {
  Attempt attempt{name.empty() ? lower::function_name(workload) : name, lower_tuned, {}};
  if ((db_ != nullptr && (try_tuned(workload, attempt) || try_adapted(workload, spec, attempt))) ||
      try_shipped(workload, attempt) || try_zero_shot(workload, attempt)) {
    note(workload, attempt.result.lookup);
    return std::move(attempt.result);
  }
  Compiled& result = attempt.result;
  result.lookup = Lookup{};
  result.lookup.schedule.workload_key = workload.key();
  if (resolved_.is_gpu()) {
    result.lookup.schedule.steps = schedule::default_gpu_steps(workload);
  }
  if (lower_tuned) {
    result.func = lower::lower(schedule::apply_steps(workload, result.lookup.schedule.steps),
                               resolved_, attempt.name);
  }
  note(workload, result.lookup);
  return std::move(result);
}

bool Compiler::try_tuned(const te::Workload& workload, Attempt& attempt) {
  for (const database::Record& record : db_->best(workload.key(), identity_, kTunedTries)) {
    try {
      schedule::Schedule parsed = record_schedule(record);
      schedule::LoopState state = schedule::apply_steps(workload, parsed.steps);
      if (attempt.lower_tuned) {
        attempt.result.func = lower::lower(state, resolved_, attempt.name);
      }
      attempt.result.lookup =
          Lookup{Source::Record, std::move(parsed), record.id, "", record.rank_seconds};
      return true;
    } catch (const UserError& e) {
      warn_stale(record, e.what());
    }
  }
  return false;
}

std::set<std::string> fingerprint_features(const std::string& fingerprint) {
  std::set<std::string> out;
  const std::string key = "features=";
  size_t at = fingerprint.find(key);
  if (at == std::string::npos) {
    return out;
  }
  at += key.size();
  const std::string list = fingerprint.substr(at, fingerprint.find(';', at) - at);
  for (size_t start = 0; start <= list.size();) {
    const size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) {
      out.insert(list.substr(start, comma - start));
    }
    start = comma + 1;
  }
  return out;
}

std::set<std::string> record_needs(const database::TargetKey& key) {
  std::set<std::string> device = fingerprint_features(key.fingerprint);
  try {
    const target::Target t = target::Target::parse(key.target);
    if (t.is_gpu() || t.mcpu == "native") {
      return device;  // built for the device it was tuned on, whatever that has
    }
    const std::vector<std::string> code = codegen::target_features(t);
    std::set<std::string> out;
    for (const std::string& f : device) {
      if (std::binary_search(code.begin(), code.end(), f)) {
        out.insert(f);
      }
    }
    return out;
  } catch (const UserError&) {
    return device;  // a CPU this LLVM does not know: its device's features, to be safe
  }
}

namespace {

/// "AMD EPYC, znver4" from a fingerprint's cpu= and mcpu= fields; "NVIDIA H200, cc 9.0" from a
/// GPU's gpu= and cc= (or arch=, when no device was open) fields.
std::string device_of(const std::string& fingerprint) {
  auto field = [&](const std::string& key) {
    const size_t at = fingerprint.find(key);
    if (at == std::string::npos) {
      return std::string("?");
    }
    const size_t from = at + key.size();
    return fingerprint.substr(from, fingerprint.find(';', from) - from);
  };
  if (fingerprint.rfind("gpu=", 0) == 0) {
    return field("gpu=") + ", " +
           (fingerprint.find("cc=") != std::string::npos ? "cc " + field("cc=") : field("arch="));
  }
  return field("cpu=") + ", " + field("mcpu=");
}

}  // namespace

void Compiler::set_shipped(const database::Database* shipped) {
  // Computed once: each target is parsed and resolved, and every kernel asks two or three times.
  shipped_ = shipped;
  shipped_targets_ = shipped_targets();
}

std::vector<database::TargetKey> Compiler::shipped_targets() const {
  std::vector<database::TargetKey> out;
  if (shipped_ == nullptr) {
    return out;
  }
  if (resolved_.is_gpu()) {
    // Code for one architecture runs on every device of it (PTX and a cubin of that sm_XY):
    // the same target, as written, is the whole condition.
    for (const database::TargetKey& key : shipped_->targets()) {
      try {
        if (target::Target::parse(key.target) == resolved_) {
          out.push_back(key);
        }
      } catch (const UserError&) {
      }
    }
  } else {
    cpu_shipped_targets(out);
  }
  // This very device's records first: they were timed where they will run.
  std::stable_partition(out.begin(), out.end(), [&](const database::TargetKey& key) {
    return key.fingerprint == identity_.fingerprint;
  });
  return out;
}

void Compiler::cpu_shipped_targets(std::vector<database::TargetKey>& out) const {
  const std::set<std::string> host = fingerprint_features(identity_.fingerprint);
  for (const database::TargetKey& key : shipped_->targets()) {
    const std::set<std::string> needs = record_needs(key);
    if (!std::includes(host.begin(), host.end(), needs.begin(), needs.end())) {
      continue;  // tuned on a device with an instruction this host lacks
    }
    // The same target once resolved on this host: "llvm -cores=2" is "native" on 2 cores, and
    // so is "llvm -mcpu=znver3 -cores=2" on a Zen 3 with the same vector width (native adds the
    // host's -mattr list; record_needs has checked the features the record's code needs).
    bool same = key.target == identity_.target;
    if (!same) {
      try {
        const target::Target parsed = target::Target::parse(key.target);
        if (parsed.is_gpu()) {
          continue;  // a GPU's records
        }
        const target::Target t = codegen::resolve_host(parsed);
        same = t.mcpu == resolved_.mcpu && t.cores == resolved_.cores &&
               t.vector_bits == resolved_.vector_bits;
      } catch (const UserError&) {
      }
    }
    if (same) {
      out.push_back(key);
    }
  }
}

std::vector<database::Record> Compiler::shipped_records(const te::Workload& workload, int k) const {
  // The first device (shipped_targets' order) with records of the workload, as try_shipped
  // chooses: times of one device compare with each other.
  if (k <= 0) {
    return {};
  }
  for (const database::TargetKey& key : shipped_targets_) {
    std::vector<database::Record> best = shipped_->best(workload.key(), key, k);
    if (!best.empty()) {
      return best;
    }
  }
  return {};
}

double Compiler::shipped_best_seconds(const te::Workload& workload) const {
  const std::vector<database::Record> best = shipped_records(workload, 1);
  return best.empty() ? 0 : best.front().rank_seconds;
}

bool Compiler::try_shipped(const te::Workload& workload, Attempt& attempt) {
  for (const database::TargetKey& key : shipped_targets_) {
    for (const database::Record& record : shipped_->best(workload.key(), key, kTunedTries)) {
      try {
        schedule::Schedule parsed = record_schedule(record);
        schedule::LoopState state = schedule::apply_steps(workload, parsed.steps);
        if (attempt.lower_tuned) {
          attempt.result.func = lower::lower(state, resolved_, attempt.name);
        }
        attempt.result.lookup = Lookup{Source::Shipped, std::move(parsed), record.id,
                                       device_of(key.fingerprint), record.rank_seconds};
        return true;
      } catch (const UserError& e) {
        TT_LOG(1) << workload.name() << ": shipped record #" << record.id
                  << " does not apply: " << e.what();
      }
    }
  }
  return false;
}

bool Compiler::try_zero_shot(const te::Workload& workload, Attempt& attempt) {
  if (!zero_shot_) {
    return false;
  }
  auto cached = zero_shot_picks_.find(workload.key());
  if (cached == zero_shot_picks_.end()) {
    cached = zero_shot_picks_.emplace(workload.key(), zero_shot_(workload, resolved_)).first;
  }
  if (!cached->second) {
    return false;
  }
  const ZeroShotChoice& choice = *cached->second;
  try {
    schedule::LoopState state = schedule::apply_steps(workload, choice.steps);
    if (attempt.lower_tuned) {
      attempt.result.func = lower::lower(state, resolved_, attempt.name);
    }
  } catch (const UserError& e) {
    std::string message = workload.name() + ": the zero-shot schedule (" + choice.config +
                          ") does not apply, using the default: " + e.what();
    TT_LOG(1) << message;
    warnings_.push_back(std::move(message));
    cached->second.reset();
    return false;
  }
  attempt.result.lookup = Lookup{Source::ZeroShot, schedule::Schedule{workload.key(), choice.steps},
                                 0, choice.ranking + ": " + choice.config, 0};
  return true;
}

bool Compiler::try_adapted(const te::Workload& workload,
                           const std::string& spec,
                           Attempt& attempt) {
  std::string key = workload.key();
  std::string own_spec = spec;
  std::string op;
  if (!spec.empty()) {
    op = te::parse_workload_spec(spec).name;
  } else if (std::optional<database::WorkloadInfo> info = db_->workload(key)) {
    op = info->op;
    own_spec = info->spec;
  }
  if (op.empty()) {
    return false;
  }
  std::vector<std::pair<double, const Neighbour*>> ranked;
  for (const Neighbour& n : neighbours(op)) {
    if (n.info.key == key) {
      continue;
    }
    double distance = flop_distance(workload.flop_count(), n.info.flop_count);
    if (!own_spec.empty() && !n.info.spec.empty()) {
      try {
        distance = spec_distance(own_spec, n.info.spec);
      } catch (const UserError&) {
        // A stored spec this build cannot parse: fall back to comparing FLOP counts.
      }
    }
    ranked.emplace_back(distance, &n);
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second->info.key < b.second->info.key;
  });
  for (size_t i = 0; i < ranked.size() && i < kAdaptTries; ++i) {
    const Neighbour& n = *ranked[i].second;
    try {
      schedule::Schedule parsed = record_schedule(n.record);
      std::vector<schedule::Step> steps = adapt_steps(workload, parsed.steps);
      schedule::LoopState state = schedule::apply_steps(workload, steps);
      attempt.result.func = lower::lower(state, resolved_, attempt.name);
      attempt.result.lookup = Lookup{Source::Adapted, schedule::Schedule{key, std::move(steps)},
                                     n.record.id, n.info.name, n.record.rank_seconds};
      return true;
    } catch (const UserError& e) {
      TT_LOG(2) << workload.name() << ": record #" << n.record.id << " of " << n.info.name
                << " does not fit: " << e.what();
    }
  }
  return false;
}

const std::vector<Compiler::Neighbour>& Compiler::neighbours(const std::string& op) {
  auto it = neighbours_.find(op);
  if (it != neighbours_.end()) {
    return it->second;
  }
  std::vector<Neighbour>& list = neighbours_[op];
  for (database::Record& record : db_->best_of_operator(op, identity_)) {
    if (std::optional<database::WorkloadInfo> info = db_->workload(record.workload_key)) {
      list.push_back(Neighbour{std::move(record), std::move(*info)});
    }
  }
  return list;
}

void Compiler::warn_stale(const database::Record& record, const std::string& why) {
  if (!warned_records_.insert(record.id).second) {
    return;
  }
  std::string message = "record #" + std::to_string(record.id) + " of '" + record.workload_key +
                        "' no longer applies, trying the next option: " + why;
  TT_LOG(1) << message;
  warnings_.push_back(std::move(message));
}

void Compiler::note(const te::Workload& workload, const Lookup& lookup) {
  TT_LOG(1) << workload.name() << ": " << lookup.describe();
  if (lookup.source == Source::Record || untuned_.count(workload.key()) != 0) {
    return;
  }
  untuned_[workload.key()] = Untuned{untuned_.size(), workload.name(), lookup.describe()};
}

double Compiler::stored_best_seconds(const te::Workload& workload) const {
  if (db_ == nullptr) {
    return 0;
  }
  const std::vector<database::Record> best = db_->best(workload.key(), identity_, 1);
  return best.empty() ? 0 : best.front().rank_seconds;
}

std::vector<std::string> Compiler::untuned() const {
  // Told apart as a model's plan names them: two workloads may share a name.
  std::vector<te::NamedKey> named(untuned_.size());
  for (const auto& [key, entry] : untuned_) {
    named[entry.order] = {entry.name, key};
  }
  return te::distinct_names(named);
}

std::string Compiler::summary_warning() const {
  if (untuned_.empty()) {
    return "";
  }
  std::vector<std::string> items = untuned();
  for (const auto& [key, entry] : untuned_) {
    items[entry.order] += " (" + entry.got + ")";
  }
  size_t n = items.size();
  std::string text = std::to_string(n) + (n == 1 ? " workload has" : " workloads have") +
                     " no tuning record for target '" + identity_.target + "' on this device" +
                     (db_ == nullptr ? " (no tuning database)" : "") + ": ";
  for (size_t i = 0; i < n; ++i) {
    text += (i == 0 ? "" : ", ") + items[i];
  }
  return text;
}

}  // namespace tensortune::driver
