// SPDX-License-Identifier: Apache-2.0
// Small statistics shared by the measurer and the model profiler.
#pragma once

#include <vector>

namespace tensortune::support {

/// The median of `values` (the mean of the two middle ones for an even count); 0 when empty.
double median(std::vector<double> values);

/// How far apart the middle half of `values` lies, relative to their median: (upper quartile -
/// lower quartile) / median, the quartiles taken as order statistics (of 5 values the 4th and the
/// 2nd, of 8 the 6th and the 3rd; of 2 or 3, the largest and the smallest). A minority of outliers,
/// which a median ignores, does not widen it. 0 for fewer than 2 values or a median <= 0.
double middle_spread(std::vector<double> values);

}  // namespace tensortune::support
