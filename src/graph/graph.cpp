// SPDX-License-Identifier: Apache-2.0
// The model graph: values, typed attribute accessors, lookups and the invariant check that every
// pass and the importer end with.
#include "tensortune/graph/graph.h"

#include "tensortune/support/error.h"

#include <set>
#include <sstream>

namespace tensortune::graph {
namespace {

const char* kind_name(Attribute::Kind kind) {
  switch (kind) {
    case Attribute::Kind::Int:
      return "Int";
    case Attribute::Kind::Float:
      return "Float";
    case Attribute::Kind::String:
      return "String";
    case Attribute::Kind::Ints:
      return "Ints";
    case Attribute::Kind::Floats:
      return "Floats";
  }
  return "?";
}

/// The attribute `key` of `node` when present with `kind`, nullptr when absent; UserError when
/// present with another kind.
const Attribute* find_attr(const Node& node, const std::string& key, Attribute::Kind kind) {
  auto it = node.attrs.find(key);
  if (it == node.attrs.end()) {
    return nullptr;
  }
  TT_USER_CHECK(it->second.kind == kind)
      << node.describe() << ": attribute '" << key << "' is a " << kind_name(it->second.kind)
      << ", expected " << kind_name(kind);
  return &it->second;
}

}  // namespace

int64_t Value::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    n *= d;
  }
  return n;
}

std::string Value::describe() const {
  std::string s = dtype.to_string() + "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    s += (i ? "," : "") + std::to_string(shape[i]);
  }
  return s + "]";
}

int64_t Node::attr_int(const std::string& key, int64_t fallback) const {
  const Attribute* a = find_attr(*this, key, Attribute::Kind::Int);
  return a ? a->i : fallback;
}

double Node::attr_float(const std::string& key, double fallback) const {
  const Attribute* a = find_attr(*this, key, Attribute::Kind::Float);
  return a ? a->f : fallback;
}

std::string Node::attr_string(const std::string& key, const std::string& fallback) const {
  const Attribute* a = find_attr(*this, key, Attribute::Kind::String);
  return a ? a->s : fallback;
}

std::vector<int64_t> Node::attr_ints(const std::string& key,
                                     const std::vector<int64_t>& fallback) const {
  const Attribute* a = find_attr(*this, key, Attribute::Kind::Ints);
  return a ? a->ints : fallback;
}

std::string Node::describe() const {
  return "node '" + name + "' (" + op + ")";
}

const Value& Graph::value(const std::string& key) const {
  auto it = values_.find(key);
  TT_CHECK(it != values_.end()) << "graph '" << name << "' has no value '" << key << "'";
  return it->second;
}

void Graph::set_value(Value value) {
  std::string key = value.name;
  values_[key] = std::move(value);
}

int Graph::producer(const std::string& value) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const std::string& out : nodes[i].outputs) {
      if (out == value) {
        return static_cast<int>(i);
      }
    }
  }
  return -1;
}

int Graph::use_count(const std::string& value) const {
  int count = 0;
  for (const Node& node : nodes) {
    for (const std::string& in : node.inputs) {
      count += in == value ? 1 : 0;
    }
  }
  for (const std::string& out : outputs) {
    if (out == value) {
      return count + 1;
    }
  }
  return count;
}

std::string Graph::fresh_name(const std::string& base) const {
  auto used = [&](const std::string& candidate) {
    return has_value(candidate) || producer(candidate) >= 0;
  };
  if (!used(base)) {
    return base;
  }
  for (int i = 1;; ++i) {
    std::string candidate = base + "_" + std::to_string(i);
    if (!used(candidate)) {
      return candidate;
    }
  }
}

void Graph::validate() const {
  std::set<std::string> defined;
  for (const std::string& in : inputs) {
    auto it = values_.find(in);
    TT_CHECK(it != values_.end()) << "graph '" << name << "': input '" << in << "' has no value";
    TT_CHECK(!it->second.is_constant())
        << "graph '" << name << "': input '" << in << "' is a constant";
    defined.insert(in);
  }
  for (const auto& [key, value] : values_) {
    TT_CHECK(key == value.name) << "graph '" << name << "': value '" << value.name
                                << "' is stored under '" << key << "'";
    if (value.is_constant()) {
      defined.insert(key);
    }
  }
  for (const Node& node : nodes) {
    for (const std::string& in : node.inputs) {
      TT_CHECK(in.empty() || defined.count(in))
          << "graph '" << name << "': " << node.describe() << " reads '" << in
          << "', which is not a graph input, a constant or an earlier node's output";
    }
    for (const std::string& out : node.outputs) {
      if (out.empty()) {
        continue;
      }
      TT_CHECK(values_.count(out)) << "graph '" << name << "': " << node.describe() << " writes '"
                                   << out << "', which has no value";
      TT_CHECK(defined.insert(out).second) << "graph '" << name << "': " << node.describe()
                                           << " writes '" << out << "', which is already defined";
    }
  }
  for (const std::string& out : outputs) {
    TT_CHECK(defined.count(out)) << "graph '" << name << "': output '" << out
                                 << "' is not produced by any node, input or constant";
  }
}

std::string Graph::to_string() const {
  std::ostringstream os;
  for (const Node& node : nodes) {
    os << node.name << ": " << node.op << "(";
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      os << (i ? ", " : "") << (node.inputs[i].empty() ? "_" : node.inputs[i]);
    }
    os << ") ->";
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const std::string& out = node.outputs[i];
      os << (i ? ", " : " ") << (out.empty() ? "_" : out);
      if (has_value(out)) {
        os << " " << value(out).describe();
      }
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace tensortune::graph
