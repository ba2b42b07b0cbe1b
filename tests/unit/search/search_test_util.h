// SPDX-License-Identifier: Apache-2.0
// Shared by the sketch-rule tests (CPU and GPU): tiny instances of every named workload, the
// output poisoning that makes unwritten elements show, and helpers to pick and inspect steps.
#pragma once

#include "common/reference.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/search/search_space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace tensortune::search {
/// The GPU target the sketch tests derive schedules for.
inline const target::Target& gpu() {
  static const target::Target kTarget = target::Target::parse("cuda -arch=sm_80");
  return kTarget;
}

/// The knob called `name`, or null.
inline const Knob* find_knob(const Sketch& sketch, const std::string& name) {
  for (const Knob& k : sketch.knobs) {
    if (k.name == name) {
      return &k;
    }
  }
  return nullptr;
}

inline bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// Tiny instances of every named workload (odd extents, so non-dividing splits are exercised).
inline const std::map<std::string, std::vector<std::string>>& tiny_specs() {
  static const std::map<std::string, std::vector<std::string>> kSpecs = {
      {"matmul",
       {"matmul:M=7,N=9,K=11", "matmul:M=8,N=16,K=4,transpose_b=1",
        "matmul:M=6,N=16,K=5,constant_b=1"}},
      {"batch_matmul", {"batch_matmul:B=2,M=5,N=6,K=3"}},
      {"dense", {"dense:M=5,N=6,K=7,bias=1,epilogue=gelu", "dense:M=4,N=8,K=3,epilogue=relu"}},
      {"conv2d",
       {"conv2d:N=1,C=2,H=5,W=6,K=3,R=3,S=3,pad=1",
        "conv2d:N=1,C=3,H=5,W=4,K=4,R=3,S=3,pad=1,"
        "stride=2,layout=NHWC",
        // 8 output channels, a width of 6: with 8 lanes (an unknown target's 256 bits), a sketch
        // vectorized over the output channels with weights blocked OIHW8o.
        "conv2d:N=1,C=2,H=4,W=6,K=8,R=3,S=3,pad=1"}},
      {"conv2d_winograd", {"conv2d_winograd:N=1,C=2,H=5,W=6,K=3,pad=1,tile=2"}},
      {"depthwise_conv2d", {"depthwise_conv2d:N=1,C=3,H=5,W=5,R=3,S=3,pad=1"}},
      {"pool2d",
       {"pool2d:kind=avg,N=1,C=2,H=5,W=6,R=3,S=3,pad=1",
        "pool2d:N=1,C=2,H=4,W=4,R=2,S=2,"
        "stride=2"}},
      {"softmax", {"softmax:M=3,N=10"}},
      {"layer_norm", {"layer_norm:M=3,N=10"}},
      {"add", {"add:M=3,N=17,broadcast=1"}},
      {"mul", {"mul:M=4,N=5"}},
      {"relu", {"relu:M=5,N=3"}},
      {"gelu", {"gelu:M=2,N=33"}},
      {"transpose", {"transpose:M=6,N=5"}},
      {"pad", {"pad:N=1,C=2,H=3,W=4,pad=1"}},
  };
  return kSpecs;
}

inline void poison_outputs(testing::HostBuffers& buffers) {
  for (size_t i = buffers.num_inputs(); i < buffers.size(); ++i) {
    for (size_t n = 0; n < buffers.num_elements(i); ++n) {
      if (buffers.dtype(i) == ir::DataType::float32()) {
        static_cast<float*>(buffers.data(i))[n] = std::numeric_limits<float>::quiet_NaN();
      } else if (buffers.dtype(i) == ir::DataType::int32()) {
        static_cast<int32_t*>(buffers.data(i))[n] = -123456789;
      }
    }
  }
}

/// The steps on one line.
inline std::string describe(const std::vector<schedule::Step>& steps) {
  std::string text;
  for (const schedule::Step& s : steps) {
    text += schedule::to_string(s) + "; ";
  }
  return text;
}

/// Every sketch's name, in order.
inline std::vector<std::string> sketch_names(const SearchSpace& space) {
  std::vector<std::string> names;
  for (const Sketch& s : space.sketches()) {
    names.push_back(s.name);
  }
  return names;
}

/// True when `steps` has `step`.
inline bool contains(const std::vector<schedule::Step>& steps, const schedule::Step& step) {
  return std::find(steps.begin(), steps.end(), step) != steps.end();
}

/// The configuration of sketch `sketch` with every knob at choice 0 except `knob` at `value`.
inline Config with_knob(const SearchSpace& space,
                        const std::string& sketch,
                        const std::string& knob,
                        const std::vector<int64_t>& value) {
  for (size_t s = 0; s < space.sketches().size(); ++s) {
    const Sketch& sk = space.sketches()[s];
    if (sk.name != sketch) {
      continue;
    }
    Config config{static_cast<int>(s), std::vector<int>(sk.knobs.size(), 0)};
    for (size_t k = 0; k < sk.knobs.size(); ++k) {
      auto it = std::find(sk.knobs[k].choices.begin(), sk.knobs[k].choices.end(), value);
      if (sk.knobs[k].name == knob && it != sk.knobs[k].choices.end()) {
        config.choice[k] = static_cast<int>(it - sk.knobs[k].choices.begin());
        return config;
      }
    }
  }
  ADD_FAILURE() << "no knob '" << knob << "' with that value in sketch '" << sketch << "'";
  return Config{0, std::vector<int>(space.sketches()[0].knobs.size(), 0)};
}

}  // namespace tensortune::search
