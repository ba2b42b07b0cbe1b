// SPDX-License-Identifier: Apache-2.0
// Fuzz target: bytes -> graph::parse_npy (the parser behind read_npy). An array that parses has
// as many bytes as its shape needs and converts to floats.
#include "tensortune/graph/npy.h"

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensortune;
  std::string bytes = fuzz::as_string(data, size);
  return fuzz::guarded([&] {
    graph::NpyArray array = graph::parse_npy(bytes, "fuzz.npy");
    int64_t numel = array.numel();
    if (numel < 0 || static_cast<uint64_t>(numel) * array.dtype.bytes() != array.bytes.size()) {
      fuzz::finding("an array of " + std::to_string(numel) + " elements holds " +
                    std::to_string(array.bytes.size()) + " bytes");
    }
    if (array.to_floats().size() != static_cast<size_t>(numel)) {
      fuzz::finding("to_floats() gives the wrong element count");
    }
  });
}
