// SPDX-License-Identifier: Apache-2.0
// What the model commands (tune-model, compile-model, run-model) share.
#pragma once

#include "tensortune/graph/graph.h"

#include <string>
#include <vector>

namespace tensortune::cli {

/// Imports an ONNX model and runs the standard graph passes; logs what they did unless `quiet`.
graph::Graph load_model(const std::string& path, bool quiet);

}  // namespace tensortune::cli
