// SPDX-License-Identifier: Apache-2.0
// Vector memory accesses (float2/float4) for contiguous float32 vector loads and stores whose
// first element is provably aligned. The proof is a modular analysis of the index (what is known
// of a value modulo some number, TVM's ModularSet): buffers themselves are aligned (cudaMalloc'd
// parameters and scratch buffers to 256 bytes, __shared__ and local arrays declared
// __align__(16)), so an element offset that is a multiple of the lane count is an aligned address.
// Anything unproven, predicated or strided stays scalarised lane by lane.
#include "codegen/cuda/internal.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <numeric>
#include <utility>

namespace tensortune::codegen::cuda {
namespace {

constexpr ModularSet kUnknown{1, 0};

int64_t floor_mod(int64_t a, int64_t m) {
  int64_t r = a % m;
  return r < 0 ? r + m : r;
}

int64_t floor_div(int64_t a, int64_t d) {
  int64_t q = a / d;
  return (a % d != 0 && ((a < 0) != (d < 0))) ? q - 1 : q;
}

/// `base + coeff * k` normalised: base in [0, coeff) unless the value is exact (coeff 0).
ModularSet make_set(int64_t coeff, int64_t base) {
  coeff = coeff < 0 ? -coeff : coeff;
  if (coeff == 0) {
    return {0, base};
  }
  return {coeff, floor_mod(base, coeff)};
}

bool mul_overflows(int64_t a, int64_t b, int64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}

bool add_overflows(int64_t a, int64_t b, int64_t* out) {
  return __builtin_add_overflow(a, b, out);
}

ModularSet add(const ModularSet& x, const ModularSet& y, bool subtract) {
  int64_t base = 0;
  if (add_overflows(x.base, subtract ? -y.base : y.base, &base)) {
    return kUnknown;
  }
  return make_set(std::gcd(x.coeff, y.coeff), base);
}

// (c1*k1 + b1)(c2*k2 + b2) = c1*c2*k1*k2 + c1*b2*k1 + c2*b1*k2 + b1*b2.
ModularSet mul(const ModularSet& x, const ModularSet& y) {
  int64_t cc = 0;
  int64_t cb = 0;
  int64_t bc = 0;
  int64_t bb = 0;
  if (mul_overflows(x.coeff, y.coeff, &cc) || mul_overflows(x.coeff, y.base, &cb) ||
      mul_overflows(y.coeff, x.base, &bc) || mul_overflows(x.base, y.base, &bb)) {
    return kUnknown;
  }
  return make_set(std::gcd(std::gcd(cc, cb), bc), bb);
}

// Either value: both sets' coefficients and the distance between their bases.
ModularSet either(const ModularSet& x, const ModularSet& y) {
  int64_t distance = 0;
  if (add_overflows(x.base, -y.base, &distance)) {
    return kUnknown;
  }
  return make_set(std::gcd(std::gcd(x.coeff, y.coeff), distance), x.base);
}

class ModularAnalysis {
 public:
  explicit ModularAnalysis(const VarBindings& bindings) : bindings_(bindings) {}

  ModularSet of(const ir::Expr& e, int depth = 0) {
    if (!e.defined() || !e.type().is_scalar() || e.type().is_float() || depth > 64) {
      return kUnknown;
    }
    switch (e.kind()) {
      case ir::ExprKind::IntImm:
        return {0, e.as<ir::IntImm>()->value};
      case ir::ExprKind::Var: {
        // A variable bound several times (copies of an unrolled body) is any of its values.
        auto it = bindings_.find(e.as<ir::VarNode>());
        if (it == bindings_.end() || it->second.empty()) {
          return kUnknown;
        }
        ModularSet set = of(it->second[0], depth + 1);
        for (size_t n = 1; n < it->second.size(); ++n) {
          set = either(set, of(it->second[n], depth + 1));
        }
        return set;
      }
      case ir::ExprKind::Add:
        return add(of(e.as<ir::Add>()->a, depth + 1), of(e.as<ir::Add>()->b, depth + 1), false);
      case ir::ExprKind::Sub:
        return add(of(e.as<ir::Sub>()->a, depth + 1), of(e.as<ir::Sub>()->b, depth + 1), true);
      case ir::ExprKind::Mul:
        return mul(of(e.as<ir::Mul>()->a, depth + 1), of(e.as<ir::Mul>()->b, depth + 1));
      case ir::ExprKind::Div:
        return div(of(e.as<ir::Div>()->a, depth + 1), of(e.as<ir::Div>()->b, depth + 1));
      case ir::ExprKind::Mod:
        return mod(of(e.as<ir::Mod>()->a, depth + 1), of(e.as<ir::Mod>()->b, depth + 1));
      case ir::ExprKind::Min:
        return either(of(e.as<ir::Min>()->a, depth + 1), of(e.as<ir::Min>()->b, depth + 1));
      case ir::ExprKind::Max:
        return either(of(e.as<ir::Max>()->a, depth + 1), of(e.as<ir::Max>()->b, depth + 1));
      case ir::ExprKind::Select: {
        const auto* op = e.as<ir::Select>();
        return either(of(op->true_value, depth + 1), of(op->false_value, depth + 1));
      }
      case ir::ExprKind::Cast: {
        // Widening integer casts keep the value; anything else may wrap or truncate.
        const auto* op = e.as<ir::Cast>();
        ir::DataType from = op->value.type();
        bool widening = !from.is_float() && !from.is_bool() &&
                        from.is_uint() == e.type().is_uint() && from.bits() <= e.type().bits();
        return widening ? of(op->value, depth + 1) : kUnknown;
      }
      default:
        return kUnknown;
    }
  }

 private:
  // Floor division by an exact divisor d: (c*k + b) / d = (c/d)*k + floor(b/d) when d divides c.
  static ModularSet div(const ModularSet& x, const ModularSet& y) {
    if (y.coeff != 0 || y.base == 0) {
      return kUnknown;
    }
    int64_t d = y.base;
    if (x.coeff == 0) {
      return {0, floor_div(x.base, d)};
    }
    if (x.coeff % d != 0) {
      return kUnknown;
    }
    return make_set(x.coeff / d, floor_div(x.base, d));
  }

  // Floor modulo by an exact m: x - m*floor(x/m) is x's base modulo gcd(c, m).
  static ModularSet mod(const ModularSet& x, const ModularSet& y) {
    if (y.coeff != 0 || y.base == 0) {
      return kUnknown;
    }
    int64_t m = std::abs(y.base);
    if (x.coeff == 0) {
      return {0, x.base - y.base * floor_div(x.base, y.base)};
    }
    return make_set(std::gcd(x.coeff, m), x.base);
  }

  const VarBindings& bindings_;
};

class BindingCollector : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;
  VarBindings bindings;

 protected:
  void visit(const ir::LetStmt* op) override {
    bindings[op->var.get()].push_back(op->value);
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::For* op) override {
    // A loop of extent 1 runs once, at its min; any other makes its variable unknown.
    bindings[op->var.get()].push_back(ir::is_const_int(op->extent, 1) ? op->min : ir::Expr());
    ir::IRVisitor::visit(op);
  }
};

/// The unpredicated vector loads of an expression that are evaluated whenever it is: not under a
/// Select's arms, the right-hand side of && / ||, or a predicated load (C evaluates those only
/// sometimes, and a vector read hoisted out of them could leave the buffer).
class UnconditionalLoads : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;
  std::vector<const ir::Load*> loads;

 protected:
  void visit(const ir::Select* op) override { visit(op->condition); }
  void visit(const ir::And* op) override { visit(op->a); }
  void visit(const ir::Or* op) override { visit(op->a); }
  void visit(const ir::Load* op) override {
    if (op->predicate.defined()) {
      return;
    }
    if (op->type.is_vector()) {
      loads.push_back(op);
    }
    ir::IRVisitor::visit(op);
  }
};

/// `base + delta` as C text (`base` itself for 0).
std::string offset(const std::string& base, int delta) {
  return delta == 0 ? base : "(" + base + " + " + std::to_string(delta) + ")";
}

const char* component(int lane) {
  constexpr std::array<const char*, 4> kNames = {"x", "y", "z", "w"};
  return kNames.at(static_cast<size_t>(lane));
}

}  // namespace

VarBindings collect_bindings(const ir::Stmt& kernel) {
  BindingCollector collector;
  collector.visit(kernel);
  return std::move(collector.bindings);
}

ModularSet modular_set(const ir::Expr& e, const VarBindings& bindings) {
  return ModularAnalysis(bindings).of(e);
}

bool provably_multiple_of(const ir::Expr& e, int64_t n, const VarBindings& bindings) {
  TT_CHECK(n > 0) << "provably_multiple_of: n must be positive";
  ModularSet s = modular_set(e, bindings);
  return s.coeff % n == 0 && floor_mod(s.base, n) == 0;
}

int vector_access_width(ir::DataType type,
                        const ir::Expr& index,
                        const ir::Expr& predicate,
                        const VarBindings& bindings) {
  const auto* ramp = index.as<ir::Ramp>();
  if (predicate.defined() || ramp == nullptr || type.element_of() != ir::DataType::float32() ||
      !ir::is_const_int(ramp->stride, 1)) {
    return 0;
  }
  for (int width : {4, 2}) {
    if (ramp->lanes % width == 0 && provably_multiple_of(ramp->base, width, bindings)) {
      return width;
    }
  }
  return 0;
}

std::string vector_type_name(int width) {
  TT_CHECK(width == 2 || width == 4) << "cuda codegen: no float vector of " << width << " lanes";
  return width == 4 ? "float4" : "float2";
}

// The value's unconditional contiguous aligned loads, each once, with its vector width.
std::vector<std::pair<const ir::Load*, int>> KernelPrinter::aligned_vector_loads(
    const ir::Expr& value) const {
  UnconditionalLoads candidates;
  candidates.visit(value);
  std::vector<std::pair<const ir::Load*, int>> loads;
  for (const ir::Load* load : candidates.loads) {
    const int w = vector_access_width(load->type, load->indices[0], load->predicate, ctx_.bindings);
    const bool seen =
        std::any_of(loads.begin(), loads.end(), [&](const auto& l) { return l.first == load; });
    if (w != 0 && !seen) {
      loads.emplace_back(load, w);
    }
  }
  return loads;
}

// Each load becomes one vector read per `width` lanes into temporaries tt_v0, tt_v1, ..., which
// its lanes are then read from (vector_load_lane: `tt_vN.x`).
void KernelPrinter::read_vectors(const std::vector<std::pair<const ir::Load*, int>>& loads) {
  int next = 0;
  for (const auto& [load, w] : loads) {
    const std::string type = vector_type_name(w);
    const std::string base = expr(load->indices[0].as<ir::Ramp>()->base);
    vector_loads_[load] = VectorLoad{next, w};
    for (int chunk = 0; chunk < load->type.lanes() / w; ++chunk) {
      line("const " + type + " tt_v" + std::to_string(next++) + " = *reinterpret_cast<const " +
           type + "*>(&" + buffer_name(load->buffer) + "[" + offset(base, chunk * w) + "]);");
    }
  }
}

// C evaluates every argument of make_floatN before the assignment, so all lanes are read before
// any is written, as the IR's vector store requires; with several chunks, all chunks go to
// temporaries first when the value reads the stored buffer.
bool KernelPrinter::vector_memory_store(const ir::Store* op, const std::string& guard) {
  const int lanes = op->value.type().lanes();
  const int width =
      vector_access_width(op->value.type(), op->indices[0], op->predicate, ctx_.bindings);
  if (width == 0) {
    return strided_store_of_vector_loads(op, guard);
  }
  const std::vector<std::pair<const ir::Load*, int>> loads = aligned_vector_loads(op->value);
  const bool reads_stored = reads_buffer(op->value, op->buffer);
  const int num_chunks = lanes / width;
  const bool temporaries = num_chunks > 1 && reads_stored;
  if (!guard.empty()) {
    open("if (" + guard + ")");
  }
  const bool block = !loads.empty() || temporaries;
  if (block) {
    open("");
  }
  read_vectors(loads);
  const std::string type = vector_type_name(width);
  const std::string buffer = buffer_name(op->buffer);
  const std::string base = expr(op->indices[0].as<ir::Ramp>()->base);
  for (int chunk = 0; chunk < num_chunks; ++chunk) {
    std::string args;
    for (int l = chunk * width; l < (chunk + 1) * width; ++l) {
      args += (args.empty() ? "" : ", ") + expr(op->value, std::to_string(l));
    }
    std::string value = "make_" + type + "(" + args + ")";
    std::string target =
        "*reinterpret_cast<" + type + "*>(&" + buffer + "[" + offset(base, chunk * width) + "])";
    line(temporaries ? "const " + type + " tt_s" + std::to_string(chunk) + " = " + value + ";"
                     : target + " = " + value + ";");
  }
  for (int chunk = 0; temporaries && chunk < num_chunks; ++chunk) {
    line("*reinterpret_cast<" + type + "*>(&" + buffer + "[" + offset(base, chunk * width) +
         "]) = tt_s" + std::to_string(chunk) + ";");
  }
  if (block) {
    close();
  }
  if (!guard.empty()) {
    close();
  }
  vector_loads_.clear();
  return true;
}

// A strided or unaligned store of contiguous aligned loads (a shared-memory copy transposed
// on the way in): the loads are still float4/float2 reads, then each lane is stored alone.
bool KernelPrinter::strided_store_of_vector_loads(const ir::Store* op, const std::string& guard) {
  if (op->predicate.defined() || reads_buffer(op->value, op->buffer)) {
    return false;
  }
  const std::vector<std::pair<const ir::Load*, int>> loads = aligned_vector_loads(op->value);
  if (loads.empty()) {
    return false;
  }
  if (!guard.empty()) {
    open("if (" + guard + ")");
  }
  open("");
  read_vectors(loads);
  const std::string buffer = buffer_name(op->buffer);
  for (int l = 0; l < op->value.type().lanes(); ++l) {
    const std::string lane = std::to_string(l);
    line(buffer + "[" + expr(op->indices[0], lane) + "] = " + expr(op->value, lane) + ";");
  }
  close();
  if (!guard.empty()) {
    close();
  }
  vector_loads_.clear();
  return true;
}

namespace {

bool is_zero(const ir::Expr& e) {
  if (const auto* b = e.as<ir::Broadcast>()) {
    return is_zero(b->value);
  }
  if (const auto* c = e.as<ir::Cast>()) {
    return is_zero(c->value);
  }
  const auto* f = e.as<ir::FloatImm>();
  return (f != nullptr && f->value == 0.0) || ir::is_const_int(e, 0);
}

}  // namespace

// A fetch's store into a double-buffered shared tile (cuda/pipeline.cpp) as cp.async copies: one
// of 16 bytes per aligned float4 where both sides are proven aligned, else one of 4 bytes per
// lane (a masked lane copies nothing); a padded read (selects of the load or zero, a masked
// load) copies zero bytes outside, which fills the element with zero (and reads from the
// buffer's start, never outside it). Other forms stay plain stores.
bool KernelPrinter::async_copy(const ir::Store* op, const std::string& guard) {
  if (op->value.type().element_of() != ir::DataType::float32()) {
    return false;
  }
  ir::Expr value = op->value;
  ir::Expr inside;
  for (const ir::Select* select = value.as<ir::Select>();
       select != nullptr && is_zero(select->false_value); select = value.as<ir::Select>()) {
    inside = inside.defined() ? (inside && select->condition) : select->condition;
    value = select->true_value;
  }
  const ir::Load* load = value.as<ir::Load>();
  if (load == nullptr || load->buffer.scope() != ir::MemoryScope::Global ||
      load->type != op->value.type()) {
    return false;
  }
  if (load->predicate.defined()) {  // its masked lanes are not read: zero bytes copied
    inside = inside.defined() ? (inside && load->predicate) : load->predicate;
  }
  ctx_.helpers->cp_async = true;
  if (!guard.empty()) {
    open("if (" + guard + ")");
  }
  const std::string target = buffer_name(op->buffer);
  const std::string source = buffer_name(load->buffer);
  const int lanes = op->value.type().lanes();
  const int to =
      vector_access_width(op->value.type(), op->indices[0], op->predicate, ctx_.bindings);
  const int from =
      vector_access_width(load->type, load->indices[0], load->predicate, ctx_.bindings);
  if (lanes > 1 && !inside.defined() && !op->predicate.defined() && to == 4 && from == 4) {
    const std::string base = expr(op->indices[0].as<ir::Ramp>()->base);
    const std::string load_base = expr(load->indices[0].as<ir::Ramp>()->base);
    for (int chunk = 0; chunk < lanes / 4; ++chunk) {
      line("tt_cp_async16(&" + target + "[" + offset(base, chunk * 4) + "], &" + source + "[" +
           offset(load_base, chunk * 4) + "]);");
    }
  } else {
    for (int l = 0; l < lanes; ++l) {
      const std::string lane = lanes > 1 ? std::to_string(l) : "";
      const std::string dst = "&" + target + "[" + expr(op->indices[0], lane) + "]";
      const std::string src = "&" + source + "[" + expr(load->indices[0], lane) + "]";
      const bool block = op->predicate.defined() || inside.defined();
      if (block) {
        open(op->predicate.defined() ? "if (" + expr(op->predicate, lane) + ")" : "");
      }
      if (!inside.defined()) {
        line("tt_cp_async4(" + dst + ", " + src + ", true);");
      } else {
        line("const bool tt_inside = " + expr(inside, lane) + ";");
        line("tt_cp_async4(" + dst + ", tt_inside ? " + src + " : " + source + ", tt_inside);");
      }
      if (block) {
        close();
      }
    }
  }
  if (!guard.empty()) {
    close();
  }
  return true;
}

std::string KernelPrinter::vector_load_lane(const ir::Load* op, const std::string& lane) const {
  auto it = vector_loads_.find(op);
  if (it == vector_loads_.end()) {
    return "";
  }
  TT_CHECK(!lane.empty() && lane.find_first_not_of("0123456789") == std::string::npos)
      << "cuda codegen: a vector load of '" << op->buffer.name() << "' read at lane '" << lane
      << "' (a vector read needs a constant lane)";
  int l = std::stoi(lane);
  const VectorLoad& v = it->second;
  return "tt_v" + std::to_string(v.first + l / v.width) + "." + component(l % v.width);
}

}  // namespace tensortune::codegen::cuda
