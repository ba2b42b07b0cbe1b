// SPDX-License-Identifier: Apache-2.0
// Schedules as versioned JSON. Each step is an object whose "kind" is the step
// word; an annotate step's kind is its loop kind word ("vectorize",
// "blockIdx.x", ...). Reading is strict: missing, mistyped and unknown fields
// are UserErrors naming the step index and the field.
#include "tensortune/schedule/serialize.h"

#include "annotation_names.h"
#include "tensortune/support/error.h"

#include <set>

namespace tensortune::schedule {
namespace {

using support::Json;

Json names_json(const std::vector<std::string>& names) {
  Json array = Json::array();
  for (const std::string& name : names) {
    array.push_back(name);
  }
  return array;
}

void fill(Json& j, const Split& s) {
  j["stage"] = s.stage;
  j["axis"] = s.axis;
  j["factor"] = s.factor;
  j["nparts"] = s.nparts;
}
void fill(Json& j, const Fuse& s) {
  j["stage"] = s.stage;
  j["axes"] = names_json(s.axes);
}
void fill(Json& j, const Reorder& s) {
  j["stage"] = s.stage;
  j["order"] = names_json(s.order);
}
void fill(Json& j, const Tile& s) {
  j["stage"] = s.stage;
  j["x"] = s.x;
  j["y"] = s.y;
  j["x_factor"] = s.x_factor;
  j["y_factor"] = s.y_factor;
}
void fill(Json& j, const Annotate& s) {
  j["stage"] = s.stage;
  j["axis"] = s.axis;
}
void fill(Json& j, const PragmaUnroll& s) {
  j["stage"] = s.stage;
  j["axis"] = s.axis;
  j["max_step"] = s.max_step;
}
void fill(Json& j, const ComputeAt& s) {
  j["stage"] = s.stage;
  j["target_stage"] = s.target_stage;
  j["target_axis"] = s.target_axis;
}
void fill(Json& j, const ComputeInline& s) {
  j["stage"] = s.stage;
}
void fill(Json& j, const ComputeRoot& s) {
  j["stage"] = s.stage;
}
/// "blocks": [[dim, factor], ...] ([dim, factor, flags] for an outer_first (1) or padded (2)
/// block, or both (3)), absent for the plain layout so older records keep their text.
void fill_blocks(Json& j, const std::vector<LayoutBlock>& blocks) {
  if (blocks.empty()) {
    return;
  }
  Json out = Json::array();
  for (const LayoutBlock& b : blocks) {
    Json pair = Json::array();
    pair.push_back(b.dim);
    pair.push_back(b.factor);
    if (b.outer_first || b.pad) {
      pair.push_back((b.outer_first ? 1 : 0) + (b.pad ? 2 : 0));
    }
    out.push_back(std::move(pair));
  }
  j["blocks"] = std::move(out);
}
void fill(Json& j, const CacheWrite& s) {
  j["stage"] = s.stage;
  j["scope"] = scope_name(s.scope);
  fill_blocks(j, s.blocks);
}
void fill(Json& j, const CacheRead& s) {
  j["stage"] = s.stage;
  j["scope"] = scope_name(s.scope);
  j["readers"] = names_json(s.readers);
  fill_blocks(j, s.blocks);
  if (s.row_pad != 0) {
    j["row_pad"] = s.row_pad;  // absent when 0: records from before it read the same
  }
  if (s.stages != 0) {
    j["stages"] = s.stages;  // likewise
  }
}

// Reads the fields of one step object, remembering which were read so leftovers
// can be reported.
class StepReader {
 public:
  StepReader(const Json& json, std::string context) : json_(json), context_(std::move(context)) {}

  std::string string(const std::string& key) {
    const Json& v = field(key);
    if (!v.is_string()) {
      fail("field '" + key + "' must be a string");
    }
    return v.as_string();
  }
  int64_t integer(const std::string& key) {
    const Json& v = field(key);
    if (!v.is_int()) {
      fail("field '" + key + "' must be an integer");
    }
    return v.as_int();
  }
  int64_t optional_integer(const std::string& key, int64_t absent) {
    return json_.contains(key) ? integer(key) : absent;
  }
  bool boolean(const std::string& key) {
    const Json& v = field(key);
    if (!v.is_bool()) {
      fail("field '" + key + "' must be true or false");
    }
    return v.as_bool();
  }
  std::vector<std::string> strings(const std::string& key) {
    const Json& v = field(key);
    std::vector<std::string> out;
    if (!v.is_array()) {
      fail("field '" + key + "' must be an array of strings");
    }
    for (const Json& item : v.as_array()) {
      if (!item.is_string()) {
        fail("field '" + key + "' must be an array of strings");
      }
      out.push_back(item.as_string());
    }
    return out;
  }
  /// An optional array of [dim, factor] pairs ([dim, factor, flags]: 1 outer_first, 2 padded, 3
  /// both); empty when absent.
  std::vector<LayoutBlock> blocks(const std::string& key) {
    std::vector<LayoutBlock> out;
    if (!json_.contains(key)) {
      return out;
    }
    const Json& v = field(key);
    const std::string shape = "field '" + key +
                              "' must be an array of [dim, factor] or [dim, factor, flags] integer "
                              "arrays (flags 1: the outer part first, 2: padded, 3: both)";
    if (!v.is_array()) {
      fail(shape);
    }
    for (const Json& item : v.as_array()) {
      if (!item.is_array()) {
        fail(shape);
      }
      const auto& a = item.as_array();
      if (a.size() < 2 || a.size() > 3 || !a[0].is_int() || !a[1].is_int() ||
          (a.size() == 3 && (!a[2].is_int() || a[2].as_int() < 1 || a[2].as_int() > 3))) {
        fail(shape);
      }
      const int64_t flags = a.size() == 3 ? a[2].as_int() : 0;
      out.push_back(LayoutBlock{a[0].as_int(), a[1].as_int(), (flags & 1) != 0, (flags & 2) != 0});
    }
    return out;
  }
  ir::MemoryScope scope(const std::string& key) {
    std::string text = string(key);
    if (text != "local" && text != "shared" && text != "global") {
      fail("field '" + key + "' must be local, shared or global (got '" + text + "')");
    }
    return parse_scope(text);
  }
  /// UserError on a field that no reader asked for (a typo would otherwise be
  /// ignored).
  void finish() {
    for (const auto& [key, value] : json_.as_object()) {
      if (read_.count(key) == 0) {
        fail("unknown field '" + key + "'");
      }
    }
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw UserError(context_ + ": " + message);
  }

 private:
  const Json& field(const std::string& key) {
    if (!json_.contains(key)) {
      fail("missing field '" + key + "'");
    }
    read_.insert(key);
    return json_.at(key);
  }

  const Json& json_;
  std::string context_;
  std::set<std::string> read_{"kind"};
};

Step read_step(StepReader& r, const std::string& kind) {
  if (kind == "split") {
    return Split{r.string("stage"), r.string("axis"), r.integer("factor"), r.boolean("nparts")};
  }
  if (kind == "fuse") {
    return Fuse{r.string("stage"), r.strings("axes")};
  }
  if (kind == "reorder") {
    return Reorder{r.string("stage"), r.strings("order")};
  }
  if (kind == "tile") {
    return Tile{r.string("stage"), r.string("x"), r.string("y"), r.integer("x_factor"),
                r.integer("y_factor")};
  }
  if (kind == "pragma_unroll") {
    return PragmaUnroll{r.string("stage"), r.string("axis"), r.integer("max_step")};
  }
  if (kind == "compute_at") {
    return ComputeAt{r.string("stage"), r.string("target_stage"), r.string("target_axis")};
  }
  if (kind == "compute_inline") {
    return ComputeInline{r.string("stage")};
  }
  if (kind == "compute_root") {
    return ComputeRoot{r.string("stage")};
  }
  if (kind == "cache_write") {
    return CacheWrite{r.string("stage"), r.scope("scope"), r.blocks("blocks")};
  }
  if (kind == "cache_read") {
    CacheRead step{r.string("stage"), r.scope("scope"), r.strings("readers"), r.blocks("blocks")};
    step.row_pad = r.optional_integer("row_pad", 0);
    step.stages = r.optional_integer("stages", 0);
    return step;
  }
  ir::ForKind annotation = ir::ForKind::Serial;
  if (parse_annotation(kind, &annotation)) {
    return Annotate{r.string("stage"), r.string("axis"), annotation};
  }
  r.fail("unknown kind '" + kind + "'");
}

// `index` < 0 when the step is read on its own, outside a schedule.
Step step_at(const Json& json, int index) {
  std::string where = index < 0 ? "schedule step" : "schedule step " + std::to_string(index);
  if (!json.is_object()) {
    throw UserError(where + ": must be an object");
  }
  if (!json.contains("kind") || !json.at("kind").is_string()) {
    throw UserError(where + ": field 'kind' must be a string");
  }
  const std::string& kind = json.at("kind").as_string();
  StepReader reader(json, where + " (" + kind + ")");
  Step step = read_step(reader, kind);
  reader.finish();
  return step;
}

}  // namespace

Json to_json(const Step& step) {
  Json j = Json::object();
  j["kind"] = step_kind(step);
  std::visit([&](const auto& s) { fill(j, s); }, step);
  return j;
}

Json to_json(const Schedule& schedule) {
  Json j = Json::object();
  j["version"] = kScheduleFormatVersion;
  j["workload_key"] = schedule.workload_key;
  Json steps = Json::array();
  for (const Step& step : schedule.steps) {
    steps.push_back(to_json(step));
  }
  j["steps"] = std::move(steps);
  return j;
}

Step step_from_json(const Json& json) {
  return step_at(json, -1);
}

Schedule schedule_from_json(const Json& json) {
  if (!json.is_object()) {
    throw UserError("schedule: must be a JSON object");
  }
  if (!json.contains("version") || !json.at("version").is_int()) {
    throw UserError("schedule: field 'version' must be an integer");
  }
  int64_t version = json.at("version").as_int();
  if (version != kScheduleFormatVersion) {
    throw UserError("schedule: unknown format version " + std::to_string(version) +
                    " (this build reads version " + std::to_string(kScheduleFormatVersion) + ")");
  }
  if (!json.contains("workload_key") || !json.at("workload_key").is_string()) {
    throw UserError("schedule: field 'workload_key' must be a string");
  }
  if (!json.contains("steps") || !json.at("steps").is_array()) {
    throw UserError("schedule: field 'steps' must be an array");
  }
  for (const auto& [key, value] : json.as_object()) {
    if (key != "version" && key != "workload_key" && key != "steps") {
      throw UserError("schedule: unknown field '" + key + "'");
    }
  }
  Schedule schedule;
  schedule.workload_key = json.at("workload_key").as_string();
  const Json::Array& steps = json.at("steps").as_array();
  for (size_t i = 0; i < steps.size(); ++i) {
    schedule.steps.push_back(step_at(steps[i], static_cast<int>(i)));
  }
  return schedule;
}

Schedule parse_schedule(const std::string& text) {
  Json json;
  try {
    json = Json::parse(text);
  } catch (const UserError& e) {
    throw UserError(std::string("schedule: malformed JSON: ") + e.what());
  }
  return schedule_from_json(json);
}

}  // namespace tensortune::schedule
