// SPDX-License-Identifier: Apache-2.0
// Which thread-bound loops reduce across the threads of a block (TVM's allreduce): the analysis
// lowering also runs (ir/cross_thread.h), here on the final loop IR, with the generator's error.
#include "codegen/cuda/internal.h"
#include "tensortune/ir/cross_thread.h"
#include "tensortune/support/error.h"

namespace tensortune::codegen::cuda {

std::set<const ir::VarNode*> plan_cross_thread_reductions(const ir::Stmt& kernel,
                                                          const std::string& kernel_name) {
  std::set<const ir::VarNode*> found;
  for (const ir::CrossThreadReduction& r :
       ir::find_cross_thread_reductions(kernel, [&](const ir::For&loop, const std::string&why) {
         throw UserError("cuda codegen: cross-thread reduction over loop '" + loop.var.name() +
                         "' of kernel '" + kernel_name + "': the loop " + why);
       })) {
    found.insert(r.loop->var.get());
  }
  return found;
}

CrossThreadReduction cross_thread_update(const ir::For* loop) {
  std::optional<ir::CrossThreadReduction> r = ir::cross_thread_update(*loop);
  TT_CHECK(r.has_value()) << "cuda codegen: cross-thread reduction over loop '" << loop->var.name()
                          << "' lost its update";
  TT_CHECK(r->update->indices.size() == 1)
      << "cuda codegen: store to '" << r->update->buffer.name() << "' is not flattened";
  return CrossThreadReduction{r->update->buffer, r->update->indices[0], r->reducer};
}

}  // namespace tensortune::codegen::cuda
