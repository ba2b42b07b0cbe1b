// SPDX-License-Identifier: Apache-2.0
// Graph passes on hand-built graphs: batch-norm folding (checked numerically against a naive
// reference of the unfolded model), shape arithmetic folding, identities, dead nodes.
#include "tensortune/graph/passes.h"

#include "graph_builder.h"
#include "tensortune/driver/compile.h"
#include "tensortune/graph/executor.h"
#include "tensortune/support/error.h"
#include "tensortune/target/target.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tensortune::graph {
namespace {

using testing::Builder;
using testing::ints_attr;

std::vector<std::string> ops(const Graph& g) {
  std::vector<std::string> r;
  for (const Node& n : g.nodes)
    r.push_back(n.op);
  return r;
}

std::vector<float> run(const Graph& g, const std::vector<std::vector<float>>& inputs) {
  driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
  return Executable::build(g, compiler).run(inputs).at(0);
}

const std::vector<float>& data(const Graph& g, const std::string& v) {
  return g.value(v).data->floats;
}

/// conv(x, w, b, pad 1) then batch norm then relu, by loops, from the unfolded graph's constants.
std::vector<float> conv_bn_relu_reference(const Graph& g, const std::vector<float>& x) {
  const auto& w = data(g, "w");
  const auto& b = data(g, "b");
  std::vector<float> out(3 * 5 * 5);
  for (int k = 0; k < 3; ++k) {
    double s = data(g, "gamma")[k] / std::sqrt(double(data(g, "var")[k]) + 1e-5);
    for (int y = 0; y < 5; ++y) {
      for (int xx = 0; xx < 5; ++xx) {
        double acc = b[k];
        for (int c = 0; c < 2; ++c) {
          for (int r = 0; r < 3; ++r) {
            for (int q = 0; q < 3; ++q) {
              int iy = y + r - 1, ix = xx + q - 1;
              if (iy < 0 || iy >= 5 || ix < 0 || ix >= 5)
                continue;
              acc += double(w[((k * 2 + c) * 3 + r) * 3 + q]) * x[(c * 5 + iy) * 5 + ix];
            }
          }
        }
        double v = (acc - data(g, "mean")[k]) * s + data(g, "beta")[k];
        out[(k * 5 + y) * 5 + xx] = static_cast<float>(std::max(v, 0.0));
      }
    }
  }
  return out;
}

Builder conv_bn_relu() {
  Builder b;
  b.input("x", {1, 2, 5, 5});
  b.constant("w", {3, 2, 3, 3});
  b.constant("b", {3}, 0.3, 0.0, 7);
  b.constant("gamma", {3}, 0.4, 1.0, 2);
  b.constant("beta", {3}, 0.2, 0.0, 3);
  b.constant("mean", {3}, 0.1, 0.0, 4);
  b.constant("var", {3}, 0.3, 0.8, 5);
  b.node("Conv", {"x", "w", "b"}, "c", {1, 3, 5, 5}, {{"pads", ints_attr({1, 1, 1, 1})}});
  b.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, "n", {1, 3, 5, 5});
  b.output(b.node("Relu", {"n"}, "y", {1, 3, 5, 5}));
  return b;
}

TEST(GraphPasses, ConvBatchNormFoldsIntoTheWeights) {
  Builder b = conv_bn_relu();
  Graph g = b.g;
  PassReport r = optimize(g);
  EXPECT_EQ(r.folded_batch_norms, 1);
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Conv", "Relu"}));
  std::vector<float> x = testing::wave(50);
  std::vector<float> want = conv_bn_relu_reference(b.g, x);
  std::vector<float> got = run(g, {x});
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5) << i;
}

TEST(GraphPasses, ABatchNormWithoutAConvBecomesScaleAndShift) {
  Builder b = conv_bn_relu();
  b.output("c");  // the conv output is read twice now: no folding into the weights
  Graph g = b.g;
  PassReport r = optimize(g);
  EXPECT_EQ(r.folded_batch_norms, 0);
  EXPECT_EQ(r.batch_norms_to_affine, 1);
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Conv", "Mul", "Add", "Relu"}));
  std::vector<float> x = testing::wave(50);
  driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
  auto out = Executable::build(g, compiler).run({x});
  std::vector<float> want = conv_bn_relu_reference(b.g, x);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(out[0][i], want[i], 1e-5) << i;
}

TEST(GraphPasses, GemmWeightsStoredTransposedBecomeKByN) {
  // y = Gemm(x, w, b, transB=1) with w [5, 7] (PyTorch's Linear): the weight becomes [7, 5],
  // transB goes, and the result is the same as computed from the original weight by loops.
  Builder b;
  b.input("x", {3, 7});
  b.constant("w", {5, 7});
  b.constant("bias", {5}, 0.3, 0.0, 7);
  b.output(b.node("Gemm", {"x", "w", "bias"}, "y", {3, 5}, {{"transB", testing::int_attr(1)}}));
  Graph g = b.g;
  PassReport r = optimize(g);
  EXPECT_EQ(r.transposed_weights, 1);
  EXPECT_NE(r.to_string().find("stored 1 Gemm weight(s) as [K, N]"), std::string::npos)
      << r.to_string();
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].attr_int("transB", 0), 0);
  const Value& w = g.value(g.nodes[0].inputs[1]);
  EXPECT_EQ(w.shape, (std::vector<int64_t>{7, 5}));
  EXPECT_FALSE(g.has_value("w"));  // the [N, K] copy is gone
  EXPECT_EQ(w.data->floats[2 * 5 + 3], data(b.g, "w")[3 * 7 + 2]);
  std::vector<float> x = testing::wave(21);
  std::vector<float> got = run(g, {x});
  ASSERT_EQ(got.size(), 15u);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 5; ++j) {
      double want = data(b.g, "bias")[j];
      for (int k = 0; k < 7; ++k)
        want += double(x[i * 7 + k]) * data(b.g, "w")[j * 7 + k];
      EXPECT_NEAR(got[i * 5 + j], want, 1e-5) << i << "," << j;
    }
  }
}

TEST(GraphPasses, ShapeArithmeticFoldsAwayAndLeavesAView) {
  Builder b;
  b.input("x", {2, 3, 4});
  b.node("Shape", {"x"}, "s", {3}, {}, ir::DataType::int64());
  b.ints("zero", {0}, true);
  b.node("Gather", {"s", "zero"}, "n", {}, {}, ir::DataType::int64());
  b.ints("axes", {0});
  b.node("Unsqueeze", {"n", "axes"}, "n1", {1}, {}, ir::DataType::int64());
  b.ints("minus_one", {-1});
  b.node("Concat", {"n1", "minus_one"}, "shape", {2}, {{"axis", testing::int_attr(0)}},
         ir::DataType::int64());
  b.output(b.node("Reshape", {"x", "shape"}, "y", {2, 12}));
  Graph g = b.g;
  PassReport r = optimize(g);
  EXPECT_EQ(r.folded_constants, 4);
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Reshape"}));
  EXPECT_EQ(g.value("shape").data->ints, (std::vector<int64_t>{2, -1}));
  std::vector<float> x = testing::wave(24);
  EXPECT_EQ(run(g, {x}), x);  // a copy kernel: the output is a view of the input
}

TEST(GraphPasses, FloatConstantsFoldThroughAKernel) {
  Builder b;
  b.input("x", {2, 3});
  b.constant("w", {3, 2});
  b.node("Transpose", {"w"}, "wt", {2, 3});
  b.output(b.node("Add", {"x", "wt"}, "y", {2, 3}));
  Graph g = b.g;
  EXPECT_EQ(optimize(g).folded_constants, 1);
  ASSERT_TRUE(g.value("wt").is_constant());
  const auto& w = data(b.g, "w");
  const auto& wt = data(g, "wt");
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(wt[i * 3 + j], w[j * 2 + i]);
  }
}

TEST(GraphPasses, AConstantReadTwiceByOneNodeFolds) {
  // Mul(c, c): one value, both inputs (its fold kernel once took two inputs and read one).
  Builder b;
  b.input("x", {4});
  b.constant("c", {4}, 0.5, 1.0);
  b.node("Mul", {"c", "c"}, "cc", {4});
  b.output(b.node("Add", {"x", "cc"}, "y", {4}));
  Graph g = b.g;
  EXPECT_EQ(optimize(g).folded_constants, 1);
  ASSERT_TRUE(g.value("cc").is_constant());
  const auto& c = data(b.g, "c");
  const auto& cc = data(g, "cc");
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(cc[i], c[i] * c[i]) << i;
}

TEST(GraphPasses, IdentitiesAndDeadNodesAreRemoved) {
  Builder b;
  b.input("x", {4});
  b.node("Identity", {"x"}, "i", {4});
  b.node("Relu", {"i"}, "r", {4});
  b.node("Exp", {"i"}, "unused", {4});
  b.constant("only_for_unused", {4});
  b.node("Add", {"unused", "only_for_unused"}, "unused2", {4});
  b.output(b.node("Dropout", {"r"}, "y", {4}));
  Graph g = b.g;
  PassReport r = optimize(g);
  EXPECT_EQ(r.removed_identities, 1);  // the Dropout writes a graph output: kept
  EXPECT_EQ(r.removed_dead, 2);
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Relu", "Dropout"}));
  EXPECT_FALSE(g.has_value("only_for_unused"));
  EXPECT_EQ(g.nodes[0].inputs[0], "x");
}

TEST(GraphPasses, TrainingModeBatchNormIsAnError) {
  Builder b = conv_bn_relu();
  b.g.nodes[1].outputs.push_back("running_mean_out");
  Value v;
  v.name = "running_mean_out";
  v.shape = {3};
  b.g.set_value(v);
  b.output("running_mean_out");
  Graph g = b.g;
  try {
    optimize(g);
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("training mode"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tensortune::graph
