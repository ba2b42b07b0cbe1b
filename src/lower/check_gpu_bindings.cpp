// SPDX-License-Identifier: Apache-2.0
// GPU binding checks: a CPU target has no block or thread indices; on a GPU each top-level nest
// is one kernel whose launch shape must be consistent and within the device's limits, and whose
// cross-thread reductions the CUDA generator can combine (ir/cross_thread.h).
#include "tensortune/lower/check_gpu_bindings.h"

#include "tensortune/ir/cross_thread.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <map>
#include <string>

namespace tensortune::lower {
namespace {

std::string describe(const ir::For* op, const LoopOrigins& origins) {
  auto it = origins.find(op->var.get());
  if (it == origins.end()) {
    return "loop '" + op->var.name() + "'";
  }
  return "axis '" + it->second.axis + "' of stage '" + it->second.stage + "'";
}

int64_t thread_limit(ir::ForKind k) {
  return k == ir::ForKind::ThreadZ ? 64 : 1024;
}

int64_t block_limit(ir::ForKind k) {
  return k == ir::ForKind::BlockX ? 2147483647 : 65535;
}

/// Walks one kernel: the extent of each bound index and the shared memory it allocates.
class KernelChecker : public ir::IRVisitor {
 public:
  KernelChecker(const target::Target& target, const LoopOrigins& origins)
      : target_(target), origins_(origins) {}

  using ir::IRVisitor::visit;

  void finish() const {
    int64_t threads = 1;
    for (const auto& [kind, bound] : extents_) {
      if (ir::is_thread_kind(kind)) {
        threads *= bound.first;
      }
    }
    if (threads > target_.max_threads_per_block) {
      throw ScheduleError("bind: a kernel uses " + std::to_string(threads) +
                          " threads per block but the target '" + target_.to_string() +
                          "' allows " + std::to_string(target_.max_threads_per_block));
    }
    if (shared_bytes_ > target_.max_shared_memory_bytes) {
      throw ScheduleError("lowering: a kernel allocates " + std::to_string(shared_bytes_) +
                          " bytes of shared memory but the target '" + target_.to_string() +
                          "' allows " + std::to_string(target_.max_shared_memory_bytes));
    }
  }

 protected:
  void visit(const ir::For* op) override {
    if (ir::is_gpu_kind(op->for_kind)) {
      check_bound(op);
    }
    ir::IRVisitor::visit(op);
  }

  void visit(const ir::Allocate* op) override {
    if (op->buffer.scope() == ir::MemoryScope::Shared) {
      shared_bytes_ += op->buffer.num_elements() * op->buffer.dtype().bytes();
    }
    ir::IRVisitor::visit(op);
  }

 private:
  void check_bound(const ir::For* op) {
    const char* index = ir::for_kind_name(op->for_kind);
    const int64_t* extent = ir::as_const_int(op->extent);
    if (extent == nullptr) {
      throw ScheduleError("bind: " + describe(op, origins_) + " is bound to " + index +
                          " but its extent is not constant");
    }
    int64_t limit =
        ir::is_thread_kind(op->for_kind) ? thread_limit(op->for_kind) : block_limit(op->for_kind);
    if (*extent > limit) {
      throw ScheduleError("bind: " + describe(op, origins_) + " is bound to " + index +
                          " with extent " + std::to_string(*extent) + ", more than the " +
                          std::to_string(limit) + " the device allows");
    }
    // The launch has the largest extent bound to each index; a loop with fewer iterations runs
    // on the first threads (or blocks) only, the others skip it (the CUDA generator's guard).
    auto it = extents_.find(op->for_kind);
    if (it == extents_.end() || it->second.first < *extent) {
      extents_[op->for_kind] = {*extent, describe(op, origins_)};
    }
  }

  const target::Target& target_;
  const LoopOrigins& origins_;
  std::map<ir::ForKind, std::pair<int64_t, std::string>> extents_;
  int64_t shared_bytes_ = 0;
};

/// Rejects any GPU binding on a CPU target.
class CpuChecker : public ir::IRVisitor {
 public:
  CpuChecker(const target::Target& target, const LoopOrigins& origins)
      : target_(target), origins_(origins) {}

  using ir::IRVisitor::visit;

 protected:
  void visit(const ir::For* op) override {
    if (ir::is_gpu_kind(op->for_kind)) {
      throw ScheduleError("bind: " + describe(op, origins_) + " is bound to " +
                          ir::for_kind_name(op->for_kind) + " but the target '" +
                          target_.to_string() + "' is a CPU");
    }
    ir::IRVisitor::visit(op);
  }

 private:
  const target::Target& target_;
  const LoopOrigins& origins_;
};

/// The top-level nests (kernels) of a function body: below its root allocations and sequences.
void collect_kernels(const ir::Stmt& s, std::vector<ir::Stmt>* kernels) {
  if (const auto* seq = s.as<ir::Seq>()) {
    for (const ir::Stmt& c : seq->stmts) {
      collect_kernels(c, kernels);
    }
    return;
  }
  if (const auto* alloc = s.as<ir::Allocate>();
      alloc != nullptr && alloc->buffer.scope() == ir::MemoryScope::Global) {
    collect_kernels(alloc->body, kernels);
    return;
  }
  kernels->push_back(s);
}

}  // namespace

void check_gpu_bindings(const ir::Stmt& body,
                        const target::Target& target,
                        const LoopOrigins& origins) {
  if (!target.is_gpu()) {
    CpuChecker checker(target, origins);
    checker.visit(body);
    return;
  }
  std::vector<ir::Stmt> kernels;
  collect_kernels(body, &kernels);
  for (const ir::Stmt& kernel : kernels) {
    KernelChecker checker(target, origins);
    checker.visit(kernel);
    checker.finish();
    ir::find_cross_thread_reductions(kernel, [&](const ir::For& loop, const std::string& why) {
      throw ScheduleError("bind: " + describe(&loop, origins) + " (" +
                          ir::for_kind_name(loop.for_kind) + ") " + why);
    });
  }
}

}  // namespace tensortune::lower
