// SPDX-License-Identifier: Apache-2.0
// Inline SVG charts for the HTML report: step lines (tuning curves) and histograms, with axes,
// ticks and a legend; no script, no external resource.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tensortune::cli {

struct Series {
  std::string label;
  std::string color;                              ///< any CSS colour, e.g. "#1f77b4"
  std::vector<std::pair<double, double>> points;  ///< (x, y), x increasing
};

struct ChartLabels {
  std::string title, x, y;
};

/// A step chart (each series holds its value until the next point and ends at its last one),
/// 640x260 px. The svg element carries class "chart" and data-x=`x_kind`; each series' path
/// carries data-last-x, its last point's x, so a test can check where each curve ends.
std::string step_chart(const std::vector<Series>& series,
                       const ChartLabels& labels,
                       const std::string& x_kind = "");
/// A histogram of `values` in `bins` equal bins, 640x220 px.
std::string histogram(const std::vector<double>& values,
                      int bins,
                      const ChartLabels& labels,
                      const std::string& color);
/// Escapes &, <, >, " for HTML text and attributes.
std::string html_escape(const std::string& text);

}  // namespace tensortune::cli
