// SPDX-License-Identifier: Apache-2.0
// Statements -> CUDA C text: serial loops, loops bound to blockIdx/threadIdx (replaced by the
// index), local arrays, hoisted __shared__ arrays (both 16-byte aligned for float4 accesses),
// barriers where plan_barriers put them, and vector stores: float2/float4 accesses where
// cuda/vector.cpp proves them aligned, else scalarised into an unrolled loop over lanes.
#include "codegen/cuda/internal.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

namespace tensortune::codegen::cuda {
namespace {

/// 0, 1, 2 for the x, y, z index of a GPU binding kind.
int dimension(ir::ForKind k) {
  switch (k) {
    case ir::ForKind::BlockY:
    case ir::ForKind::ThreadY:
      return 1;
    case ir::ForKind::BlockZ:
    case ir::ForKind::ThreadZ:
      return 2;
    default:
      return 0;
  }
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (const std::string& p : parts) {
    out += (out.empty() ? "" : separator) + p;
  }
  return out;
}

}  // namespace

bool reads_buffer(const ir::Expr& e, const ir::Buffer& buffer) {
  bool found = false;
  ir::post_order_visit(e, [&](const ir::Expr& x) {
    const auto* load = x.as<ir::Load>();
    found = found || (load != nullptr && load->buffer.same_as(buffer));
  });
  return found;
}

KernelPrinter::KernelPrinter(KernelContext context, NameTable names)
    : ctx_(std::move(context)), names_(std::move(names)) {}

std::vector<std::string> KernelPrinter::shared_declarations(bool dynamic) const {
  std::vector<std::string> out;
  if (dynamic && !shared_.empty()) {
    out.push_back("TT_DYNAMIC_SHARED(" + std::to_string(shared_bytes_) + ");");
  }
  int64_t offset = 0;
  for (const SharedArray& a : shared_) {
    if (dynamic) {
      out.push_back(a.type + "* " + a.name + " = reinterpret_cast<" + a.type + "*>(tt_shared + " +
                    std::to_string(offset) + ");");
    } else {
      out.push_back(std::string("__shared__ ") + (a.aligned ? "__align__(16) " : "") + a.type +
                    " " + a.name + "[" + std::to_string(a.elements) + "];");
    }
    offset += a.bytes;
  }
  return out;
}

void KernelPrinter::print_kernel(const ir::Stmt& kernel) {
  stmt(kernel, true);
}

void KernelPrinter::line(const std::string& text) {
  os_ << std::string(static_cast<size_t>(indent_) * 2, ' ') << text << "\n";
}

void KernelPrinter::open(const std::string& text) {
  line(text.empty() ? "{" : text + " {");
  ++indent_;
}

void KernelPrinter::close() {
  --indent_;
  line("}");
}

void KernelPrinter::enter_range(const ir::Var& var, const ir::Expr& min, const ir::Expr& extent) {
  std::optional<ir::ConstBound> lo = ir::const_bound(min, ranges_);
  std::optional<ir::ConstBound> n = ir::const_bound(extent, ranges_);
  if (lo.has_value() && n.has_value() && n->max >= 1) {
    ranges_[var.get()] = ir::ConstBound{lo->min, lo->max + n->max - 1};
  }
}

// `sole_in_scope`: `s` is all of a brace block, so its declarations cannot clash with a sibling's.
void KernelPrinter::stmt(const ir::Stmt& s, bool sole_in_scope) {
  if (!s.defined()) {
    return;
  }
  if (thread_depth_ == 0 && ctx_.barriers.count(s.get()) != 0) {
    if (ctx_.pipelines.step_starts.count(s.get()) != 0) {
      // This thread's copies of the step's tiles: all of them, or all but the later steps'
      // groups.
      const auto waits = ctx_.pipelines.step_waits.find(s.get());
      line(waits == ctx_.pipelines.step_waits.end()
               ? std::string("tt_cp_async_wait_all();")
               : "tt_cp_async_wait_group<" + std::to_string(waits->second) + ">();");
      ctx_.helpers->cp_async = true;
      if (waits != ctx_.pipelines.step_waits.end()) {
        ctx_.helpers->cp_async_groups = true;
      }
    }
    line("__syncthreads();");
  }
  switch (s.kind()) {
    case ir::StmtKind::For:
      for_loop(s.as<ir::For>(), sole_in_scope);
      return;
    case ir::StmtKind::Store:
      store(s.as<ir::Store>());
      return;
    case ir::StmtKind::Allocate:
      allocate(s.as<ir::Allocate>(), sole_in_scope);
      return;
    case ir::StmtKind::IfThenElse: {
      const auto* op = s.as<ir::IfThenElse>();
      TT_CHECK(op->condition.type().is_scalar()) << "cuda codegen: a vector if condition";
      open("if (" + expr(op->condition) + ")");
      stmt(op->then_case, true);
      if (op->else_case.defined()) {
        --indent_;
        line("} else {");
        ++indent_;
        stmt(op->else_case, true);
      }
      close();
      return;
    }
    case ir::StmtKind::Seq:
      for (const ir::Stmt& child : s.as<ir::Seq>()->stmts) {
        stmt(child, false);
        if (ctx_.pipelines.commit_after.count(child.get()) != 0) {
          line("tt_cp_async_commit();");  // a fetched step's copies are one group
        }
      }
      return;
    case ir::StmtKind::Evaluate:
      return;  // no side effects (simplify's "nothing to do")
    case ir::StmtKind::LetStmt:
      let(s.as<ir::LetStmt>(), sole_in_scope);
      return;
  }
}

void KernelPrinter::for_loop(const ir::For* op, bool sole_in_scope) {
  switch (op->for_kind) {
    case ir::ForKind::Parallel:
      throw UserError("cuda codegen: loop '" + op->var.name() + "' of kernel '" + ctx_.kernel_name +
                      "' is parallel; on a GPU target bind it to blockIdx/threadIdx instead");
    case ir::ForKind::BlockX:
    case ir::ForKind::BlockY:
    case ir::ForKind::BlockZ:
    case ir::ForKind::ThreadX:
    case ir::ForKind::ThreadY:
    case ir::ForKind::ThreadZ:
      bound_loops(op, sole_in_scope);
      return;
    case ir::ForKind::Serial:
    case ir::ForKind::Vectorized:  // left by the vectorize pass: runs lane after lane
    case ir::ForKind::Unrolled:
      break;
  }
  std::string v = names_.get(op->var.get(), op->var.name());
  std::string type = c_type(op->var.type(), "loop '" + op->var.name() + "'");
  std::string end = expr(ir::simplify(op->min + op->extent, ranges_));
  std::string begin = expr(op->min);
  if (op->for_kind == ir::ForKind::Unrolled) {
    line("#pragma unroll");
  }
  enter_range(op->var, op->min, op->extent);
  open("for (" + type + " " + v + " = " + begin + "; " + v + " < " + end + "; ++" + v + ")");
  stmt(op->body, true);
  close();
  ranges_.erase(op->var.get());
}

// A chain of directly nested bound loops shares one scope: `const int i = blockIdx.y;` and so on,
// each under `if (index < extent)` when the launch is wider than the loop.
void KernelPrinter::bound_loops(const ir::For* op, bool sole_in_scope) {
  if (ctx_.cross_thread.count(op->var.get()) != 0) {
    cross_thread_reduction(op, sole_in_scope);  // cuda/allreduce.cpp
    return;
  }
  std::vector<const ir::For*> chain;
  int opened = 0;
  const ir::For* loop = op;
  while (true) {
    const char* index = ir::for_kind_name(loop->for_kind);
    auto kind = static_cast<size_t>(loop->for_kind);
    TT_USER_CHECK(bound_[kind] == 0)
        << "cuda codegen: loop '" << loop->var.name() << "' of kernel '" << ctx_.kernel_name
        << "' is bound to " << index << " inside another loop bound to " << index;
    const int64_t* extent = ir::as_const_int(loop->extent);
    TT_USER_CHECK(extent != nullptr) << "cuda codegen: loop '" << loop->var.name()
                                     << "' is bound to " << index << " but its extent is not "
                                     << "constant";
    bool thread = ir::is_thread_kind(loop->for_kind);
    int64_t launched =
        (thread ? ctx_.block : ctx_.grid)[static_cast<size_t>(dimension(loop->for_kind))];
    if (*extent < launched) {
      open("if (" + std::string(index) + " < " + std::to_string(*extent) + ")");
      ++opened;
    } else if (chain.empty() && !sole_in_scope) {
      open("");
      ++opened;
    }
    std::string v = names_.get(loop->var.get(), loop->var.name());
    std::string value = ir::is_const_int(loop->min, 0)
                            ? std::string(index)
                            : "(" + std::string(index) + " + " + expr(loop->min) + ")";
    line("const " + c_type(loop->var.type(), "loop '" + loop->var.name() + "'") + " " + v + " = " +
         value + ";");
    enter_range(loop->var, loop->min, loop->extent);
    ++bound_[kind];
    thread_depth_ += thread ? 1 : 0;
    chain.push_back(loop);
    const auto* next = loop->body.as<ir::For>();
    bool chains = next != nullptr && ir::is_gpu_kind(next->for_kind) &&
                  !(thread_depth_ == 0 && ctx_.barriers.count(next) != 0) &&
                  ctx_.cross_thread.count(next->var.get()) == 0;
    if (!chains) {
      break;
    }
    loop = next;
  }
  stmt(chain.back()->body, true);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    --bound_[static_cast<size_t>((*it)->for_kind)];
    thread_depth_ -= ir::is_thread_kind((*it)->for_kind) ? 1 : 0;
    ranges_.erase((*it)->var.get());
  }
  for (int i = 0; i < opened; ++i) {
    close();
  }
}

// A store outside the loops bound to some launched index runs in every thread (block) along it:
// only index 0 writes shared or global memory, so read-modify-writes are not repeated.
std::string KernelPrinter::single_writer_guard(const ir::Buffer& buffer) const {
  if (buffer.scope() == ir::MemoryScope::Local) {
    return "";
  }
  std::vector<std::string> conditions;
  const char* axes[3] = {"x", "y", "z"};
  for (size_t d = 0; d < 3; ++d) {
    auto thread = static_cast<size_t>(ir::ForKind::ThreadX) + d;
    if (ctx_.block[d] > 1 && bound_[thread] == 0) {
      conditions.push_back("threadIdx." + std::string(axes[d]) + " == 0");
    }
  }
  for (size_t d = 0; d < 3 && buffer.scope() == ir::MemoryScope::Global; ++d) {
    auto block = static_cast<size_t>(ir::ForKind::BlockX) + d;
    if (ctx_.grid[d] > 1 && bound_[block] == 0) {
      conditions.push_back("blockIdx." + std::string(axes[d]) + " == 0");
    }
  }
  return join(conditions, " && ");
}

void KernelPrinter::store(const ir::Store* op) {
  TT_CHECK(op->indices.size() == 1) << "cuda codegen: store to '" << op->buffer.name()
                                    << "' is not flattened (lower the function fully first)";
  std::string guard = single_writer_guard(op->buffer);
  if (ctx_.pipelines.async_stores.count(op) != 0 && async_copy(op, guard)) {
    return;
  }
  if (op->value.type().is_vector()) {
    vector_store(op, guard);
    return;
  }
  std::vector<std::string> conditions;
  if (!guard.empty()) {
    conditions.push_back(guard);
  }
  if (op->predicate.defined()) {
    conditions.push_back(expr(op->predicate));
  }
  std::string target = buffer_name(op->buffer) + "[" + expr(op->indices[0]) + "]";
  std::string text = target + " = " + expr(op->value) + ";";
  if (conditions.empty()) {
    line(text);
    return;
  }
  open("if (" + join(conditions, " && ") + ")");
  line(text);
  close();
}

// Lanes in an unrolled loop; when the value reads the stored buffer, all lanes are read first
// (the IR's vector store semantics).
void KernelPrinter::vector_store(const ir::Store* op, const std::string& guard) {
  if (vector_memory_store(op, guard)) {
    return;  // float2/float4 accesses, proven aligned
  }
  const int lanes = op->value.type().lanes();
  const std::string lane_loop = "for (int " + std::string(kLane) + " = 0; " + kLane + " < " +
                                std::to_string(lanes) + "; ++" + kLane + ")";
  const std::string type =
      c_type(op->value.type().element_of(), "buffer '" + op->buffer.name() + "'");
  const std::string pred = op->predicate.defined() ? expr(op->predicate, kLane) : "";
  const std::string target = buffer_name(op->buffer) + "[" + expr(op->indices[0], kLane) + "]";
  const std::string value = expr(op->value, kLane);
  auto lane_statement = [&](const std::string& text) {
    if (pred.empty()) {
      line(text);
      return;
    }
    open("if (" + pred + ")");
    line(text);
    close();
  };
  if (!guard.empty()) {
    open("if (" + guard + ")");
  }
  if (reads_buffer(op->value, op->buffer)) {
    open("");
    line(type + " tt_vec[" + std::to_string(lanes) + "];");
    line("#pragma unroll");
    open(lane_loop);
    lane_statement("tt_vec[" + std::string(kLane) + "] = " + value + ";");
    close();
    line("#pragma unroll");
    open(lane_loop);
    lane_statement(target + " = tt_vec[" + kLane + "];");
    close();
    close();
  } else {
    line("#pragma unroll");
    open(lane_loop);
    lane_statement(target + " = " + value + ";");
    close();
  }
  if (!guard.empty()) {
    close();
  }
}

void KernelPrinter::allocate(const ir::Allocate* op, bool sole_in_scope) {
  const ir::Buffer& b = op->buffer;
  std::string name = names_.get(b.get(), b.name());
  std::string type = c_type(b.dtype(), "buffer '" + b.name() + "'");
  std::string size = std::to_string(b.num_elements());
  switch (b.scope()) {
    case ir::MemoryScope::Global:
      throw UserError("cuda codegen: buffer '" + b.name() +
                      "' is allocated in global memory inside kernel '" + ctx_.kernel_name +
                      "'; only the function's top level may allocate global scratch buffers");
    case ir::MemoryScope::Shared:
      // Shared by the threads of a block: one copy per thread-loop iteration cannot exist.
      TT_USER_CHECK(thread_depth_ == 0)
          << "cuda codegen: shared buffer '" << b.name() << "' of kernel '" << ctx_.kernel_name
          << "' is allocated inside a loop bound to threadIdx; compute it at a loop outside "
          << "the threadIdx loops";
      shared_.push_back(SharedArray{type, name, b.num_elements(),
                                    (b.num_elements() * b.dtype().bytes() + 15) / 16 * 16});
      shared_bytes_ += shared_.back().bytes;  // __align__(16)
      stmt(op->body, sole_in_scope);
      return;
    case ir::MemoryScope::Local:
      if (!sole_in_scope) {
        open("");
      }
      line("__align__(16) " + type + " " + name + "[" + size + "];");
      stmt(op->body, true);
      if (!sole_in_scope) {
        close();
      }
      return;
  }
}

void KernelPrinter::let(const ir::LetStmt* op, bool sole_in_scope) {
  TT_CHECK(op->value.type().is_scalar()) << "cuda codegen: a vector let '" << op->var.name() << "'";
  if (!sole_in_scope) {
    open("");
  }
  std::string name = names_.get(op->var.get(), op->var.name());
  std::string type = c_type(op->var.type(), "variable '" + op->var.name() + "'");
  line("const " + type + " " + name + " = " + expr(op->value) + ";");
  std::optional<ir::ConstBound> bound = ir::const_bound(op->value, ranges_);
  if (bound.has_value()) {
    ranges_[op->var.get()] = *bound;
  }
  stmt(op->body, true);
  ranges_.erase(op->var.get());
  if (!sole_in_scope) {
    close();
  }
}

}  // namespace tensortune::codegen::cuda
