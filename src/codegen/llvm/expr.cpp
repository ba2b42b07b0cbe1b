// SPDX-License-Identifier: Apache-2.0
// Expressions -> LLVM values: arithmetic with floor Div/Mod, comparisons, select, casts, math
// intrinsics (LLVM intrinsics where they exist, libm otherwise), ramps and broadcasts.
#include "codegen/llvm/internal.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/ir/ops.h"

#include <llvm/IR/Intrinsics.h>

namespace tensortune::codegen::detail {
namespace {

/// A scalar or splat constant `value` of LLVM type `type`.
llvm::Value* constant_like(llvm::Type* type, int64_t value) {
  return llvm::ConstantInt::get(type, static_cast<uint64_t>(value), true);
}

bool contains_load(const ir::Expr& e) {
  bool found = false;
  ir::post_order_visit(e, [&found](const ir::Expr& x) { found = found || x.as<ir::Load>(); });
  return found;
}

}  // namespace

llvm::Value* CodeGenLLVM::lookup_var(const ir::VarNode* v) const {
  auto it = state_.vars.find(v);
  TT_CHECK(it != state_.vars.end())
      << "codegen: variable '" << v->name << "' is not bound in '" << func_name_ << "'";
  return it->second;
}

llvm::Value* CodeGenLLVM::emit(const ir::Expr& e) {
  TT_CHECK(e.defined()) << "codegen: undefined expression in '" << func_name_ << "'";
  switch (e.kind()) {
    case ir::ExprKind::IntImm:
      return constant_like(llvm_type(e.type()), e.as<ir::IntImm>()->value);
    case ir::ExprKind::FloatImm:
      return llvm::ConstantFP::get(llvm_type(e.type()), e.as<ir::FloatImm>()->value);
    case ir::ExprKind::Var:
      return lookup_var(e.as<ir::VarNode>());
    case ir::ExprKind::Add:
      return binary<ir::Add>(e);
    case ir::ExprKind::Sub:
      return binary<ir::Sub>(e);
    case ir::ExprKind::Mul:
      return binary<ir::Mul>(e);
    case ir::ExprKind::Div:
      return binary<ir::Div>(e);
    case ir::ExprKind::Mod:
      return binary<ir::Mod>(e);
    case ir::ExprKind::Min:
      return binary<ir::Min>(e);
    case ir::ExprKind::Max:
      return binary<ir::Max>(e);
    case ir::ExprKind::Eq:
      return compare<ir::Eq>(e);
    case ir::ExprKind::Ne:
      return compare<ir::Ne>(e);
    case ir::ExprKind::Lt:
      return compare<ir::Lt>(e);
    case ir::ExprKind::Le:
      return compare<ir::Le>(e);
    case ir::ExprKind::Gt:
      return compare<ir::Gt>(e);
    case ir::ExprKind::Ge:
      return compare<ir::Ge>(e);
    case ir::ExprKind::And:
      return builder_.CreateAnd(emit(e.as<ir::And>()->a), emit(e.as<ir::And>()->b));
    case ir::ExprKind::Or:
      return builder_.CreateOr(emit(e.as<ir::Or>()->a), emit(e.as<ir::Or>()->b));
    case ir::ExprKind::Not:
      return builder_.CreateNot(emit(e.as<ir::Not>()->a));
    case ir::ExprKind::Select:
      return emit_select(e.as<ir::Select>());
    case ir::ExprKind::Cast:
      return emit_cast(e.as<ir::Cast>());
    case ir::ExprKind::Load:
      return emit_load(e.as<ir::Load>());
    case ir::ExprKind::Ramp:
      return emit_ramp(e.as<ir::Ramp>());
    case ir::ExprKind::Broadcast: {
      const auto* op = e.as<ir::Broadcast>();
      return builder_.CreateVectorSplat(static_cast<unsigned>(op->lanes), emit(op->value));
    }
    case ir::ExprKind::Call:
      return emit_call(e.as<ir::Call>());
    case ir::ExprKind::Reduce:
      TT_CHECK(false) << "codegen: a Reduce node survived lowering in '" << func_name_ << "'";
      return nullptr;
  }
  return nullptr;
}

llvm::Value* CodeGenLLVM::emit_arith(ir::ExprKind kind,
                                     ir::DataType t,
                                     const ir::Expr& ea,
                                     const ir::Expr& eb) {
  llvm::Value* a = emit(ea);
  llvm::Value* b = emit(eb);
  bool is_float = t.is_float();
  bool is_signed = t.is_int();
  if (kind == ir::ExprKind::Add) {
    return is_float ? builder_.CreateFAdd(a, b) : builder_.CreateAdd(a, b, "", false, is_signed);
  }
  if (kind == ir::ExprKind::Sub) {
    return is_float ? builder_.CreateFSub(a, b) : builder_.CreateSub(a, b, "", false, is_signed);
  }
  if (kind == ir::ExprKind::Mul) {
    return is_float ? builder_.CreateFMul(a, b) : builder_.CreateMul(a, b, "", false, is_signed);
  }
  if (kind == ir::ExprKind::Div) {
    return emit_div(a, b, eb, t);
  }
  if (kind == ir::ExprKind::Mod) {
    return emit_mod(a, b, eb, t);
  }
  // Float min/max propagate NaN, as ir::eval defines them: `a` when it wins or is NaN, else
  // `b` (NaN when b is). On ties (-0 vs +0) the result is b.
  TT_CHECK(kind == ir::ExprKind::Min || kind == ir::ExprKind::Max) << "codegen: not arithmetic";
  bool is_min = kind == ir::ExprKind::Min;
  llvm::Value* pick_a = nullptr;
  if (is_float) {
    llvm::Value* wins = is_min ? builder_.CreateFCmpOLT(a, b) : builder_.CreateFCmpOGT(a, b);
    pick_a = builder_.CreateOr(wins, builder_.CreateFCmpUNO(a, a));
  } else if (is_signed) {
    pick_a = is_min ? builder_.CreateICmpSLT(a, b) : builder_.CreateICmpSGT(a, b);
  } else {
    pick_a = is_min ? builder_.CreateICmpULT(a, b) : builder_.CreateICmpUGT(a, b);
  }
  return builder_.CreateSelect(pick_a, a, b);
}

llvm::Value* CodeGenLLVM::emit_div(llvm::Value* a,
                                   llvm::Value* b,
                                   const ir::Expr& divisor,
                                   ir::DataType t) {
  if (t.is_float()) {
    return builder_.CreateFDiv(a, b);
  }
  if (t.is_uint()) {
    return builder_.CreateUDiv(a, b);
  }
  // Floor division. A positive power-of-two constant is an arithmetic shift; another positive
  // constant needs only the remainder's sign; in general q - 1 when r != 0 and signs differ.
  const int64_t* c = ir::as_const_int(divisor);
  if (c != nullptr && *c > 0 && (*c & (*c - 1)) == 0) {
    int shift = 0;
    while ((int64_t{1} << shift) < *c) {
      ++shift;
    }
    return builder_.CreateAShr(a, constant_like(a->getType(), shift));
  }
  llvm::Value* q = builder_.CreateSDiv(a, b);
  llvm::Value* r = builder_.CreateSRem(a, b);
  llvm::Value* zero = constant_like(a->getType(), 0);
  llvm::Value* adjust = nullptr;
  if (c != nullptr && *c > 0) {
    adjust = builder_.CreateICmpSLT(r, zero);
  } else {
    llvm::Value* signs_differ = builder_.CreateICmpSLT(builder_.CreateXor(r, b), zero);
    adjust = builder_.CreateAnd(builder_.CreateICmpNE(r, zero), signs_differ);
  }
  return builder_.CreateSub(q, builder_.CreateZExt(adjust, a->getType()));
}

llvm::Value* CodeGenLLVM::emit_mod(llvm::Value* a,
                                   llvm::Value* b,
                                   const ir::Expr& divisor,
                                   ir::DataType t) {
  if (t.is_float()) {
    // Floor modulo, as for integers (and as ir::eval computes it): fmod, then add b when the
    // remainder is non-zero and its sign differs from b's.
    llvm::Value* r = builder_.CreateFRem(a, b);
    llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
    llvm::Value* signs_differ =
        builder_.CreateXor(builder_.CreateFCmpOLT(r, zero), builder_.CreateFCmpOLT(b, zero));
    llvm::Value* adjust = builder_.CreateAnd(builder_.CreateFCmpUNE(r, zero), signs_differ);
    return builder_.CreateFAdd(r, builder_.CreateSelect(adjust, b, zero));
  }
  if (t.is_uint()) {
    return builder_.CreateURem(a, b);
  }
  const int64_t* c = ir::as_const_int(divisor);
  if (c != nullptr && *c > 0 && (*c & (*c - 1)) == 0) {
    return builder_.CreateAnd(a, constant_like(a->getType(), *c - 1));
  }
  llvm::Value* r = builder_.CreateSRem(a, b);
  llvm::Value* zero = constant_like(a->getType(), 0);
  llvm::Value* adjust = nullptr;
  if (c != nullptr && *c > 0) {
    adjust = builder_.CreateICmpSLT(r, zero);
  } else {
    llvm::Value* signs_differ = builder_.CreateICmpSLT(builder_.CreateXor(r, b), zero);
    adjust = builder_.CreateAnd(builder_.CreateICmpNE(r, zero), signs_differ);
  }
  return builder_.CreateAdd(r, builder_.CreateSelect(adjust, b, zero));
}

llvm::Value* CodeGenLLVM::emit_compare(ir::ExprKind kind, const ir::Expr& ea, const ir::Expr& eb) {
  ir::DataType t = ea.type();
  llvm::Value* a = emit(ea);
  llvm::Value* b = emit(eb);
  using P = llvm::CmpInst::Predicate;
  bool f = t.is_float();
  bool s = t.is_int();
  // Float compares are ordered (false on NaN) except !=, which is true on NaN, as in C++.
  P p = f ? P::FCMP_OEQ : P::ICMP_EQ;
  if (kind == ir::ExprKind::Ne) {
    p = f ? P::FCMP_UNE : P::ICMP_NE;
  } else if (kind == ir::ExprKind::Lt) {
    p = f ? P::FCMP_OLT : s ? P::ICMP_SLT : P::ICMP_ULT;
  } else if (kind == ir::ExprKind::Le) {
    p = f ? P::FCMP_OLE : s ? P::ICMP_SLE : P::ICMP_ULE;
  } else if (kind == ir::ExprKind::Gt) {
    p = f ? P::FCMP_OGT : s ? P::ICMP_SGT : P::ICMP_UGT;
  } else if (kind == ir::ExprKind::Ge) {
    p = f ? P::FCMP_OGE : s ? P::ICMP_SGE : P::ICMP_UGE;
  } else {
    TT_CHECK(kind == ir::ExprKind::Eq) << "codegen: not a comparison";
  }
  return f ? builder_.CreateFCmp(p, a, b) : builder_.CreateICmp(p, a, b);
}

llvm::Value* CodeGenLLVM::emit_select(const ir::Select* op) {
  llvm::Value* cond = emit(op->condition);
  bool guarded = contains_load(op->true_value) || contains_load(op->false_value);
  if (!guarded) {
    return builder_.CreateSelect(cond, emit(op->true_value), emit(op->false_value));
  }
  if (op->condition.type().is_vector()) {
    // Each arm's loads read only the lanes that choose that arm (masked loads), so
    // `select(in_bounds, A[ramp], 0)` never touches memory outside A.
    llvm::Value* outer = active_lanes_;
    llvm::Value* not_cond = builder_.CreateNot(cond);
    active_lanes_ = outer != nullptr ? builder_.CreateAnd(outer, cond) : cond;
    llvm::Value* tv = emit(op->true_value);
    active_lanes_ = outer != nullptr ? builder_.CreateAnd(outer, not_cond) : not_cond;
    llvm::Value* fv = emit(op->false_value);
    active_lanes_ = outer;
    return builder_.CreateSelect(cond, tv, fv);
  }
  // A scalar select over loads only reads the chosen side, so `select(in_bounds, A[i], 0)`
  // never touches memory outside A.
  llvm::Function* fn = state_.function;
  auto* then_block = llvm::BasicBlock::Create(ctx_, "select.true", fn);
  auto* else_block = llvm::BasicBlock::Create(ctx_, "select.false", fn);
  auto* done = llvm::BasicBlock::Create(ctx_, "select.done", fn);
  builder_.CreateCondBr(cond, then_block, else_block);
  builder_.SetInsertPoint(then_block);
  llvm::Value* tv = emit(op->true_value);
  llvm::BasicBlock* then_end = builder_.GetInsertBlock();
  builder_.CreateBr(done);
  builder_.SetInsertPoint(else_block);
  llvm::Value* fv = emit(op->false_value);
  llvm::BasicBlock* else_end = builder_.GetInsertBlock();
  builder_.CreateBr(done);
  builder_.SetInsertPoint(done);
  llvm::PHINode* phi = builder_.CreatePHI(tv->getType(), 2);
  phi->addIncoming(tv, then_end);
  phi->addIncoming(fv, else_end);
  return phi;
}

llvm::Value* CodeGenLLVM::emit_cast(const ir::Cast* op) {
  ir::DataType from = op->value.type();
  ir::DataType to = op->type;
  llvm::Value* v = emit(op->value);
  llvm::Type* type = llvm_type(to);
  if (from == to) {
    return v;
  }
  if (to.is_bool()) {
    llvm::Value* zero = llvm::Constant::getNullValue(v->getType());
    return from.is_float() ? builder_.CreateFCmpUNE(v, zero) : builder_.CreateICmpNE(v, zero);
  }
  if (from.is_float() && to.is_float()) {
    return builder_.CreateFPCast(v, type);
  }
  if (from.is_float()) {
    return to.is_int() ? builder_.CreateFPToSI(v, type) : builder_.CreateFPToUI(v, type);
  }
  if (to.is_float()) {
    return from.is_int() ? builder_.CreateSIToFP(v, type) : builder_.CreateUIToFP(v, type);
  }
  return builder_.CreateIntCast(v, type, from.is_int());
}

llvm::Value* CodeGenLLVM::emit_call(const ir::Call* op) {
  llvm::Value* x = emit(op->args[0]);
  bool is_f32 = op->type.bits() == 32;
  if (llvm::Value* fast = emit_vector_math(builder_, op->op, x)) {
    return fast;
  }
  switch (op->op) {
    case ir::Intrinsic::Exp:
      return builder_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, x);
    case ir::Intrinsic::Log:
      return builder_.CreateUnaryIntrinsic(llvm::Intrinsic::log, x);
    case ir::Intrinsic::Sqrt:
      return builder_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
    case ir::Intrinsic::Floor:
      return builder_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
    case ir::Intrinsic::Ceil:
      return builder_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
    case ir::Intrinsic::Pow:
      return builder_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, emit(op->args[1]));
    case ir::Intrinsic::Abs:
      if (op->type.is_float()) {
        return builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
      }
      if (op->type.is_uint()) {
        return x;
      }
      return builder_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, builder_.getFalse());
    case ir::Intrinsic::Tanh:
      return emit_libm_call(is_f32 ? "tanhf" : "tanh", x);
    case ir::Intrinsic::Erf:
      return emit_libm_call(is_f32 ? "erff" : "erf", x);
  }
  return nullptr;
}

llvm::Value* CodeGenLLVM::emit_libm_call(const char* name, llvm::Value* x) {
  llvm::Type* scalar = x->getType()->getScalarType();
  llvm::FunctionCallee callee = module_.getOrInsertFunction(name, scalar, scalar);
  if (auto* fn = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    // Pure functions of their argument (no errno for these two): LLVM may hoist or drop them.
    fn->setDoesNotThrow();
    fn->setDoesNotAccessMemory();
    fn->setWillReturn();
  }
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (vector == nullptr) {
    return builder_.CreateCall(callee, {x});
  }
  llvm::Value* result = llvm::PoisonValue::get(vector);
  for (unsigned i = 0; i < vector->getNumElements(); ++i) {
    llvm::Value* lane = builder_.CreateCall(callee, {builder_.CreateExtractElement(x, i)});
    result = builder_.CreateInsertElement(result, lane, i);
  }
  return result;
}

llvm::Value* CodeGenLLVM::emit_ramp(const ir::Ramp* op) {
  auto lanes = static_cast<unsigned>(op->lanes);
  llvm::Value* base = builder_.CreateVectorSplat(lanes, emit(op->base));
  llvm::Value* stride = builder_.CreateVectorSplat(lanes, emit(op->stride));
  std::vector<llvm::Constant*> steps;
  llvm::Type* elem = llvm_type(op->type.element_of());
  for (unsigned i = 0; i < lanes; ++i) {
    steps.push_back(llvm::ConstantInt::get(elem, i));
  }
  bool nsw = op->type.is_int();
  llvm::Value* offsets =
      builder_.CreateMul(stride, llvm::ConstantVector::get(steps), "", false, nsw);
  return builder_.CreateAdd(base, offsets, "", false, nsw);
}

}  // namespace tensortune::codegen::detail
