// SPDX-License-Identifier: Apache-2.0
// Fuzz target: workload spec text -> parse_workload_spec -> make_workload; a small workload is
// also lowered with the default schedule and interpreted against the naive reference.
#include "small_workload.h"
#include "tensortune/te/operators.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensortune;
  std::string text = fuzz::as_string(data, size);
  return fuzz::guarded([&] {
    te::WorkloadSpec spec = te::parse_workload_spec(text);
    // The canonical form must parse back to itself.
    if (te::parse_workload_spec(spec.to_string()).to_string() != spec.to_string()) {
      fuzz::finding("spec '" + spec.to_string() + "' does not round-trip");
    }
    te::Workload workload = te::make_workload(spec);
    workload.key();
    if (!fuzz::is_small(workload)) {
      return;
    }
    fuzz::check_against_reference(workload, schedule::apply_steps(workload, {}));
  });
}
