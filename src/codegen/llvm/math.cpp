// SPDX-License-Identifier: Apache-2.0
// exp, tanh and erf of float32 vectors as plain vector arithmetic. LLVM has no vector form of
// these without a vector math library: it splits a <16 x float> exp into 16 calls to expf, and
// the epilogues that use them (softmax, sigmoid, gelu) ran at the speed of those calls (a fused
// dense+bias+gelu 128x3072x768 spent more time in erff than in its GEMM). Scalars keep libm.
// exp: Cephes' expf (range reduction by ln 2 in two parts, a degree-5 polynomial, the exponent
// put in by integer arithmetic), about 1 ulp. tanh and erf: the odd/even rational
// approximations Eigen and TVM's fast_tanh / fast_erf use (clamped: beyond the clamp the float
// result is +-1). NaN in, NaN out; exp gives 0 below its normal range and inf above.
#include "codegen/llvm/internal.h"

#include <llvm/IR/Intrinsics.h>

#include <initializer_list>
#include <limits>

namespace tensortune::codegen::detail {
namespace {

class VectorMath {
 public:
  VectorMath(llvm::IRBuilder<>& b, llvm::Type* type) : b_(b), type_(type) {}

  llvm::Value* c(double v) const { return llvm::ConstantFP::get(type_, v); }
  llvm::Value* mul(llvm::Value* x, llvm::Value* y) const { return b_.CreateFMul(x, y); }
  llvm::Value* add(llvm::Value* x, llvm::Value* y) const { return b_.CreateFAdd(x, y); }
  llvm::Value* madd(llvm::Value* x, llvm::Value* y, llvm::Value* z) const {
    return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type_}, {x, y, z});
  }
  llvm::Value* clamp(llvm::Value* x, double lo, double hi) const {
    llvm::Value* upper = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, x, c(hi));
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, upper, c(lo));
  }
  /// Horner's scheme in `t`, highest coefficient first.
  llvm::Value* poly(llvm::Value* t, std::initializer_list<double> coefficients) const {
    const double* k = coefficients.begin();
    llvm::Value* p = c(*k);
    for (++k; k != coefficients.end(); ++k) {
      p = madd(p, t, c(*k));
    }
    return p;
  }
  /// `value`, or x itself where x is NaN.
  llvm::Value* keep_nan(llvm::Value* x, llvm::Value* value) const {
    return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, value);
  }

  llvm::Value* exp(llvm::Value* x) const {
    constexpr double kLo = -87.33654475;  // below, the result is subnormal: 0 here
    constexpr double kHi = 88.72283905;   // above, inf
    llvm::Value* xc = clamp(x, kLo, kHi);
    llvm::Value* n =
        b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, madd(xc, c(1.44269504088896341), c(0.5)));
    llvm::Value* r = madd(n, c(-0.693359375), xc);
    r = madd(n, c(2.12194440e-4), r);
    llvm::Value* p = poly(r, {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                              1.6666665459e-1, 5.0000001201e-1});
    p = madd(p, mul(r, r), add(r, c(1.0)));
    // 2^n for n in [-126, 128] as 2^h * 2^(n-h), h = n / 2: each factor's exponent field is
    // in range (2^128 alone would not be, and p * 2^128 is finite for p < 1).
    llvm::Type* ints = llvm::VectorType::getInteger(llvm::cast<llvm::VectorType>(type_));
    llvm::Value* ni = b_.CreateFPToSI(n, ints);
    llvm::Value* h = b_.CreateAShr(ni, llvm::ConstantInt::get(ints, 1));
    auto pow2 = [&](llvm::Value* k) {
      llvm::Value* field = b_.CreateAdd(k, llvm::ConstantInt::get(ints, 127));
      return b_.CreateBitCast(b_.CreateShl(field, llvm::ConstantInt::get(ints, 23)), type_);
    };
    llvm::Value* y = mul(mul(p, pow2(h)), pow2(b_.CreateSub(ni, h)));
    y = b_.CreateSelect(b_.CreateFCmpOLT(x, c(kLo)), c(0.0), y);
    y = b_.CreateSelect(b_.CreateFCmpOGT(x, c(kHi)), c(std::numeric_limits<double>::infinity()), y);
    return keep_nan(x, y);
  }

  llvm::Value* tanh(llvm::Value* x) const {
    llvm::Value* xc = clamp(x, -7.90531110763549805, 7.90531110763549805);
    llvm::Value* x2 = mul(xc, xc);
    llvm::Value* p =
        mul(xc, poly(x2, {-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
                          5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
                          4.89352455891786e-03}));
    llvm::Value* q = poly(x2, {1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
                               4.89352518554385e-03});
    llvm::Value* y = b_.CreateFDiv(p, q);
    // Tiny inputs: tanh(x) = x to float precision (and -0 stays -0).
    llvm::Value* tiny =
        b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), c(0.0004));
    return keep_nan(x, b_.CreateSelect(tiny, x, y));
  }

  llvm::Value* erf(llvm::Value* x) const {
    llvm::Value* xc = clamp(x, -4.0, 4.0);
    llvm::Value* x2 = mul(xc, xc);
    llvm::Value* p =
        mul(xc, poly(x2, {-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
                          -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                          -1.60960333262415e-02}));
    llvm::Value* q = poly(x2, {-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                               -7.37332916720468e-03, -1.42647390514189e-02});
    return keep_nan(x, b_.CreateFDiv(p, q));
  }

 private:
  llvm::IRBuilder<>& b_;
  llvm::Type* type_;
};

}  // namespace

llvm::Value* emit_vector_math(llvm::IRBuilder<>& builder, ir::Intrinsic op, llvm::Value* x) {
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (vector == nullptr || !vector->getElementType()->isFloatTy()) {
    return nullptr;
  }
  VectorMath m(builder, vector);
  switch (op) {
    case ir::Intrinsic::Exp:
      return m.exp(x);
    case ir::Intrinsic::Tanh:
      return m.tanh(x);
    case ir::Intrinsic::Erf:
      return m.erf(x);
    default:
      return nullptr;
  }
}

}  // namespace tensortune::codegen::detail
