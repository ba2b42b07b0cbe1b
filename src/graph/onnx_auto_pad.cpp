// SPDX-License-Identifier: Apache-2.0
// auto_pad (SAME_UPPER, SAME_LOWER, VALID) of convolutions and pooling rewritten as explicit
// pads, from the shapes inference gave: models converted from TensorFlow pad this way, and the
// lowering reads explicit pads only. Compiled to nothing without TT_WITH_ONNX.
#ifdef TT_WITH_ONNX

#include "graph/onnx_convert.h"
#include "tensortune/support/error.h"

#include <algorithm>

namespace tensortune::graph::onnx_detail {

void resolve_auto_pad(Graph& graph) {
  for (Node& node : graph.nodes) {
    if (node.op != "Conv" && node.op != "MaxPool" && node.op != "AveragePool")
      continue;
    std::string mode = node.attr_string("auto_pad", "NOTSET");
    if (mode == "NOTSET")
      continue;
    TT_USER_CHECK(mode == "SAME_UPPER" || mode == "SAME_LOWER" || mode == "VALID")
        << node.describe() << ": auto_pad '" << mode << "' is not an ONNX mode";
    const std::vector<int64_t>& in = graph.value(node.inputs.at(0)).shape;
    const std::vector<int64_t>& out = graph.value(node.outputs.at(0)).shape;
    size_t rank = in.size() >= 2 ? in.size() - 2 : 0;
    std::vector<int64_t> kernel = node.attr_ints("kernel_shape", {});
    if (kernel.empty() && node.op == "Conv") {
      const std::vector<int64_t>& w = graph.value(node.inputs.at(1)).shape;
      kernel.assign(w.begin() + std::min<std::ptrdiff_t>(2, static_cast<std::ptrdiff_t>(w.size())),
                    w.end());
    }
    std::vector<int64_t> strides = node.attr_ints("strides", std::vector<int64_t>(rank, 1));
    std::vector<int64_t> dil = node.attr_ints("dilations", std::vector<int64_t>(rank, 1));
    TT_USER_CHECK(kernel.size() == rank && strides.size() == rank && dil.size() == rank &&
                  out.size() == in.size())
        << node.describe() << ": auto_pad with a window of rank " << kernel.size()
        << " over a rank-" << in.size() << " input";
    std::vector<int64_t> pads(2 * rank, 0);
    for (size_t d = 0; d < rank && mode != "VALID"; ++d) {
      int64_t total = std::max<int64_t>(
          0, (out[2 + d] - 1) * strides[d] + (kernel[d] - 1) * dil[d] + 1 - in[2 + d]);
      int64_t small = total / 2;
      pads[d] = mode == "SAME_UPPER" ? small : total - small;  // SAME_UPPER: the extra at the end
      pads[rank + d] = total - pads[d];
    }
    node.attrs["pads"] = Attribute{Attribute::Kind::Ints, 0, 0, "", pads, {}};
    node.attrs.erase("auto_pad");
  }
}

}  // namespace tensortune::graph::onnx_detail

#endif  // TT_WITH_ONNX
