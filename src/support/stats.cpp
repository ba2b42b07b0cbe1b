// SPDX-License-Identifier: Apache-2.0
#include "tensortune/support/stats.h"

#include <algorithm>

namespace tensortune::support {

double median(std::vector<double> values) {
  if (values.empty()) {
    return 0;
  }
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

double middle_spread(std::vector<double> values) {
  const double m = median(values);
  if (values.size() < 2 || m <= 0) {
    return 0;
  }
  std::sort(values.begin(), values.end());
  const size_t k = values.size() / 4;
  return (values[values.size() - 1 - k] - values[k]) / m;
}

}  // namespace tensortune::support
