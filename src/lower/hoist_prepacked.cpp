// SPDX-License-Identifier: Apache-2.0
// hoist_prepacked: root nests that only read constants move into the prepare function.
#include "tensortune/lower/hoist_prepacked.h"

#include "tensortune/ir/ir_visitor.h"
#include "tensortune/support/error.h"

#include <algorithm>
#include <set>
#include <utility>

namespace tensortune::lower {
namespace {

using BufferSet = std::set<const ir::BufferNode*>;

/// The buffers a nest reads and writes, allocations inside the nest left out.
class LeafAccesses : public ir::IRVisitor {
 public:
  using IRVisitor::visit;
  BufferSet reads, writes;

 protected:
  void visit(const ir::Load* op) override {
    if (inner_.count(op->buffer.get()) == 0)
      reads.insert(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    if (inner_.count(op->buffer.get()) == 0)
      writes.insert(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const ir::Allocate* op) override {
    inner_.insert(op->buffer.get());
    IRVisitor::visit(op);
  }

 private:
  BufferSet inner_;
};

/// The root structure: allocations and sequences down to the nests (leaves).
struct RootWalk {
  std::vector<ir::Stmt> leaves;
  std::vector<ir::Buffer> allocations;

  void collect(const ir::Stmt& s) {
    if (const auto* alloc = s.as<ir::Allocate>()) {
      if (alloc->buffer.scope() == ir::MemoryScope::Global) {
        allocations.push_back(alloc->buffer);
      }
      collect(alloc->body);
    } else if (const auto* seq = s.as<ir::Seq>()) {
      for (const ir::Stmt& child : seq->stmts)
        collect(child);
    } else {
      leaves.push_back(s);
    }
  }
};

/// `s` without the hoisted nests and the allocations of the hoisted buffers (undefined when
/// nothing is left).
ir::Stmt remove_hoisted(const ir::Stmt& s,
                        const std::set<const ir::StmtNode*>& nests,
                        const BufferSet& buffers) {
  if (const auto* alloc = s.as<ir::Allocate>()) {
    ir::Stmt body = remove_hoisted(alloc->body, nests, buffers);
    if (buffers.count(alloc->buffer.get()) != 0 || !body.defined())
      return body;
    return ir::Allocate::make(alloc->buffer, body);
  }
  if (const auto* seq = s.as<ir::Seq>()) {
    std::vector<ir::Stmt> kept;
    for (const ir::Stmt& child : seq->stmts) {
      ir::Stmt c = remove_hoisted(child, nests, buffers);
      if (c.defined())
        kept.push_back(c);
    }
    return kept.empty() ? ir::Stmt() : ir::Seq::make(std::move(kept));
  }
  return nests.count(s.get()) != 0 ? ir::Stmt() : s;
}

}  // namespace

ir::LoweredFunc hoist_prepacked(ir::LoweredFunc func, const std::vector<bool>& constant_inputs) {
  TT_CHECK(constant_inputs.size() <= func.num_inputs)
      << "hoist_prepacked: " << constant_inputs.size() << " constant flags for " << func.num_inputs
      << " inputs";
  BufferSet available;  // constants and the buffers of hoisted nests
  for (size_t i = 0; i < constant_inputs.size(); ++i) {
    if (constant_inputs[i])
      available.insert(func.params[i].get());
  }
  if (available.empty() || !func.prepacked.empty())
    return func;
  RootWalk walk;
  walk.collect(func.body);
  BufferSet root_buffers;
  for (const ir::Buffer& b : walk.allocations)
    root_buffers.insert(b.get());

  std::vector<LeafAccesses> access(walk.leaves.size());
  std::vector<bool> hoisted(walk.leaves.size(), false);
  for (size_t n = 0; n < walk.leaves.size(); ++n) {
    access[n].visit(walk.leaves[n]);
    bool hoist = !access[n].writes.empty();
    for (const ir::BufferNode* b : access[n].reads) {
      // A reduction reads back what it accumulates.
      hoist = hoist && (available.count(b) != 0 || access[n].writes.count(b) != 0);
    }
    for (const ir::BufferNode* b : access[n].writes) {
      hoist = hoist && root_buffers.count(b) != 0;
    }
    if (hoist) {
      hoisted[n] = true;
      available.insert(access[n].writes.begin(), access[n].writes.end());
    }
  }
  // A buffer a kept nest writes is not constant after all: neither are the nests that write it
  // or read it, nor (in turn) the buffers those write.
  BufferSet tainted;
  for (size_t n = 0; n < walk.leaves.size(); ++n) {
    if (!hoisted[n])
      tainted.insert(access[n].writes.begin(), access[n].writes.end());
  }
  auto touches = [&](const BufferSet& set) {
    return std::any_of(set.begin(), set.end(),
                       [&](const ir::BufferNode* b) { return tainted.count(b) != 0; });
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t n = 0; n < walk.leaves.size(); ++n) {
      if (hoisted[n] && (touches(access[n].writes) || touches(access[n].reads))) {
        hoisted[n] = false;
        tainted.insert(access[n].writes.begin(), access[n].writes.end());
        changed = true;
      }
    }
  }
  std::set<const ir::StmtNode*> hoisted_nests;
  BufferSet hoisted_buffers;
  std::vector<ir::Stmt> prepare;
  for (size_t n = 0; n < walk.leaves.size(); ++n) {
    if (!hoisted[n])
      continue;
    hoisted_nests.insert(walk.leaves[n].get());
    prepare.push_back(walk.leaves[n]);
    hoisted_buffers.insert(access[n].writes.begin(), access[n].writes.end());
  }
  if (prepare.empty())
    return func;
  ir::Stmt body = remove_hoisted(func.body, hoisted_nests, hoisted_buffers);
  if (!body.defined())
    return func;  // the whole function would be its prepare step
  func.body = body;
  func.prepare = ir::Seq::make(std::move(prepare));
  for (const ir::Buffer& b : walk.allocations) {
    if (hoisted_buffers.count(b.get()) != 0)
      func.prepacked.push_back(b);
  }
  return func;
}

}  // namespace tensortune::lower
