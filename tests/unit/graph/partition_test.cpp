// SPDX-License-Identifier: Apache-2.0
// Fusion, task extraction and the memory plan on hand-built graphs, each checked by running
// the partitioned model against a direct computation.
#include "tensortune/graph/partition.h"

#include "graph_builder.h"
#include "tensortune/driver/compile.h"
#include "tensortune/graph/executor.h"
#include "tensortune/graph/passes.h"
#include "tensortune/target/target.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tensortune::graph {
namespace {

using testing::Builder;
using testing::ints_attr;

std::vector<std::string> labels(const Partition& p) {
  std::vector<std::string> r;
  for (const Kernel& k : p.kernels)
    r.push_back(k.label);
  return r;
}

/// x -> conv -> relu -> conv -> add(., relu output) -> relu: a residual block.
Builder residual_block() {
  Builder b;
  b.input("x", {1, 4, 6, 6});
  b.constant("w1", {4, 4, 3, 3}, 0.2);
  b.constant("w2", {4, 4, 3, 3}, 0.2, 0.0, 9);
  b.constant("b2", {4}, 0.1);
  auto pads = ints_attr({1, 1, 1, 1});
  b.node("Conv", {"x", "w1"}, "c1", {1, 4, 6, 6}, {{"pads", pads}});
  b.node("Relu", {"c1"}, "r1", {1, 4, 6, 6});
  b.node("Conv", {"r1", "w2", "b2"}, "c2", {1, 4, 6, 6}, {{"pads", pads}});
  b.node("Add", {"c2", "r1"}, "s", {1, 4, 6, 6});
  b.output(b.node("Relu", {"s"}, "y", {1, 4, 6, 6}));
  return b;
}

TEST(GraphPartition, ResidualAddAndReluFuseIntoTheSecondConv) {
  Builder b = residual_block();
  Partition p = partition(b.g);
  EXPECT_EQ(labels(p), (std::vector<std::string>{"conv_relu", "conv_add_relu"}));
  EXPECT_EQ(p.kernels[1].inputs, (std::vector<std::string>{"r1", "w2", "b2"}));
  EXPECT_EQ(p.kernels[1].output, "y");
  te::Workload w = kernel_workload(b.g, p.kernels[1]);
  EXPECT_EQ(w.name(), "conv_add_relu_1x4x6x6_float32");
  EXPECT_EQ(w.inputs().size(), 3u);
}

TEST(GraphPartition, FusedKernelsComputeWhatTheNodesDo) {
  Builder b = residual_block();
  std::vector<float> x = testing::wave(144);
  driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
  std::vector<float> got = Executable::build(b.g, compiler).run({x}).at(0);
  // Reference: the same layers by loops.
  auto conv = [&](const std::vector<float>& in, const std::string& w, const float* bias) {
    const auto& wd = b.g.value(w).data->floats;
    std::vector<float> out(144);
    for (int k = 0; k < 4; ++k)
      for (int y = 0; y < 6; ++y)
        for (int xx = 0; xx < 6; ++xx) {
          double acc = bias ? bias[k] : 0.0;
          for (int c = 0; c < 4; ++c)
            for (int r = 0; r < 3; ++r)
              for (int q = 0; q < 3; ++q) {
                int iy = y + r - 1, ix = xx + q - 1;
                if (iy < 0 || iy >= 6 || ix < 0 || ix >= 6)
                  continue;
                acc += double(wd[((k * 4 + c) * 3 + r) * 3 + q]) * in[(c * 6 + iy) * 6 + ix];
              }
          out[(k * 6 + y) * 6 + xx] = static_cast<float>(acc);
        }
    return out;
  };
  std::vector<float> r1 = conv(x, "w1", nullptr);
  for (float& v : r1)
    v = std::max(v, 0.f);
  std::vector<float> c2 = conv(r1, "w2", b.g.value("b2").data->floats.data());
  for (size_t i = 0; i < c2.size(); ++i)
    EXPECT_NEAR(got[i], std::max(c2[i] + r1[i], 0.f), 1e-5);
}

TEST(GraphPartition, AValueReadTwiceIsNotFusedAway) {
  Builder b;
  b.input("x", {8});
  b.node("Softmax", {"x"}, "s", {8});
  b.node("Exp", {"s"}, "e", {8});  // s is read twice: Exp may not absorb it
  b.output(b.node("Add", {"e", "s"}, "y", {8}));
  Partition p = partition(b.g);
  EXPECT_EQ(labels(p), (std::vector<std::string>{"softmax", "exp_add"}));
  EXPECT_EQ(p.kernels[1].inputs, (std::vector<std::string>{"s"}));
}

TEST(GraphPartition, ViewsProduceNoKernelAndKeepTheirStorage) {
  Builder b;
  b.input("x", {2, 6});
  b.node("Relu", {"x"}, "r", {2, 6});
  b.ints("shape", {3, 4});
  b.node("Reshape", {"r", "shape"}, "v", {3, 4});
  b.output(b.node("Softmax", {"v"}, "y", {3, 4}));
  Partition p = partition(b.g);
  EXPECT_EQ(labels(p), (std::vector<std::string>{"relu", "softmax"}));
  EXPECT_EQ(p.storage_of("v"), "r");
  std::vector<float> x = testing::wave(12);
  driver::Compiler compiler(nullptr, target::Target::parse("llvm"));
  std::vector<float> got = Executable::build(b.g, compiler).run({x}).at(0);
  for (int row = 0; row < 3; ++row) {
    double sum = 0;
    for (int j = 0; j < 4; ++j)
      sum += std::exp(std::max(x[row * 4 + j], 0.f));
    for (int j = 0; j < 4; ++j) {
      EXPECT_NEAR(got[row * 4 + j], std::exp(std::max(x[row * 4 + j], 0.f)) / sum, 1e-6);
    }
  }
}

TEST(GraphPartition, RepeatedLayersAreOneTaskWithAWeight) {
  Builder b;
  b.input("x", {4, 16});
  b.constant("w1", {16, 16});
  b.constant("w2", {16, 16}, 0.3);
  b.constant("w3", {8, 16}, 0.3);
  Attribute tb = testing::int_attr(1);
  b.node("Gemm", {"x", "w1"}, "h1", {4, 16}, {{"transB", tb}});
  b.node("Relu", {"h1"}, "a1", {4, 16});
  b.node("Gemm", {"a1", "w2"}, "h2", {4, 16}, {{"transB", tb}});
  b.node("Relu", {"h2"}, "a2", {4, 16});
  b.output(b.node("Gemm", {"a2", "w3"}, "y", {4, 8}, {{"transB", tb}}));
  Partition p = partition(b.g);
  std::vector<Task> tasks = extract_tasks(b.g, p);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].workload.name(), "gemm_relu_4x16_float32");
  EXPECT_EQ(tasks[0].weight(), 2);
  EXPECT_EQ(tasks[0].kernels, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(tasks[1].workload.name(), "gemm_4x8_float32");
  EXPECT_EQ(tasks[1].weight(), 1);
}

TEST(GraphPartition, TheMemoryPlanReusesBuffersOfDeadValues) {
  Builder b;
  b.input("x", {64});
  std::string v = "x";
  for (int i = 0; i < 5; ++i)
    v = b.node("Softmax", {v}, "s" + std::to_string(i), {64});
  b.output(v);
  Partition p = partition(b.g);
  MemoryPlan plan = plan_memory(b.g, p);
  // s0..s3 are intermediates of 256 bytes; two alternate buffers suffice.
  EXPECT_EQ(plan.activation_bytes, 4 * 256);
  EXPECT_EQ(plan.arena_bytes, 2 * 256);
  EXPECT_NE(plan.offsets.at("s0"), plan.offsets.at("s1"));
  EXPECT_EQ(plan.offsets.at("s0"), plan.offsets.at("s2"));
}

}  // namespace
}  // namespace tensortune::graph
