// SPDX-License-Identifier: Apache-2.0
// Tensor reads of an operation body: which buffers it loads, and redirecting
// the loads of one buffer to another (cache_read makes its readers load the
// cache).
#include "buffer_access.h"

#include "tensortune/ir/ir_mutator.h"
#include "tensortune/ir/ir_visitor.h"

#include <utility>

namespace tensortune::schedule {
namespace {

class LoadRedirector final : public ir::IRMutator {
 public:
  LoadRedirector(ir::Buffer from, ir::Buffer to, IndexMap map)
      : from_(std::move(from)), to_(std::move(to)), map_(std::move(map)) {}

 protected:
  using ir::IRMutator::visit;
  ir::Expr visit(const ir::Load* op, const ir::Expr& e) override {
    ir::Expr mutated = ir::IRMutator::visit(op, e);
    const auto* load = mutated.as<ir::Load>();
    if (load == nullptr || !load->buffer.same_as(from_)) {
      return mutated;
    }
    return ir::Load::make(to_, map_ ? map_(load->indices) : load->indices, load->predicate);
  }

 private:
  ir::Buffer from_, to_;
  IndexMap map_;
};

}  // namespace

bool reads_buffer(const te::Operation& op, const ir::Buffer& buffer) {
  bool found = false;
  ir::post_order_visit(op.body, [&](const ir::Expr& e) {
    const auto* load = e.as<ir::Load>();
    if (load != nullptr && load->buffer.same_as(buffer)) {
      found = true;
    }
  });
  return found;
}

std::vector<ir::Buffer> buffers_read(const te::Operation& op) {
  std::vector<ir::Buffer> result;
  ir::post_order_visit(op.body, [&](const ir::Expr& e) {
    const auto* load = e.as<ir::Load>();
    if (load == nullptr) {
      return;
    }
    for (const ir::Buffer& b : result) {
      if (b.same_as(load->buffer)) {
        return;
      }
    }
    result.push_back(load->buffer);
  });
  return result;
}

ir::Expr redirect_loads(const ir::Expr& e,
                        const ir::Buffer& from,
                        const ir::Buffer& to,
                        const IndexMap& map) {
  LoadRedirector redirector(from, to, map);
  return redirector.mutate(e);
}

}  // namespace tensortune::schedule
