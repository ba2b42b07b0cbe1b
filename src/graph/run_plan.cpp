// SPDX-License-Identifier: Apache-2.0
// The run plan: executing its calls over the caller's buffers, the arena and the weights, and
// its JSON form (model.json of a compiled model).
#include "tensortune/graph/run_plan.h"

#include "graph/op_util.h"
#include "tensortune/support/error.h"

#include <chrono>
#include <cmath>

namespace tensortune::graph {

int64_t TensorInfo::numel() const {
  return detail::numel_of(shape);
}

namespace {

const char* kind_name(PlanArg::Kind k) {
  switch (k) {
    case PlanArg::Kind::Input:
      return "input";
    case PlanArg::Kind::Output:
      return "output";
    case PlanArg::Kind::Arena:
      return "arena";
    case PlanArg::Kind::Weight:
      return "weight";
  }
  return "?";
}

PlanArg::Kind parse_kind(const std::string& s) {
  for (PlanArg::Kind k :
       {PlanArg::Kind::Input, PlanArg::Kind::Output, PlanArg::Kind::Arena, PlanArg::Kind::Weight}) {
    if (s == kind_name(k))
      return k;
  }
  TT_USER_CHECK(false) << "run plan: unknown buffer kind '" << s << "'";
  return PlanArg::Kind::Arena;
}

support::Json tensors_json(const std::vector<TensorInfo>& infos) {
  support::Json list = support::Json::array();
  for (const TensorInfo& t : infos) {
    support::Json j = support::Json::object();
    j["name"] = t.name;
    j["dtype"] = t.dtype.to_string();
    support::Json shape = support::Json::array();
    for (int64_t d : t.shape)
      shape.push_back(d);
    j["shape"] = std::move(shape);
    list.push_back(std::move(j));
  }
  return list;
}

std::vector<TensorInfo> tensors_from(const support::Json& list) {
  std::vector<TensorInfo> r;
  for (const support::Json& j : list.as_array("tensors")) {
    TensorInfo t;
    t.name = j.at("name").as_string("name");
    t.dtype = ir::DataType::parse(j.at("dtype").as_string("dtype"));
    for (const support::Json& d : j.at("shape").as_array("shape")) {
      t.shape.push_back(d.as_int("shape"));
      TT_USER_CHECK(t.shape.back() > 0)
          << "run plan: tensor '" << t.name << "' has extent " << t.shape.back();
    }
    r.push_back(t);
  }
  return r;
}

}  // namespace

support::Json RunPlan::to_json() const {
  support::Json j = support::Json::object();
  j["format"] = "tensortune-run-plan-1";
  j["inputs"] = tensors_json(inputs);
  j["outputs"] = tensors_json(outputs);
  j["arena_bytes"] = arena_bytes;
  j["activation_bytes"] = activation_bytes;
  j["weight_bytes"] = static_cast<int64_t>(weights.size());
  support::Json calls_json = support::Json::array();
  for (const PlanCall& c : calls) {
    support::Json cj = support::Json::object();
    cj["function"] = c.function;
    cj["workload"] = c.workload;
    if (c.flop > 0)
      cj["flop"] = c.flop;
    if (!c.schedule.empty())
      cj["schedule"] = c.schedule;
    support::Json args = support::Json::array();
    for (const PlanArg& a : c.args) {
      support::Json aj = support::Json::array();
      aj.push_back(kind_name(a.kind));
      aj.push_back(a.index);
      args.push_back(std::move(aj));
    }
    cj["args"] = std::move(args);
    calls_json.push_back(std::move(cj));
  }
  j["calls"] = std::move(calls_json);
  return j;
}

RunPlan RunPlan::from_json(const support::Json& j) {
  TT_USER_CHECK(j.is_object() && j.contains("format") &&
                j.at("format").as_string("format") == "tensortune-run-plan-1")
      << "run plan: not a tensortune-run-plan-1 document";
  RunPlan p;
  p.inputs = tensors_from(j.at("inputs"));
  p.outputs = tensors_from(j.at("outputs"));
  p.arena_bytes = j.at("arena_bytes").as_int("arena_bytes");
  p.activation_bytes = j.at("activation_bytes").as_int("activation_bytes");
  int64_t weight_bytes = j.at("weight_bytes").as_int("weight_bytes");
  TT_USER_CHECK(p.arena_bytes >= 0 && weight_bytes >= 0) << "run plan: negative sizes";
  for (const support::Json& cj : j.at("calls").as_array("calls")) {
    PlanCall c;
    c.function = cj.at("function").as_string("function");
    c.workload = cj.at("workload").as_string("workload");
    if (cj.contains("flop"))
      c.flop = cj.at("flop").as_double("flop");
    if (cj.contains("schedule"))
      c.schedule = cj.at("schedule").as_string("schedule");
    TT_USER_CHECK(std::isfinite(c.flop) && c.flop >= 0)
        << "run plan: call '" << c.function << "' has a negative FLOP count";
    for (const support::Json& aj : cj.at("args").as_array("args")) {
      TT_USER_CHECK(aj.is_array() && aj.size() == 2) << "run plan: malformed argument";
      PlanArg a{parse_kind(aj.as_array()[0].as_string("kind")), aj.as_array()[1].as_int("index")};
      int64_t limit = a.kind == PlanArg::Kind::Input    ? static_cast<int64_t>(p.inputs.size())
                      : a.kind == PlanArg::Kind::Output ? static_cast<int64_t>(p.outputs.size())
                      : a.kind == PlanArg::Kind::Arena  ? p.arena_bytes
                                                        : weight_bytes;
      TT_USER_CHECK(a.index >= 0 && a.index < limit)
          << "run plan: call '" << c.function << "' has " << kind_name(a.kind) << " index "
          << a.index << " out of range";
      c.args.push_back(a);
    }
    p.calls.push_back(std::move(c));
  }
  return p;
}

void RunPlan::execute(const std::vector<KernelFunction>& functions,
                      const std::vector<const void*>& in,
                      const std::vector<void*>& out,
                      uint8_t* arena,
                      std::vector<double>* call_seconds) const {
  TT_USER_CHECK(in.size() == inputs.size() && out.size() == outputs.size())
      << "the model takes " << inputs.size() << " input(s) and " << outputs.size()
      << " output(s), got " << in.size() << " and " << out.size();
  TT_CHECK(functions.size() == calls.size()) << "one function per call";
  TT_CHECK(call_seconds == nullptr || call_seconds->size() == calls.size()) << "one time per call";
  std::vector<void*> buffers;
  for (size_t c = 0; c < calls.size(); ++c) {
    buffers.clear();
    for (const PlanArg& a : calls[c].args) {
      switch (a.kind) {
        case PlanArg::Kind::Input:
          // Kernels never write their inputs.
          buffers.push_back(const_cast<void*>(in[static_cast<size_t>(a.index)]));
          break;
        case PlanArg::Kind::Output:
          buffers.push_back(out[static_cast<size_t>(a.index)]);
          break;
        case PlanArg::Kind::Arena:
          buffers.push_back(arena + a.index);
          break;
        case PlanArg::Kind::Weight:
          buffers.push_back(const_cast<uint8_t*>(weights.data()) + a.index);
          break;
      }
    }
    const auto start = std::chrono::steady_clock::now();
    int32_t rc = functions[c](buffers.data());
    if (call_seconds != nullptr) {
      (*call_seconds)[c] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    TT_CHECK(rc == 0) << "kernel " << calls[c].function << " (" << calls[c].workload
                      << ") returned " << rc;
  }
}

}  // namespace tensortune::graph
