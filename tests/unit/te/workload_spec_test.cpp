// SPDX-License-Identifier: Apache-2.0
// Workload specs: the strict parser, the named workloads, their readable names and errors.
#include "common/errors.h"
#include "tensortune/support/error.h"
#include "tensortune/te/operators.h"

#include <gtest/gtest.h>

#include <set>

namespace tensortune::te {
namespace {

using test::user_error;

TEST(WorkloadSpec, ParsesNameAndParams) {
  WorkloadSpec s = parse_workload_spec("matmul:N=2,M=1,K=3");
  EXPECT_EQ(s.name, "matmul");
  EXPECT_EQ(s.params, (std::map<std::string, std::string>{{"M", "1"}, {"N", "2"}, {"K", "3"}}));
  EXPECT_EQ(s.to_string(), "matmul:K=3,M=1,N=2");
  EXPECT_EQ(parse_workload_spec(s.to_string()).params, s.params);
  EXPECT_TRUE(parse_workload_spec("softmax").params.empty());
  EXPECT_TRUE(parse_workload_spec("softmax:").params.empty());
  EXPECT_EQ(parse_workload_spec("softmax").to_string(), "softmax");
}

TEST(WorkloadSpec, RejectsMalformedTextQuotingIt) {
  struct Case {
    const char* text;
    const char* expected;
  };
  for (const Case& c :
       {Case{"matmul:M=1,,N=2", "empty item"}, Case{"matmul:M=1,", "empty item"},
        Case{"matmul:M1", "missing '=' in 'M1'"}, Case{"matmul:=4", "empty key in '=4'"},
        Case{"matmul:M=", "empty value in 'M='"}, Case{"matmul:M=1,M=2", "duplicate key 'M'"},
        Case{":M=1", "empty workload name"}}) {
    std::string msg = user_error([&] { parse_workload_spec(c.text); });
    EXPECT_NE(msg.find(c.expected), std::string::npos) << c.text << " -> " << msg;
    EXPECT_NE(msg.find(c.text), std::string::npos) << msg;
  }
}

TEST(MakeWorkload, BuildsReadableNames) {
  EXPECT_EQ(make_workload("matmul:M=1024,N=1024,K=1024").name(), "matmul_1024x1024x1024_float32");
  EXPECT_EQ(make_workload("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1").name(),
            "conv2d_nchw_1x64x56x56_64x3x3_s1p1d1g1_float32");
  EXPECT_EQ(make_workload("conv2d:N=1,C=8,H=9,W=9,K=4,R=3,S=3,stride=2,groups=2,layout=NHWC,"
                          "dtype=int32")
                .name(),
            "conv2d_nhwc_1x8x9x9_4x3x3_s2p0d1g2_int32");
  EXPECT_EQ(make_workload("matmul:M=8,N=4,K=2,constant_b=1").name(), "matmul_8x4x2_constb_float32");
  EXPECT_EQ(make_workload("matmul:M=8,N=4,K=2,constant_b=1").constant_inputs(),
            (std::vector<bool>{false, true}));
  EXPECT_NE(make_workload("matmul:M=8,N=4,K=2,constant_b=1").key(),
            make_workload("matmul:M=8,N=4,K=2").key());
  EXPECT_EQ(make_workload("dense:M=8,N=4,K=2,bias=1,epilogue=gelu").name(),
            "dense_8x4x2_bias_gelu_float32");
  EXPECT_EQ(make_workload("pool2d:kind=avg,N=1,C=2,H=8,W=8,R=2,S=2,stride=2").name(),
            "pool2d_avg_1x2x8x8_2x2_s2p0d1_float32");
}

TEST(MakeWorkload, EveryNamedWorkloadBuildsWithSmallShapes) {
  std::map<std::string, std::string> params = {
      {"matmul", "M=4,N=5,K=6"},
      {"batch_matmul", "B=2,M=4,N=5,K=6,transpose_b=1"},
      {"dense", "M=4,N=5,K=6,bias=1,epilogue=relu"},
      {"conv2d", "N=1,C=4,H=8,W=8,K=4,R=3,S=3,pad=1"},
      {"conv2d_winograd", "N=1,C=4,H=8,W=8,K=4,pad=1,tile=2"},
      {"depthwise_conv2d", "N=1,C=4,H=8,W=8,R=3,S=3,pad=1"},
      {"pool2d", "N=1,C=4,H=8,W=8,R=2,S=2,stride=2"},
      {"softmax", "M=4,N=5"},
      {"layer_norm", "M=4,N=5"},
      {"add", "M=4,N=5,broadcast=1"},
      {"mul", "M=4,N=5"},
      {"relu", "M=4,N=5"},
      {"gelu", "M=4,N=5"},
      {"transpose", "M=4,N=5"},
      {"pad", "N=1,C=2,H=4,W=4,pad=2"},
  };
  std::vector<std::string> names = workload_names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  ASSERT_EQ(names.size(), params.size());
  std::set<std::string> keys;
  for (const std::string& name : names) {
    ASSERT_EQ(params.count(name), 1u) << name;
    Workload w = make_workload(name + ":" + params[name]);
    EXPECT_EQ(w.name().rfind(name, 0), 0u) << w.name();
    EXPECT_FALSE(w.outputs().empty());
    EXPECT_TRUE(keys.insert(w.key()).second) << w.key();
    EXPECT_EQ(make_workload(name + ":" + params[name]).key(), w.key());
  }
}

TEST(MakeWorkload, Int32AppliesToEveryInput) {
  Workload w = make_workload("matmul:M=2,N=3,K=4,dtype=int32");
  for (const Tensor& t : w.inputs()) {
    EXPECT_EQ(t.dtype(), ir::DataType::int32());
  }
  EXPECT_EQ(w.outputs()[0].dtype(), ir::DataType::int32());
  std::string msg = user_error([] { make_workload("matmul:M=2,N=3,K=4,dtype=float16"); });
  EXPECT_NE(msg.find("key 'dtype' has bad value 'float16' (accepted: float32, int32)"),
            std::string::npos)
      << msg;
}

TEST(MakeWorkload, UnknownNameListsKnownNames) {
  std::string msg = user_error([] { make_workload("matmull:M=1"); });
  EXPECT_NE(msg.find("unknown workload 'matmull'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("batch_matmul, conv2d, conv2d_winograd, dense"), std::string::npos) << msg;
}

TEST(MakeWorkload, UnknownKeyListsAcceptedKeys) {
  std::string msg = user_error([] { make_workload("matmul:M=1,N=1,K=1,L=3"); });
  EXPECT_NE(
      msg.find(
          "workload 'matmul': unknown key 'L' (accepted: K, M, N, constant_b, dtype, transpose_b)"),
      std::string::npos)
      << msg;
}

TEST(MakeWorkload, RejectsMissingAndBadValues) {
  std::string msg = user_error([] { make_workload("matmul:M=1,N=1"); });
  EXPECT_NE(msg.find("workload 'matmul': missing key 'K'"), std::string::npos) << msg;
  for (const char* bad : {"12a", "-3", "+3", "99999999999", " 4"}) {
    msg = user_error([&] { make_workload(std::string("matmul:M=1,N=1,K=") + bad); });
    EXPECT_NE(msg.find(std::string("key 'K' has bad integer value '") + bad + "'"),
              std::string::npos)
        << msg;
  }
  msg = user_error([] { make_workload("matmul:M=0,N=1,K=1"); });
  EXPECT_NE(msg.find("key 'M' must be at least 1, got 0"), std::string::npos) << msg;
  msg = user_error([] { make_workload("conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3,groups=2"); });
  EXPECT_NE(msg.find("C=3 is not divisible by groups=2"), std::string::npos) << msg;
  msg = user_error([] { make_workload("dense:M=1,N=1,K=1,epilogue=tanh"); });
  EXPECT_NE(msg.find("(accepted: none, relu, gelu)"), std::string::npos) << msg;
  msg = user_error([] { make_workload("conv2d:N=1,C=4,H=8,W=8,K=4,R=3,S=3,layout=nchw"); });
  EXPECT_NE(msg.find("layout"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tensortune::te
