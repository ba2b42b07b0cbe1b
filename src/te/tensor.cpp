// SPDX-License-Identifier: Apache-2.0
// Tensor element reads and the read tracker that links a body's Loads to their operations.
#include "tensortune/te/tensor.h"

#include "te/read_tracker.h"
#include "tensortune/support/error.h"

namespace tensortune::te {

namespace detail {

namespace {
// Constant-initialised: no static constructor runs for it.
thread_local ReadTracker* current_tracker = nullptr;
}  // namespace

ReadTracker::ReadTracker() : previous_(current_tracker) {
  current_tracker = this;
}

ReadTracker::~ReadTracker() {
  current_tracker = previous_;
}

void ReadTracker::note(const OperationRef& op) {
  ReadTracker* tracker = current_tracker;
  if (tracker == nullptr) {
    return;
  }
  for (const OperationRef& seen : tracker->ops_) {
    if (seen == op) {
      return;
    }
  }
  tracker->ops_.push_back(op);
}

OperationRef ReadTracker::find(const ir::Buffer& buffer) const {
  for (const OperationRef& op : ops_) {
    if (op->output.same_as(buffer)) {
      return op;
    }
  }
  return nullptr;
}

}  // namespace detail

std::vector<ir::IterVar> Operation::reduce_axes() const {
  if (const ir::Reduce* r = reduce()) {
    return r->axes;
  }
  return {};
}

ir::Expr Tensor::operator()(std::vector<ir::Expr> indices) const {
  TT_CHECK(defined()) << "reading an undefined tensor";
  TT_USER_CHECK(indices.size() == ndim())
      << "tensor '" << name() << "' has " << ndim() << " dimensions but is read with "
      << indices.size() << " indices";
  for (size_t d = 0; d < indices.size(); ++d) {
    TT_USER_CHECK(indices[d].defined())
        << "tensor '" << name() << "': index " << d << " is undefined";
    TT_USER_CHECK(indices[d].type() == ir::DataType::index())
        << "tensor '" << name() << "': index " << d << " has type " << indices[d].type().to_string()
        << ", expected int32";
  }
  detail::ReadTracker::note(op_);
  return ir::Load::make(op_->output, std::move(indices));
}

}  // namespace tensortune::te
