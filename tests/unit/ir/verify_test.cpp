// SPDX-License-Identifier: Apache-2.0
// ir::verify accepts well-formed functions and names the first problem of ill-formed ones.
#include "tensortune/ir/verify.h"

#include "common/errors.h"
#include "ir_test_util.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"

#include <gtest/gtest.h>

#include <string>

namespace tensortune::ir {
namespace {
using test::internal_error;
using test_util::f32;

/// C[i, j] = sum_k A[i, k] * B[k, j] over 4x4 matrices, unflattened.
LoweredFunc matmul() {
  Buffer a("A", DataType::float32(), {4, 4});
  Buffer b("B", DataType::float32(), {4, 4});
  Buffer c("C", DataType::float32(), {4, 4});
  Var i("i");
  Var j("j");
  Var k("k");
  Stmt update =
      Store::make(c, Load::make(c, {i, j}) + Load::make(a, {i, k}) * Load::make(b, {k, j}), {i, j});
  Stmt body =
      Seq::make({Store::make(c, f32(0), {i, j}), For::make(k, 0, 4, ForKind::Serial, update)});
  LoweredFunc f;
  f.name = "matmul";
  f.params = {a, b, c};
  f.num_inputs = 2;
  f.body = For::make(i, 0, 4, ForKind::Parallel, For::make(j, 0, 4, ForKind::Serial, body));
  return f;
}

LoweredFunc wrap(const Buffer& out, Stmt body) {
  LoweredFunc f;
  f.name = "f";
  f.params = {out};
  f.num_inputs = 0;
  f.body = std::move(body);
  return f;
}

TEST(Verify, AcceptsAWellFormedFunction) {
  EXPECT_NO_THROW(verify(matmul()));
}

TEST(Verify, RejectsAVariableUsedOutsideItsScope) {
  Buffer c("C", DataType::float32(), {4});
  Var i("i");
  Var stray("stray");
  LoweredFunc f = wrap(c, For::make(i, 0, 4, ForKind::Serial, Store::make(c, f32(0), {stray})));
  EXPECT_NE(internal_error([&] { verify(f); }).find("variable 'stray' is used outside its scope"),
            std::string::npos);
}

TEST(Verify, RejectsALoopVariableRedefinedInsideItsScope) {
  Buffer c("C", DataType::float32(), {4});
  Var i("i");
  Stmt inner = For::make(i, 0, 4, ForKind::Serial, Store::make(c, f32(0), {i}));
  LoweredFunc f = wrap(c, For::make(i, 0, 4, ForKind::Serial, inner));
  EXPECT_NE(internal_error([&] { verify(f); }).find("'i' is defined twice"), std::string::npos);
}

TEST(Verify, AllowsSiblingScopesToReuseAVariable) {
  Buffer c("C", DataType::float32(), {4});
  Var i("i");
  Stmt loop = For::make(i, 0, 4, ForKind::Serial, Store::make(c, f32(0), {i}));
  EXPECT_NO_THROW(verify(wrap(c, Seq::make({loop, loop}))));
}

TEST(Verify, RejectsABufferThatIsNeitherAParameterNorAllocated) {
  Buffer c("C", DataType::float32(), {4});
  Buffer t("T", DataType::float32(), {4}, MemoryScope::Local);
  Var i("i");
  Stmt use = Store::make(c, Load::make(t, {i}), {i});
  LoweredFunc bad = wrap(c, For::make(i, 0, 4, ForKind::Serial, use));
  EXPECT_NE(internal_error([&] { verify(bad); }).find("'T': the buffer is neither a parameter"),
            std::string::npos);
  LoweredFunc good = wrap(c, Allocate::make(t, For::make(i, 0, 4, ForKind::Serial, use)));
  EXPECT_NO_THROW(verify(good));
}

TEST(Verify, ChecksIndexCountsAgainstRankOrFlattening) {
  Buffer c("C", DataType::float32(), {4, 4});
  Var i("i");
  LoweredFunc flat = wrap(c, For::make(i, 0, 16, ForKind::Serial, Store::make(c, f32(0), {i})));
  EXPECT_NE(internal_error([&] { verify(flat); }).find("has 1 indices, expected 2"),
            std::string::npos);
  EXPECT_NO_THROW(verify(flat, VerifyOptions{true, false}));
  EXPECT_NE(internal_error([&] {
              verify(matmul(), VerifyOptions{true, false});
            }).find("expected 1"),
            std::string::npos);
}

TEST(Verify, RejectsReduceUnlessAllowed) {
  Buffer a("A", DataType::float32(), {4});
  Buffer c("C", DataType::float32(), {1});
  Var k("k");
  Expr sum = Reduce::make(ReduceKind::Sum, Load::make(a, {k}), {IterVar{k, 4, IterKind::Reduce}});
  LoweredFunc f = wrap(c, Store::make(c, sum, {0}));
  f.params = {a, c};
  f.num_inputs = 1;
  EXPECT_NE(internal_error([&] { verify(f); }).find("a Reduce node remains"), std::string::npos);
  EXPECT_NO_THROW(verify(f, VerifyOptions{false, true}));
}

TEST(Verify, RejectsMoreInputsThanParameters) {
  Buffer c("C", DataType::float32(), {4});
  LoweredFunc f = wrap(c, Store::make(c, f32(0), {0}));
  f.num_inputs = 2;
  EXPECT_NE(internal_error([&] { verify(f); }).find("num_inputs"), std::string::npos);
}

TEST(Verify, RejectsAParameterListedTwice) {
  Buffer c("C", DataType::float32(), {4});
  LoweredFunc f = wrap(c, Store::make(c, f32(0), {0}));
  f.params = {c, c};
  EXPECT_NE(internal_error([&] { verify(f); }).find("is a parameter twice"), std::string::npos);
}

TEST(Verify, RejectsAReferenceToALetVariableAfterItsScope) {
  Buffer c("C", DataType::float32(), {4});
  Var x("x");
  Stmt let = LetStmt::make(x, 1, Store::make(c, f32(0), {x}));
  Stmt after = Store::make(c, f32(1), {x});
  EXPECT_NE(internal_error([&] {
              verify(wrap(c, Seq::make({let, after})));
            }).find("variable 'x' is used outside its scope"),
            std::string::npos);
}

}  // namespace
}  // namespace tensortune::ir
