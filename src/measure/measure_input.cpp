// SPDX-License-Identifier: Apache-2.0
// KernelSignature and Tolerance: construction from a LoweredFunc and their JSON forms.
#include "tensortune/measure/measure_input.h"

#include "tensortune/support/error.h"

#include <cmath>

namespace tensortune::measure {

int64_t BufferSpec::num_elements() const {
  int64_t n = 1;
  for (int64_t extent : shape) {
    n *= extent;
  }
  return n;
}

namespace {

support::Json specs_to_json(const std::vector<BufferSpec>& specs) {
  support::Json list = support::Json::array();
  for (const BufferSpec& p : specs) {
    support::Json entry = support::Json::object();
    entry["name"] = p.name;
    entry["dtype"] = p.dtype.to_string();
    support::Json shape = support::Json::array();
    for (int64_t extent : p.shape) {
      shape.push_back(extent);
    }
    entry["shape"] = std::move(shape);
    list.push_back(std::move(entry));
  }
  return list;
}

std::vector<BufferSpec> specs_from_json(const support::Json& json, const std::string& field) {
  std::vector<BufferSpec> out;
  const std::string what = "signature field '" + field + "'";
  for (const support::Json& entry : json.as_array(what.c_str())) {
    BufferSpec spec;
    spec.name = entry.at("name").as_string("parameter field 'name'");
    spec.dtype = ir::DataType::parse(entry.at("dtype").as_string("parameter field 'dtype'"));
    for (const support::Json& extent : entry.at("shape").as_array("parameter field 'shape'")) {
      int64_t e = extent.as_int("a shape extent");
      TT_USER_CHECK(e > 0) << "signature: parameter '" << spec.name << "' has extent " << e;
      spec.shape.push_back(e);
    }
    out.push_back(std::move(spec));
  }
  return out;
}

}  // namespace

KernelSignature KernelSignature::of(const ir::LoweredFunc& func) {
  KernelSignature sig;
  sig.name = func.name;
  sig.num_inputs = func.num_inputs;
  for (const ir::Buffer& param : func.params) {
    sig.params.push_back(BufferSpec{param.name(), param.dtype(), param.shape()});
  }
  for (const ir::Buffer& b : func.prepacked) {
    sig.prepacked.push_back(BufferSpec{b.name(), b.dtype(), b.shape()});
  }
  return sig;
}

bool KernelSignature::compatible_with(const KernelSignature& other) const {
  if (params.size() != other.params.size() || num_inputs != other.num_inputs) {
    return false;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].dtype != other.params[i].dtype || params[i].shape != other.params[i].shape) {
      return false;
    }
  }
  return true;
}

support::Json KernelSignature::to_json() const {
  support::Json out = support::Json::object();
  out["name"] = name;
  out["num_inputs"] = static_cast<int64_t>(num_inputs);
  out["params"] = specs_to_json(params);
  if (!prepacked.empty()) {
    out["prepacked"] = specs_to_json(prepacked);
  }
  return out;
}

KernelSignature KernelSignature::from_json(const support::Json& json) {
  KernelSignature sig;
  sig.name = json.at("name").as_string("signature field 'name'");
  sig.params = specs_from_json(json.at("params"), "params");
  if (json.contains("prepacked")) {
    sig.prepacked = specs_from_json(json.at("prepacked"), "prepacked");
  }
  int64_t inputs = json.at("num_inputs").as_int("signature field 'num_inputs'");
  TT_USER_CHECK(inputs >= 0 && static_cast<size_t>(inputs) <= sig.params.size())
      << "signature: num_inputs " << inputs << " with " << sig.params.size() << " parameters";
  sig.num_inputs = static_cast<size_t>(inputs);
  return sig;
}

Tolerance Tolerance::for_reduction(int64_t length, double rtol) {
  Tolerance t;
  t.rtol = rtol;
  t.slack = 0.1 * std::sqrt(static_cast<double>(length < 1 ? 1 : length));
  return t;
}

support::Json Tolerance::to_json() const {
  support::Json out = support::Json::object();
  out["rtol"] = rtol;
  out["slack"] = slack;
  return out;
}

Tolerance Tolerance::from_json(const support::Json& json) {
  Tolerance t;
  t.rtol = json.at("rtol").as_double("tolerance field 'rtol'");
  t.slack = json.at("slack").as_double("tolerance field 'slack'");
  return t;
}

}  // namespace tensortune::measure
