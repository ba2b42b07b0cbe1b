// SPDX-License-Identifier: Apache-2.0
// What the model commands (tune-model, compile-model, run-model) share.
#pragma once

#include "tensortune/graph/graph.h"

#include <string>
#include <vector>

namespace tensortune::cli {

/// Imports an ONNX model and runs the standard graph passes; logs what they did unless `quiet`.
graph::Graph load_model(const std::string& path, bool quiet);

/// Removes and returns the leading positional argument (the model file or folder); "" when the
/// first argument asks for help. Throws UsageError when it is missing.
std::string take_model_path(std::vector<std::string>& args, const std::string& command);

}  // namespace tensortune::cli
