// SPDX-License-Identifier: Apache-2.0
// compute_inline: a read of an inlined stage becomes the stage's element expression with its axes
// bound to the read's indices (Halide's and TVM's inlining by substitution).
#include "tensortune/lower/inline_compute.h"

#include "tensortune/ir/ir_mutator.h"
#include "tensortune/support/error.h"

namespace tensortune::lower {
namespace {

class Inliner : public ir::IRMutator {
 public:
  explicit Inliner(const InlineMap& inlined) : inlined_(inlined) {}

 protected:
  using ir::IRMutator::visit;

  ir::Expr visit(const ir::Load* op, const ir::Expr& e) override {
    ir::Expr mutated = ir::IRMutator::visit(op, e);
    const auto* load = mutated.as<ir::Load>();
    auto it = inlined_.find(load->buffer.get());
    if (it == inlined_.end()) {
      return mutated;
    }
    const InlinedStage& stage = it->second;
    TT_CHECK(stage.axes.size() == load->indices.size())
        << "inline: '" << load->buffer.name() << "' read with " << load->indices.size()
        << " indices but defined over " << stage.axes.size() << " axes";
    TT_CHECK(!load->predicate.defined())
        << "inline: predicated read of '" << load->buffer.name() << "'";
    ir::VarMap map;
    for (size_t d = 0; d < stage.axes.size(); ++d) {
      map[stage.axes[d].get()] = load->indices[d];
    }
    return ir::substitute(stage.body, map);
  }

 private:
  const InlineMap& inlined_;
};

}  // namespace

ir::Expr inline_compute(const ir::Expr& e, const InlineMap& inlined) {
  if (inlined.empty()) {
    return e;
  }
  Inliner inliner(inlined);
  return inliner.mutate(e);
}

}  // namespace tensortune::lower
