// SPDX-License-Identifier: Apache-2.0
// Multi-buffered shared-memory fetches (software pipelining, S stages: what the loop's shared
// buffers ask for, schedule::CacheRead::stages, else 2; TT_CUDA_PIPELINE overrides). A serial
// loop outside the thread loops whose body first fills shared buffers from global memory and then
// only reads them (a GEMM's k steps: fetch A and B tiles, then the block's FMAs) becomes, for S=2:
//
//   fetch(min) into half 0
//   for k: [cp.async.wait_all; __syncthreads()]
//          if (k + 1 < end) fetch(k + 1) into half (k + 1 - min) % 2
//          compute(k) from half (k - min) % 2
//
// and for S > 2, with one cp.async group committed per fetched step:
//
//   fetch(min + s) into stage s; commit          (s = 0 .. S-2)
//   for k: [cp.async.wait_group S-2; __syncthreads()]
//          if (k + S-1 < end) fetch(k + S-1) into stage (k + S-1 - min) % S
//          commit (empty past the end, so every step waits for the same count)
//          compute(k) from stage (k - min) % S
//
// Each buffer is repeated S times in one array; the fetch's stores become cp.async copies (sm_80
// and newer), so the next tiles' loads are in flight while this one is computed. One barrier per
// step suffices: the barrier at the top of step k follows every thread's compute(k-1) (so the
// fetch may overwrite that stage) and every thread's wait for fetch(k) (so compute(k) may read
// it). The barrier planner is told so: inside the loop it ignores the repeated buffers.
#include "codegen/cuda/internal.h"
#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/ir/simplify.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace tensortune::codegen::cuda {
namespace {

/// The buffers a statement reads and writes (and of them, the shared ones it writes), whether
/// it reads global memory only, and whether every store writes one of `targets` with a plain
/// scalar or contiguous vector index.
class Accesses : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;
  std::set<const ir::BufferNode*> shared_writes, reads, writes;
  bool reads_only_global = true;
  bool stores_only_targets = true;
  bool any_thread_loop = false;
  const std::set<const ir::BufferNode*>* targets = nullptr;

 protected:
  void visit(const ir::For* op) override {
    any_thread_loop = any_thread_loop || ir::is_thread_kind(op->for_kind);
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::LetStmt* op) override {
    stores_only_targets = false;  // kept simple: a fetch is loops and stores
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Load* op) override {
    reads.insert(op->buffer.get());
    reads_only_global = reads_only_global && op->buffer.scope() == ir::MemoryScope::Global;
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    if (op->buffer.scope() == ir::MemoryScope::Shared) {
      shared_writes.insert(op->buffer.get());
    }
    writes.insert(op->buffer.get());
    const bool plain_index = op->indices.size() == 1 && (op->indices[0].type().is_scalar() ||
                                                         op->indices[0].as<ir::Ramp>() != nullptr);
    stores_only_targets = stores_only_targets && targets != nullptr &&
                          targets->count(op->buffer.get()) != 0 && plain_index;
    ir::IRVisitor::visit(op);
  }
};

/// Loads and stores of the original buffers moved to a stage of the repeated ones.
class ToStage : public ir::IRMutator {
 public:
  ToStage(const std::map<const ir::BufferNode*, ir::Buffer>& doubled, ir::Expr stage)
      : doubled_(doubled), half_(std::move(stage)) {}
  using ir::IRMutator::visit;

 protected:
  ir::Expr visit(const ir::Load* op, const ir::Expr& e) override {
    auto it = doubled_.find(op->buffer.get());
    if (it == doubled_.end()) {
      return ir::IRMutator::visit(op, e);
    }
    return ir::Load::make(it->second, {moved(op->indices[0], op->buffer)}, mutate(op->predicate));
  }
  ir::Stmt visit(const ir::Store* op, const ir::Stmt& s) override {
    auto it = doubled_.find(op->buffer.get());
    if (it == doubled_.end()) {
      return ir::IRMutator::visit(op, s);
    }
    return ir::Store::make(it->second, mutate(op->value), {moved(op->indices[0], op->buffer)},
                           mutate(op->predicate));
  }

 private:
  ir::Expr moved(const ir::Expr& index, const ir::Buffer& buffer) {
    const ir::Expr offset = half_ * ir::make_const(half_.type(), buffer.num_elements());
    const ir::Expr i = mutate(index);
    if (const auto* ramp = i.as<ir::Ramp>()) {
      return ir::Ramp::make(ir::simplify(ramp->base + ir::cast(ramp->base.type(), offset)),
                            ramp->stride, ramp->lanes);
    }
    // Any other vector index (a broadcast, a gather) moves lane by lane.
    const ir::Expr lane_offset = ir::cast(i.type().element_of(), offset);
    return ir::simplify(i + (i.type().is_vector()
                                 ? ir::Broadcast::make(lane_offset, i.type().lanes())
                                 : lane_offset));
  }

  const std::map<const ir::BufferNode*, ir::Buffer>& doubled_;
  ir::Expr half_;  ///< the stage
};

/// The stores to the doubled buffers (emitted as cp.async copies).
class CollectStores : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;
  explicit CollectStores(Pipelines* out) : out_(out) {}

 protected:
  void visit(const ir::Store* op) override {
    if (out_->doubled.count(op->buffer.get()) != 0) {
      out_->async_stores.insert(op);
    }
    ir::IRVisitor::visit(op);
  }

 private:
  Pipelines* out_;
};

/// The shared allocations of a loop body's chain of allocations and sequences, hoisted, and the
/// statements left in order.
void flatten(const ir::Stmt& s, std::vector<ir::Buffer>* shared, std::vector<ir::Stmt>* stmts) {
  if (const auto* alloc = s.as<ir::Allocate>();
      alloc != nullptr && alloc->buffer.scope() == ir::MemoryScope::Shared) {
    shared->push_back(alloc->buffer);
    flatten(alloc->body, shared, stmts);
  } else if (const auto* seq = s.as<ir::Seq>()) {
    for (const ir::Stmt& child : seq->stmts) {
      flatten(child, shared, stmts);
    }
  } else if (s.defined()) {
    stmts->push_back(s);
  }
}

/// The bytes of the shared buffers a kernel allocates.
class SharedBytes : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;
  int64_t bytes = 0;

 protected:
  void visit(const ir::Allocate* op) override {
    if (op->buffer.scope() == ir::MemoryScope::Shared) {
      bytes += op->buffer.num_elements() * op->buffer.dtype().bytes();
    }
    ir::IRVisitor::visit(op);
  }
};

class Pipeliner : public ir::IRMutator {
 public:
  /// `stages`: the depth of a loop whose buffers ask for none, or of every loop when `forced`.
  Pipeliner(int64_t spare_bytes, int stages, bool forced, Pipelines* out)
      : spare_bytes_(spare_bytes), stages_(stages), forced_(forced), out_(out) {}
  using ir::IRMutator::visit;

 protected:
  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    if (ir::is_thread_kind(op->for_kind)) {
      return s;  // a barrier-free region: nothing to pipeline inside
    }
    if (op->for_kind == ir::ForKind::Serial) {
      if (std::optional<ir::Stmt> done = pipeline(op)) {
        return *done;
      }
    }
    return ir::IRMutator::visit(op, s);
  }

 private:
  std::optional<ir::Stmt> pipeline(const ir::For* op) {
    const int64_t* min = ir::as_const_int(op->min);
    const int64_t* extent = ir::as_const_int(op->extent);
    if (min == nullptr || extent == nullptr || *extent < 2) {
      return std::nullopt;
    }
    std::vector<ir::Buffer> shared;
    std::vector<ir::Stmt> stmts;
    flatten(op->body, &shared, &stmts);
    std::set<const ir::BufferNode*> targets;
    int64_t bytes = 0;
    int64_t asked = 0;  // the deepest pipeline the loop's buffers ask for (0: none asked)
    for (const ir::Buffer& b : shared) {
      targets.insert(b.get());
      bytes += b.num_elements() * b.dtype().bytes();
      asked = std::max(asked, b.pipeline_stages());
    }
    const int64_t want = forced_ || asked == 0 ? stages_ : asked;
    // More stages where they fit and the loop has the steps for them, else two.
    const int64_t stages =
        want > 2 && (want - 1) * bytes <= spare_bytes_ && *extent >= want ? want : 2;
    if (shared.empty() || want < 2 || (stages - 1) * bytes > spare_bytes_) {
      return std::nullopt;
    }
    // A prefix of fetches (stores to the body's shared buffers only, reading global memory
    // only), then the rest, which reads them and writes none of them. The next step's fetch runs
    // before this step's compute: it may read nothing the compute writes.
    size_t fetches = 0;
    std::set<const ir::BufferNode*> filled, fetched_from;
    for (size_t n = 0; n < stmts.size(); ++n) {
      Accesses a;
      a.targets = &targets;
      a.visit(stmts[n]);
      const bool fetch = a.reads_only_global && !a.shared_writes.empty() && a.stores_only_targets &&
                         a.any_thread_loop;
      bool overlaps = false;  // inside the loop no barrier would order two fetches of one tile
      for (const ir::BufferNode* b : a.shared_writes) {
        overlaps = overlaps || filled.count(b) != 0;
      }
      if (fetch && overlaps) {
        return std::nullopt;
      }
      if (fetch && n == fetches) {  // still in the prefix
        ++fetches;
        filled.insert(a.shared_writes.begin(), a.shared_writes.end());
        fetched_from.insert(a.reads.begin(), a.reads.end());
        continue;
      }
      for (const ir::BufferNode* b : a.writes) {
        if (targets.count(b) != 0 || fetched_from.count(b) != 0) {
          return std::nullopt;  // the compute writes a fetched buffer or what a fetch reads
        }
      }
    }
    if (fetches == 0 || fetches == stmts.size() || filled != targets) {
      return std::nullopt;
    }
    std::map<const ir::BufferNode*, ir::Buffer> doubled;
    for (const ir::Buffer& b : shared) {
      doubled.emplace(b.get(), ir::Buffer(b.name(), b.dtype(), {stages * b.num_elements()},
                                          ir::MemoryScope::Shared));
    }
    const ir::Var& k = op->var;
    const ir::DataType t = k.type();
    // With more than two stages each fetched step is a cp.async group: its last statement is
    // followed by a commit.
    const bool groups = stages > 2;
    const auto fetch_at = [&](const ir::Expr& step, const ir::Expr& stage) {
      std::vector<ir::Stmt> out;
      for (size_t n = 0; n < fetches; ++n) {
        ir::Stmt st = ir::substitute(stmts[n], {{k.get(), step}});
        out.push_back(ir::simplify(ToStage(doubled, stage).mutate(st)));
      }
      return out;
    };
    const ir::Expr first = ir::make_const(t, *min);
    const ir::Expr count = ir::make_const(t, stages);
    std::vector<ir::Stmt> prologue_stmts;
    for (int64_t st = 0; st + 1 < stages; ++st) {
      std::vector<ir::Stmt> f = fetch_at(ir::make_const(t, *min + st), ir::make_const(t, st));
      if (groups) {
        out_->commit_after.insert(f.back().get());
      }
      prologue_stmts.insert(prologue_stmts.end(), f.begin(), f.end());
    }
    ir::Stmt prologue = ir::Seq::make(std::move(prologue_stmts));
    const ir::Expr next = k + ir::make_const(t, stages - 1);
    ir::Stmt next_fetch =
        ir::IfThenElse::make(k < ir::make_const(t, *min + *extent - (stages - 1)),
                             ir::Seq::make(fetch_at(next, (next - first) % count)));
    if (groups) {
      out_->commit_after.insert(next_fetch.get());
      out_->step_waits[next_fetch.get()] = static_cast<int>(stages - 2);
    }
    std::vector<ir::Stmt> body = {next_fetch};
    ToStage current(doubled, (ir::Expr(k) - first) % count);
    for (size_t n = fetches; n < stmts.size(); ++n) {
      body.push_back(current.mutate(stmts[n]));  // no pipeline nested in a pipelined loop
    }
    ir::Stmt loop = ir::For::make(k, op->min, op->extent, op->for_kind, ir::Seq::make(body),
                                  op->auto_unroll_max_step);
    ir::Stmt result = ir::Seq::make({prologue, loop});
    for (auto it = shared.rbegin(); it != shared.rend(); ++it) {
      result = ir::Allocate::make(doubled.at(it->get()), result);
    }
    spare_bytes_ -= (stages - 1) * bytes;
    for (const auto& [node, buffer] : doubled) {
      out_->doubled.insert(buffer.get());
    }
    out_->loops.insert(loop.get());
    out_->step_starts.insert(next_fetch.get());
    CollectStores(out_).visit(prologue);
    CollectStores(out_).visit(next_fetch);
    return result;
  }

  int64_t spare_bytes_;
  int stages_;
  bool forced_;
  Pipelines* out_;
};

}  // namespace

int64_t shared_memory_limit(const target::Target& target) {
  const target::Target defaults;
  if (target.max_shared_memory_bytes != defaults.max_shared_memory_bytes) {
    return target.max_shared_memory_bytes;  // set on the target: a limit for every kernel
  }
  // cudaDevAttrMaxSharedMemoryPerBlockOptin of each architecture.
  static const std::map<std::string, int64_t> kOptIn = {
      {"sm_70", 96 * 1024},  {"sm_75", 64 * 1024}, {"sm_80", 163 * 1024}, {"sm_86", 99 * 1024},
      {"sm_87", 163 * 1024}, {"sm_89", 99 * 1024}, {"sm_90", 227 * 1024}, {"sm_100", 227 * 1024}};
  const auto it = kOptIn.find(target.arch);
  return it != kOptIn.end() ? it->second : target.max_shared_memory_bytes;
}

namespace {

/// The stages TT_CUDA_PIPELINE sets for every kernel (0 or 1: none, as 0), nullopt when unset;
/// UserError for another value.
std::optional<int> forced_stages() {
  const char* env = std::getenv("TT_CUDA_PIPELINE");
  if (env == nullptr || *env == '\0') {
    return std::nullopt;
  }
  const std::string v(env);
  TT_USER_CHECK(v.size() == 1 && v[0] >= '0' && v[0] <= '4')
      << "TT_CUDA_PIPELINE='" << v << "': 0 or 1 (no pipelining), or 2 to 4 stages";
  return v[0] <= '1' ? 0 : v[0] - '0';
}

}  // namespace

ir::Stmt pipeline_shared_fetches(const ir::Stmt& kernel,
                                 const target::Target& target,
                                 Pipelines* out) {
  if (target.sm_version() < 80) {
    return kernel;  // no cp.async: the copies would stall as plain loads and stores
  }
  const std::optional<int> forced = forced_stages();
  if (forced == 0) {
    return kernel;
  }
  SharedBytes used;
  used.visit(kernel);
  const int64_t spare = shared_memory_limit(target) - used.bytes;
  Pipeliner pipeliner(spare, forced.value_or(2), forced.has_value(), out);
  return pipeliner.mutate(kernel);
}

}  // namespace tensortune::codegen::cuda
