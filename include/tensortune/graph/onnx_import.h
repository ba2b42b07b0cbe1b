// SPDX-License-Identifier: Apache-2.0
// ONNX import through ONNX's own protobuf classes, checker and shape inference: a ModelProto
// becomes a graph::Graph with every value's static shape known.
#pragma once

#include "tensortune/graph/graph.h"

#include <string>
#include <vector>

namespace tensortune::graph {

/// True when tensortune was built with libonnx (TT_WITH_ONNX).
bool onnx_available();

/// The ONNX op types the importer accepts, sorted.
std::vector<std::string> supported_onnx_ops();

/// Reads and imports an ONNX model file. UserError (naming the file) when it cannot be read or
/// parsed, when ONNX's checker rejects it, when any value has a dynamic or unknown shape, or
/// when nodes use unsupported ops: the message lists every unsupported node (name and op type),
/// not only the first. Constant nodes become constant values; initializers become constants;
/// graph inputs that are also initializers are constants.
Graph import_onnx(const std::string& path);

/// The same from the serialized bytes of a ModelProto; `what` names the source in messages.
Graph import_onnx_bytes(const std::string& bytes, const std::string& what);

}  // namespace tensortune::graph
