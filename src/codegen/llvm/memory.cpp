// SPDX-License-Identifier: Apache-2.0
// Buffer accesses and scratch storage: scalar, contiguous (Ramp stride 1), gathered/scattered and
// predicated (masked) loads and stores; Allocate as an entry-block alloca or tt_alloc/tt_free;
// one alias scope per buffer.
#include "codegen/llvm/internal.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"

#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/MDBuilder.h>

namespace tensortune::codegen::detail {
namespace {

/// Allocations up to this size live on the stack; larger ones come from tt_alloc.
constexpr int64_t kMaxStackBytes = 64 * 1024;
/// Alignment the code may assume of scratch memory (stack or tt_alloc).
constexpr uint64_t kScratchAlign = 64;
/// Alignment of stack scratch: a page, so a buffer's offset within a page, which decides which
/// loads and stores of a loop alias in the low 12 address bits (4K aliasing) and which cache sets
/// it maps to, is the same in every process and every thread. At 64 bytes it was whatever the
/// stack pointer happened to be (address randomisation, the caller's frame): a tuned matmul
/// with a 32 KiB accumulator on the stack ran 5.7 ms in the tuner's worker and 7.0-7.6 ms in
/// most other processes, and the tuner had picked it for its lucky placement.
constexpr uint64_t kStackScratchAlign = 4096;

/// Collects the buffers a function allocates, in program order.
class AllocationCollector : public ir::IRVisitor {
 public:
  using ir::IRVisitor::visit;
  std::vector<ir::Buffer> buffers;

 protected:
  void visit(const ir::Allocate* op) override {
    buffers.push_back(op->buffer);
    ir::IRVisitor::visit(op);
  }
};

/// LLVM 19's x86 backend lowers a masked load whose lane count is not a power of two wrongly
/// without AVX-512: on AVX2 the odd lane was read whatever its mask bit (a 3x3 conv's 9-wide padded
/// rows took the next row's first element for their right border). Such masked loads and stores
/// are widened to the next power of two, the extra lanes masked off.
unsigned masked_width(unsigned lanes) {
  unsigned wide = 1;
  while (wide < lanes)
    wide <<= 1;
  return wide;
}

/// The first `lanes` elements of `v`, then elements of `fill` (a vector of v's type) up to `wide`.
llvm::Value* widen(
    llvm::IRBuilderBase& b, llvm::Value* v, llvm::Value* fill, unsigned lanes, unsigned wide) {
  std::vector<int> order(wide);
  for (unsigned i = 0; i < wide; ++i)
    order[i] = static_cast<int>(i < lanes ? i : lanes);
  return b.CreateShuffleVector(v, fill, order);
}

/// The stride-1 Ramp of a contiguous vector access, or nullptr.
const ir::Ramp* dense_ramp(const ir::Expr& index) {
  const auto* ramp = index.as<ir::Ramp>();
  return ramp != nullptr && ir::is_const_int(ramp->stride, 1) ? ramp : nullptr;
}

}  // namespace

void CodeGenLLVM::create_alias_scopes(const ir::LoweredFunc& func) {
  AllocationCollector allocs;
  allocs.visit(func.body);
  std::vector<ir::Buffer> all = func.params;
  all.insert(all.end(), allocs.buffers.begin(), allocs.buffers.end());
  llvm::MDBuilder md(ctx_);
  llvm::MDNode* domain = md.createAnonymousAliasScopeDomain(func.name);
  std::vector<llvm::Metadata*> scopes;
  for (const ir::Buffer& b : all) {
    scopes.push_back(md.createAnonymousAliasScope(domain, b.name()));
  }
  for (size_t i = 0; i < all.size(); ++i) {
    std::vector<llvm::Metadata*> others;
    for (size_t j = 0; j < all.size(); ++j) {
      if (j != i) {
        others.push_back(scopes[j]);
      }
    }
    llvm::MDNode* own = llvm::MDNode::get(ctx_, {scopes[i]});
    llvm::MDNode* noalias = others.empty() ? nullptr : llvm::MDNode::get(ctx_, others);
    scopes_.emplace(all[i].get(), std::make_pair(own, noalias));
  }
}

const BufferBinding& CodeGenLLVM::buffer(const ir::Buffer& b) const {
  auto it = state_.buffers.find(b.get());
  TT_CHECK(it != state_.buffers.end())
      << "codegen: buffer '" << b.name() << "' is neither a parameter of '" << func_name_
      << "' nor allocated around its use";
  return it->second;
}

llvm::Value* CodeGenLLVM::element_ptr(const BufferBinding& b,
                                      llvm::Type* elem,
                                      llvm::Value* index) {
  llvm::Value* wide = builder_.CreateSExt(index, index->getType()->getWithNewBitWidth(64));
  return builder_.CreateInBoundsGEP(elem, b.ptr, wide);
}

void CodeGenLLVM::annotate(llvm::Instruction* inst, const BufferBinding& b) {
  if (b.alias_scope != nullptr) {
    inst->setMetadata(llvm::LLVMContext::MD_alias_scope, b.alias_scope);
  }
  if (b.noalias != nullptr) {
    inst->setMetadata(llvm::LLVMContext::MD_noalias, b.noalias);
  }
}

llvm::Value* CodeGenLLVM::emit_load(const ir::Load* op) {
  TT_CHECK(op->indices.size() == 1) << "codegen: load of '" << op->buffer.name()
                                    << "' is not flattened (" << op->indices.size() << " indices)";
  const BufferBinding& b = buffer(op->buffer);
  ir::DataType elem_type = op->buffer.dtype();
  llvm::Type* elem = storage_type(elem_type);
  llvm::Align align(static_cast<uint64_t>(elem_type.bytes()));
  int lanes = op->type.lanes();
  const ir::Expr& index = op->indices[0];
  llvm::Value* mask = op->predicate.defined() ? emit(op->predicate) : nullptr;
  if (active_lanes_ != nullptr) {
    // Inside an arm of a vector select: read only for the lanes that choose this arm.
    auto* active_type = llvm::cast<llvm::FixedVectorType>(active_lanes_->getType());
    llvm::Value* extra = nullptr;
    if (lanes == static_cast<int>(active_type->getNumElements())) {
      extra = active_lanes_;
    } else if (lanes == 1) {
      extra = builder_.CreateOrReduce(active_lanes_);
    }
    if (extra != nullptr) {
      mask = mask != nullptr ? builder_.CreateAnd(mask, extra) : extra;
    }
  }
  llvm::Instruction* inst = nullptr;
  llvm::Value* value = nullptr;
  // One element at `ptr`; under the i1 `cond` a one-lane masked load that reads nothing (and
  // gives 0) when it is false.
  const auto scalar_load = [&](llvm::Value* ptr, llvm::Value* cond) -> llvm::Value* {
    if (cond == nullptr) {
      return inst = builder_.CreateAlignedLoad(elem, ptr, align);
    }
    auto* one = llvm::FixedVectorType::get(elem, 1);
    inst = builder_.CreateMaskedLoad(one, ptr, align, builder_.CreateVectorSplat(1, cond),
                                     llvm::Constant::getNullValue(one));
    return builder_.CreateExtractElement(inst, uint64_t{0});
  };
  if (lanes == 1) {
    value = scalar_load(element_ptr(b, elem, emit(index)), mask);
  } else if (const ir::Ramp* ramp = dense_ramp(index)) {
    auto* type = llvm::FixedVectorType::get(elem, static_cast<unsigned>(lanes));
    llvm::Value* ptr = element_ptr(b, elem, emit(ramp->base));
    if (mask == nullptr) {
      value = inst = builder_.CreateAlignedLoad(type, ptr, align);
    } else {
      const auto n = static_cast<unsigned>(lanes);
      const unsigned wide = masked_width(n);
      auto* wide_type = llvm::FixedVectorType::get(elem, wide);
      llvm::Value* wide_mask =
          wide == n ? mask
                    : widen(builder_, mask, llvm::Constant::getNullValue(mask->getType()), n, wide);
      value = inst = builder_.CreateMaskedLoad(wide_type, ptr, align, wide_mask,
                                               llvm::Constant::getNullValue(wide_type));
      if (wide != n)
        value = builder_.CreateShuffleVector(inst, llvm::createSequentialMask(0, n, 0));
    }
  } else if (const ir::Broadcast* same = index.as<ir::Broadcast>()) {
    // Every lane reads one element: one scalar load, splat. Under a mask (a guarded tile's
    // broadcast operand) it is read when any lane is active, nothing otherwise, and the inactive
    // lanes get the zeros a masked load gives them; a gather here made tails 10x slower.
    llvm::Value* scalar = scalar_load(element_ptr(b, elem, emit(same->value)),
                                      mask != nullptr ? builder_.CreateOrReduce(mask) : nullptr);
    value = builder_.CreateVectorSplat(static_cast<unsigned>(lanes), scalar);
    if (mask != nullptr) {
      value = builder_.CreateSelect(mask, value, llvm::Constant::getNullValue(value->getType()));
    }
  } else {
    auto* type = llvm::FixedVectorType::get(elem, static_cast<unsigned>(lanes));
    llvm::Value* ptrs = element_ptr(b, elem, emit(index));
    value = inst = builder_.CreateMaskedGather(type, ptrs, align, mask ? mask : all_true(lanes),
                                               llvm::Constant::getNullValue(type));
  }
  annotate(inst, b);
  if (elem_type.is_bool()) {
    value = builder_.CreateTrunc(value, llvm_type(op->type));
  }
  return value;
}

void CodeGenLLVM::emit_store(const ir::Store* op) {
  TT_CHECK(op->indices.size() == 1) << "codegen: store to '" << op->buffer.name()
                                    << "' is not flattened (" << op->indices.size() << " indices)";
  const ir::Expr& index = op->indices[0];
  int lanes = op->value.type().lanes();
  TT_CHECK(index.type().lanes() == lanes)
      << "codegen: store of " << lanes << " lanes to '" << op->buffer.name() << "' at a "
      << index.type().lanes() << "-lane index";
  const BufferBinding& b = buffer(op->buffer);
  ir::DataType elem_type = op->buffer.dtype();
  llvm::Type* elem = storage_type(elem_type);
  llvm::Align align(static_cast<uint64_t>(elem_type.bytes()));
  llvm::Value* value = emit(op->value);
  if (elem_type.is_bool()) {
    value = builder_.CreateZExt(value, storage_type(op->value.type()));
  }
  llvm::Value* mask = op->predicate.defined() ? emit(op->predicate) : nullptr;
  llvm::Instruction* inst = nullptr;
  if (lanes == 1) {
    llvm::Value* ptr = element_ptr(b, elem, emit(index));
    if (mask == nullptr) {
      inst = builder_.CreateAlignedStore(value, ptr, align);
    } else {
      inst = builder_.CreateMaskedStore(builder_.CreateVectorSplat(1, value), ptr, align,
                                        builder_.CreateVectorSplat(1, mask));
    }
  } else if (const ir::Ramp* ramp = dense_ramp(index)) {
    llvm::Value* ptr = element_ptr(b, elem, emit(ramp->base));
    if (mask == nullptr) {
      inst = builder_.CreateAlignedStore(value, ptr, align);
    } else {
      const auto n = static_cast<unsigned>(lanes);
      const unsigned wide = masked_width(n);
      if (wide != n) {
        value = widen(builder_, value, llvm::PoisonValue::get(value->getType()), n, wide);
        mask = widen(builder_, mask, llvm::Constant::getNullValue(mask->getType()), n, wide);
      }
      inst = builder_.CreateMaskedStore(value, ptr, align, mask);
    }
  } else {
    // Lanes that hit the same element are written in lane order (the last lane wins).
    llvm::Value* ptrs = element_ptr(b, elem, emit(index));
    inst = builder_.CreateMaskedScatter(value, ptrs, align, mask ? mask : all_true(lanes));
  }
  annotate(inst, b);
}

void CodeGenLLVM::emit_allocate(const ir::Allocate* op) {
  const ir::Buffer& buf = op->buffer;
  llvm::Type* elem = storage_type(buf.dtype());
  int64_t count = buf.num_elements();
  int64_t bytes = count * buf.dtype().bytes();
  BufferBinding binding;
  binding.align = kScratchAlign;
  auto scope = scopes_.find(buf.get());
  TT_CHECK(scope != scopes_.end()) << "codegen: no alias scope for '" << buf.name() << "'";
  binding.alias_scope = scope->second.first;
  binding.noalias = scope->second.second;
  llvm::CallInst* heap = nullptr;
  if (bytes <= kMaxStackBytes) {
    auto* array = llvm::ArrayType::get(elem, static_cast<uint64_t>(count));
    binding.ptr = entry_alloca(array, 1, kStackScratchAlign, buf.name().c_str());
    builder_.CreateLifetimeStart(binding.ptr, builder_.getInt64(static_cast<uint64_t>(bytes)));
  } else {
    heap = builder_.CreateCall(declare_runtime("tt_alloc"), {builder_.getInt64(bytes)}, buf.name());
    heap->addRetAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(kScratchAlign)));
    binding.ptr = heap;
  }
  bool inserted = state_.buffers.emplace(buf.get(), binding).second;
  TT_CHECK(inserted) << "codegen: buffer '" << buf.name() << "' is allocated twice";
  emit(op->body);
  state_.buffers.erase(buf.get());
  if (heap != nullptr) {
    builder_.CreateCall(declare_runtime("tt_free"), {heap});
  } else {
    builder_.CreateLifetimeEnd(binding.ptr, builder_.getInt64(static_cast<uint64_t>(bytes)));
  }
}

}  // namespace tensortune::codegen::detail
