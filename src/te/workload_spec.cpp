// SPDX-License-Identifier: Apache-2.0
// Workload specs ("NAME:key=value,..."): the strict parser and the named-workload table. The table
// is one plain function returning a map (no self-registering statics, docs/style.md section 2).
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <algorithm>
#include <limits>
#include <sstream>

namespace tensortune::te {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    out += (out.empty() ? "" : ", ") + item;
  }
  return out;
}

/// Typed, checked access to the parameters of one spec.
class SpecReader {
 public:
  explicit SpecReader(const WorkloadSpec& spec) : spec_(spec) {}

  /// A required positive integer.
  int64_t dim(const std::string& key) {
    TT_USER_CHECK(spec_.params.count(key) != 0)
        << "workload '" << spec_.name << "': missing key '" << key << "'";
    return integer(key, 0, 1);
  }

  /// An optional integer of at least `min`.
  int64_t integer(const std::string& key, int64_t fallback, int64_t min) {
    auto it = spec_.params.find(key);
    if (it == spec_.params.end()) {
      return fallback;
    }
    const std::string& text = it->second;
    bool digits =
        !text.empty() && text.size() <= 10 &&
        std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    int64_t value = digits ? std::stoll(text) : -1;
    TT_USER_CHECK(digits && value <= std::numeric_limits<int32_t>::max())
        << "workload '" << spec_.name << "': key '" << key << "' has bad integer value '" << text
        << "'";
    TT_USER_CHECK(value >= min) << "workload '" << spec_.name << "': key '" << key
                                << "' must be at least " << min << ", got " << value;
    return value;
  }

  bool flag(const std::string& key) { return choice(key, "0", {"0", "1"}) == "1"; }

  std::string choice(const std::string& key,
                     const std::string& fallback,
                     const std::vector<std::string>& options) {
    auto it = spec_.params.find(key);
    if (it == spec_.params.end()) {
      return fallback;
    }
    TT_USER_CHECK(std::find(options.begin(), options.end(), it->second) != options.end())
        << "workload '" << spec_.name << "': key '" << key << "' has bad value '" << it->second
        << "' (accepted: " << join(options) << ")";
    return it->second;
  }

  ir::DataType dtype() {
    return ir::DataType::parse(choice("dtype", "float32", {"float32", "int32"}));
  }

 private:
  const WorkloadSpec& spec_;
};

using Builder = Workload (*)(SpecReader&);

struct Entry {
  std::vector<std::string> keys;  // besides "dtype"
  Builder build;
};

std::string dims(std::initializer_list<int64_t> values) {
  std::string out;
  for (int64_t v : values) {
    out += (out.empty() ? "" : "x") + std::to_string(v);
  }
  return out;
}

Workload build_matmul(SpecReader& r) {
  int64_t m = r.dim("M");
  int64_t n = r.dim("N");
  int64_t k = r.dim("K");
  bool tb = r.flag("transpose_b");
  // constant_b: B is a weight, fixed when a model is compiled, so a copy of it in a packed layout
  // is made once (the prepare function), as oneDNN's matmul with B reordered ahead of time.
  bool cb = r.flag("constant_b");
  ir::DataType t = r.dtype();
  Tensor a = placeholder({m, k}, t, "A");
  Tensor b = placeholder(tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, t, "B");
  std::string name = std::string(tb ? "matmul_nt_" : "matmul_") + dims({m, n, k});
  name += cb ? "_constb" : "";
  std::vector<Tensor> constants;
  if (cb) {
    constants.push_back(b);
  }
  return Workload(name + "_" + t.to_string(), {a, b}, {matmul(a, b, tb)}, constants);
}

Workload build_batch_matmul(SpecReader& r) {
  int64_t bs = r.dim("B");
  int64_t m = r.dim("M");
  int64_t n = r.dim("N");
  int64_t k = r.dim("K");
  bool tb = r.flag("transpose_b");
  ir::DataType t = r.dtype();
  Tensor a = placeholder({bs, m, k}, t, "A");
  Tensor b =
      placeholder(tb ? std::vector<int64_t>{bs, n, k} : std::vector<int64_t>{bs, k, n}, t, "B");
  std::string name = std::string(tb ? "batch_matmul_nt_" : "batch_matmul_") + dims({bs, m, n, k});
  return Workload(name + "_" + t.to_string(), {a, b}, {batch_matmul(a, b, tb)});
}

Workload build_dense(SpecReader& r) {
  int64_t m = r.dim("M");
  int64_t n = r.dim("N");
  int64_t k = r.dim("K");
  bool with_bias = r.flag("bias");
  std::string epilogue = r.choice("epilogue", "none", {"none", "relu", "gelu"});
  ir::DataType t = r.dtype();
  Tensor data = placeholder({m, k}, t, "data");
  Tensor weight = placeholder({n, k}, t, "weight");
  std::vector<Tensor> inputs = {data, weight};
  Tensor out = dense(data, weight);
  std::string name = "dense_" + dims({m, n, k});
  if (with_bias) {
    Tensor bias = placeholder({n}, t, "bias");
    inputs.push_back(bias);
    out = bias_add(out, bias, 1, "bias_add");
    name += "_bias";
  }
  if (epilogue == "relu") {
    out = relu(out);
  } else if (epilogue == "gelu") {
    out = gelu(out);
  }
  name += epilogue == "none" ? "" : "_" + epilogue;
  std::vector<Tensor> constants(inputs.begin() + 1, inputs.end());
  return Workload(name + "_" + t.to_string(), inputs, {out}, constants);
}

Conv2dParams read_conv_params(SpecReader& r, bool with_groups) {
  Conv2dParams p;
  p.stride_h = p.stride_w = r.integer("stride", 1, 1);
  p.pad_h = p.pad_w = r.integer("pad", 0, 0);
  p.dilation_h = p.dilation_w = r.integer("dilation", 1, 1);
  p.groups = with_groups ? r.integer("groups", 1, 1) : 1;
  return p;
}

std::string conv_suffix(const Conv2dParams& p, bool with_groups) {
  std::string out = "s" + std::to_string(p.stride_h) + "p" + std::to_string(p.pad_h) + "d" +
                    std::to_string(p.dilation_h);
  return with_groups ? out + "g" + std::to_string(p.groups) : out;
}

/// A convolution's workload with the `bias` and `epilogue=relu` keys applied to its output `out`
/// (channels on axis `channel_axis`); the weight and the bias are constants.
Workload conv_workload(SpecReader& r,
                       const Tensor& data,
                       const Tensor& weight,
                       Tensor out,
                       int channel_axis,
                       std::string name) {
  const ir::DataType t = out.dtype();
  std::vector<Tensor> inputs = {data, weight};
  if (r.flag("bias")) {
    Tensor bias = placeholder({out.shape()[static_cast<size_t>(channel_axis)]}, t, "bias");
    inputs.push_back(bias);
    out = bias_add(out, bias, channel_axis, "bias_add");
    name += "_bias";
  }
  if (r.choice("epilogue", "none", {"none", "relu"}) == "relu") {
    out = relu(out);
    name += "_relu";
  }
  std::vector<Tensor> constants(inputs.begin() + 1, inputs.end());
  return Workload(name + "_" + t.to_string(), inputs, {out}, constants);
}

Workload build_conv2d(SpecReader& r) {
  int64_t n = r.dim("N");
  int64_t c = r.dim("C");
  int64_t h = r.dim("H");
  int64_t w = r.dim("W");
  int64_t k = r.dim("K");
  int64_t kh = r.dim("R");
  int64_t kw = r.dim("S");
  Conv2dParams p = read_conv_params(r, true);
  bool nhwc = r.choice("layout", "NCHW", {"NCHW", "NHWC"}) == "NHWC";
  ir::DataType t = r.dtype();
  TT_USER_CHECK(c % p.groups == 0)
      << "workload 'conv2d': C=" << c << " is not divisible by groups=" << p.groups;
  int64_t cg = c / p.groups;
  Tensor data = placeholder(
      nhwc ? std::vector<int64_t>{n, h, w, c} : std::vector<int64_t>{n, c, h, w}, t, "data");
  Tensor weight =
      placeholder(nhwc ? std::vector<int64_t>{kh, kw, cg, k} : std::vector<int64_t>{k, cg, kh, kw},
                  t, "weight");
  Tensor out = nhwc ? conv2d_nhwc(data, weight, p) : conv2d_nchw(data, weight, p);
  std::string name = std::string(nhwc ? "conv2d_nhwc_" : "conv2d_nchw_") + dims({n, c, h, w}) +
                     "_" + dims({k, kh, kw}) + "_" + conv_suffix(p, true);
  return conv_workload(r, data, weight, out, nhwc ? 3 : 1, name);
}

Workload build_conv2d_winograd(SpecReader& r) {
  int64_t n = r.dim("N");
  int64_t c = r.dim("C");
  int64_t h = r.dim("H");
  int64_t w = r.dim("W");
  int64_t k = r.dim("K");
  int64_t pad = r.integer("pad", 1, 0);
  int64_t tile = r.integer("tile", 4, 2);
  ir::DataType t = r.dtype();
  Tensor data = placeholder({n, c, h, w}, t, "data");
  Tensor weight = placeholder({k, c, 3, 3}, t, "weight");
  Tensor out = conv2d_winograd_nchw(data, weight, pad, tile);
  std::string name = "conv2d_winograd_nchw_" + dims({n, c, h, w}) + "_" + dims({k, 3, 3}) + "_p" +
                     std::to_string(pad) + "_t" + std::to_string(tile);
  return conv_workload(r, data, weight, out, 1, name);
}

Workload build_depthwise_conv2d(SpecReader& r) {
  int64_t n = r.dim("N");
  int64_t c = r.dim("C");
  int64_t h = r.dim("H");
  int64_t w = r.dim("W");
  int64_t kh = r.dim("R");
  int64_t kw = r.dim("S");
  Conv2dParams p = read_conv_params(r, false);
  ir::DataType t = r.dtype();
  Tensor data = placeholder({n, c, h, w}, t, "data");
  Tensor weight = placeholder({c, 1, kh, kw}, t, "weight");
  std::string name = "depthwise_conv2d_nchw_" + dims({n, c, h, w}) + "_" + dims({kh, kw}) + "_" +
                     conv_suffix(p, false);
  return Workload(name + "_" + t.to_string(), {data, weight},
                  {depthwise_conv2d_nchw(data, weight, p)}, {weight});
}

Workload build_pool2d(SpecReader& r) {
  std::string kind = r.choice("kind", "max", {"max", "avg"});
  int64_t n = r.dim("N");
  int64_t c = r.dim("C");
  int64_t h = r.dim("H");
  int64_t w = r.dim("W");
  int64_t kh = r.dim("R");
  int64_t kw = r.dim("S");
  Conv2dParams p = read_conv_params(r, false);
  ir::DataType t = r.dtype();
  Tensor data = placeholder({n, c, h, w}, t, "data");
  Tensor out = pool2d_nchw(data, kind == "max" ? PoolKind::Max : PoolKind::Avg, kh, kw, p);
  std::string name = "pool2d_" + kind + "_" + dims({n, c, h, w}) + "_" + dims({kh, kw}) + "_" +
                     conv_suffix(p, false);
  return Workload(name + "_" + t.to_string(), {data}, {out});
}

Workload build_softmax(SpecReader& r) {
  int64_t m = r.dim("M");
  int64_t n = r.dim("N");
  ir::DataType t = r.dtype();
  Tensor a = placeholder({m, n}, t, "A");
  return Workload("softmax_" + dims({m, n}) + "_" + t.to_string(), {a}, {softmax(a)});
}

Workload build_layer_norm(SpecReader& r) {
  int64_t m = r.dim("M");
  int64_t n = r.dim("N");
  ir::DataType t = r.dtype();
  Tensor a = placeholder({m, n}, t, "A");
  Tensor gamma = placeholder({n}, t, "gamma");
  Tensor beta = placeholder({n}, t, "beta");
  return Workload("layer_norm_" + dims({m, n}) + "_" + t.to_string(), {a, gamma, beta},
                  {layer_norm(a, gamma, beta)});
}

template <bool kIsAdd>
Workload build_binary(SpecReader& r) {
  int64_t m = r.dim("M");
  int64_t n = r.dim("N");
  bool bcast = r.flag("broadcast");
  ir::DataType t = r.dtype();
  Tensor a = placeholder({m, n}, t, "A");
  Tensor b = placeholder(bcast ? std::vector<int64_t>{n} : std::vector<int64_t>{m, n}, t, "B");
  Tensor out = kIsAdd ? add(a, b) : multiply(a, b);
  std::string name = std::string(kIsAdd ? "add_" : "mul_") + dims({m, n}) + (bcast ? "_bcast" : "");
  return Workload(name + "_" + t.to_string(), {a, b}, {out});
}

template <bool kIsRelu>
Workload build_unary(SpecReader& r) {
  int64_t m = r.dim("M");
  int64_t n = r.dim("N");
  ir::DataType t = r.dtype();
  Tensor a = placeholder({m, n}, t, "A");
  Tensor out = kIsRelu ? relu(a) : gelu(a);
  std::string name = std::string(kIsRelu ? "relu_" : "gelu_") + dims({m, n});
  return Workload(name + "_" + t.to_string(), {a}, {out});
}

Workload build_transpose(SpecReader& r) {
  int64_t m = r.dim("M");
  int64_t n = r.dim("N");
  ir::DataType t = r.dtype();
  Tensor a = placeholder({m, n}, t, "A");
  return Workload("transpose_" + dims({m, n}) + "_" + t.to_string(), {a}, {transpose(a, {1, 0})});
}

Workload build_pad(SpecReader& r) {
  int64_t n = r.dim("N");
  int64_t c = r.dim("C");
  int64_t h = r.dim("H");
  int64_t w = r.dim("W");
  int64_t amount = r.integer("pad", 1, 0);
  ir::DataType t = r.dtype();
  Tensor a = placeholder({n, c, h, w}, t, "data");
  Tensor out = pad(a, {0, 0, amount, amount}, {0, 0, amount, amount});
  return Workload("pad_" + dims({n, c, h, w}) + "_p" + std::to_string(amount) + "_" + t.to_string(),
                  {a}, {out});
}

/// The name -> builder table (built on each call; it is small).
std::map<std::string, Entry> workload_table() {
  const std::vector<std::string> conv = {"N", "C", "H", "W", "R", "S", "stride", "pad", "dilation"};
  std::vector<std::string> conv2d = conv;
  conv2d.insert(conv2d.end(), {"K", "groups", "layout", "bias", "epilogue"});
  std::vector<std::string> pool = conv;
  pool.emplace_back("kind");
  return {
      {"matmul", {{"M", "N", "K", "transpose_b", "constant_b"}, build_matmul}},
      {"batch_matmul", {{"B", "M", "N", "K", "transpose_b"}, build_batch_matmul}},
      {"dense", {{"M", "N", "K", "bias", "epilogue"}, build_dense}},
      {"conv2d", {conv2d, build_conv2d}},
      {"conv2d_winograd",
       {{"N", "C", "H", "W", "K", "pad", "tile", "bias", "epilogue"}, build_conv2d_winograd}},
      {"depthwise_conv2d", {conv, build_depthwise_conv2d}},
      {"pool2d", {pool, build_pool2d}},
      {"softmax", {{"M", "N"}, build_softmax}},
      {"layer_norm", {{"M", "N"}, build_layer_norm}},
      {"add", {{"M", "N", "broadcast"}, build_binary<true>}},
      {"mul", {{"M", "N", "broadcast"}, build_binary<false>}},
      {"relu", {{"M", "N"}, build_unary<true>}},
      {"gelu", {{"M", "N"}, build_unary<false>}},
      {"transpose", {{"M", "N"}, build_transpose}},
      {"pad", {{"N", "C", "H", "W", "pad"}, build_pad}},
  };
}

}  // namespace

std::string WorkloadSpec::to_string() const {
  std::string out = name;
  for (const auto& [key, value] : params) {
    out += out.size() == name.size() ? ":" : ",";
    out += key + "=" + value;
  }
  return out;
}

WorkloadSpec parse_workload_spec(const std::string& text) {
  WorkloadSpec spec;
  size_t colon = text.find(':');
  spec.name = text.substr(0, colon);
  TT_USER_CHECK(!spec.name.empty()) << "workload spec '" << text << "': empty workload name";
  if (colon == std::string::npos || colon + 1 == text.size()) {
    return spec;
  }
  std::string rest = text.substr(colon + 1);
  size_t start = 0;
  while (start <= rest.size()) {
    size_t comma = std::min(rest.find(',', start), rest.size());
    std::string item = rest.substr(start, comma - start);
    start = comma + 1;
    size_t eq = item.find('=');
    TT_USER_CHECK(!item.empty()) << "workload spec '" << text << "': empty item";
    TT_USER_CHECK(eq != std::string::npos)
        << "workload spec '" << text << "': missing '=' in '" << item << "'";
    std::string key = item.substr(0, eq);
    std::string value = item.substr(eq + 1);
    TT_USER_CHECK(!key.empty()) << "workload spec '" << text << "': empty key in '" << item << "'";
    TT_USER_CHECK(!value.empty()) << "workload spec '" << text << "': empty value in '" << item
                                  << "'";
    TT_USER_CHECK(spec.params.emplace(key, value).second)
        << "workload spec '" << text << "': duplicate key '" << key << "'";
  }
  return spec;
}

Workload make_workload(const WorkloadSpec& spec) {
  std::map<std::string, Entry> table = workload_table();
  auto it = table.find(spec.name);
  TT_USER_CHECK(it != table.end())
      << "unknown workload '" << spec.name << "' (known: " << join(workload_names()) << ")";
  std::vector<std::string> keys = it->second.keys;
  keys.emplace_back("dtype");
  std::sort(keys.begin(), keys.end());
  for (const auto& [key, value] : spec.params) {
    TT_USER_CHECK(std::binary_search(keys.begin(), keys.end(), key))
        << "workload '" << spec.name << "': unknown key '" << key << "' (accepted: " << join(keys)
        << ")";
  }
  SpecReader reader(spec);
  return it->second.build(reader);
}

Workload make_workload(const std::string& spec_text) {
  return make_workload(parse_workload_spec(spec_text));
}

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (const auto& entry : workload_table()) {
    names.emplace_back(entry.first);
  }
  return names;
}

std::vector<std::string> workload_keys(const std::string& name) {
  const std::map<std::string, Entry> table = workload_table();
  auto it = table.find(name);
  TT_USER_CHECK(it != table.end())
      << "unknown workload '" << name << "' (known: " << join(workload_names()) << ")";
  std::vector<std::string> keys = it->second.keys;
  keys.emplace_back("dtype");
  return keys;
}

}  // namespace tensortune::te
