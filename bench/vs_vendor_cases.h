// SPDX-License-Identifier: Apache-2.0
// bench/vs_vendor's cases (issue 6's acceptance list) and the buffer sizes they imply.
#pragma once

#include "vs_vendor_report.h"

#include <cstdint>
#include <vector>

namespace tensortune::bench {

/// Every case, in report order: GEMMs, odd GEMMs, the 8 ResNet-18 conv layers (batch 1), the
/// fused dense+bias+gelu and conv+bias+relu, depthwise 3x3 and pointwise 1x1.
std::vector<Case> all_cases();

/// The element counts of the kernel's inputs, then of its output.
std::vector<int64_t> expected_sizes(const Case& c);

/// The longest reduction of the case (K; C/groups * R * S), for the output tolerance.
int64_t reduction_length(const Case& c);

}  // namespace tensortune::bench
