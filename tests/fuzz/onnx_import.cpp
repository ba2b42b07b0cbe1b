// SPDX-License-Identifier: Apache-2.0
// Fuzz target: bytes as a serialized ONNX ModelProto -> graph::import_onnx_bytes, attribute
// values and shape inference included.
#include "tensortune/graph/onnx_import.h"

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensortune;
  std::string bytes = fuzz::as_string(data, size);
  return fuzz::guarded([&] { graph::import_onnx_bytes(bytes, "fuzz.onnx"); });
}
