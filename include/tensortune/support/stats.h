// SPDX-License-Identifier: Apache-2.0
// Small statistics shared by the measurer and the model profiler.
#pragma once

#include <vector>

namespace tensortune::support {

/// The median of `values` (the mean of the two middle ones for an even count); 0 when empty.
double median(std::vector<double> values);

}  // namespace tensortune::support
