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

KernelSignature KernelSignature::of(const ir::LoweredFunc& func) {
  KernelSignature sig;
  sig.name = func.name;
  sig.num_inputs = func.num_inputs;
  for (const ir::Buffer& param : func.params) {
    sig.params.push_back(BufferSpec{param.name(), param.dtype(), param.shape()});
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
  support::Json list = support::Json::array();
  for (const BufferSpec& p : params) {
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
  out["params"] = std::move(list);
  return out;
}

KernelSignature KernelSignature::from_json(const support::Json& json) {
  KernelSignature sig;
  sig.name = json.at("name").as_string("signature field 'name'");
  for (const support::Json& entry : json.at("params").as_array("signature field 'params'")) {
    BufferSpec spec;
    spec.name = entry.at("name").as_string("parameter field 'name'");
    spec.dtype = ir::DataType::parse(entry.at("dtype").as_string("parameter field 'dtype'"));
    for (const support::Json& extent : entry.at("shape").as_array("parameter field 'shape'")) {
      int64_t e = extent.as_int("a shape extent");
      TT_USER_CHECK(e > 0) << "signature: parameter '" << spec.name << "' has extent " << e;
      spec.shape.push_back(e);
    }
    sig.params.push_back(std::move(spec));
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
