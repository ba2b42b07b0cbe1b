// SPDX-License-Identifier: Apache-2.0
// Inline SVG step charts and histograms.
#include "svg_chart.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace tensortune::cli {

namespace {

constexpr double kLeft = 56, kRight = 16, kTop = 28, kBottom = 40;

/// About five round tick values covering [lo, hi].
std::vector<double> ticks(double lo, double hi) {
  const double span = hi > lo ? hi - lo : 1.0;
  const double raw = span / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  }
  std::vector<double> out;
  for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9 * span; v += step)
    out.push_back(v);
  return out;
}

std::string number(double v) {
  if (v != 0 && (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-2))
    return fmt::format("{:.2g}", v);
  return fmt::format("{:g}", std::round(v * 100) / 100);
}

struct Frame {
  double width, height, x0, x1, y0, y1;
  double px(double x) const {
    return kLeft + (x - x0) / (x1 > x0 ? x1 - x0 : 1) * (width - kLeft - kRight);
  }
  double py(double y) const {
    return height - kBottom - (y - y0) / (y1 > y0 ? y1 - y0 : 1) * (height - kTop - kBottom);
  }
};

/// The frame's axes, in an image `below` pixels taller than the frame (room for a legend).
std::string axes(const Frame& f, const ChartLabels& labels, double below = 0) {
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" "
      "role=\"img\" font-family=\"sans-serif\" font-size=\"11\">"
      "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>"
      "<text x=\"{2}\" y=\"16\" font-size=\"13\" font-weight=\"bold\">{3}</text>",
      f.width, f.height + below, kLeft, html_escape(labels.title));
  for (double t : ticks(f.y0, f.y1)) {
    s += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#e5e5e5\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>",
        kLeft, f.width - kRight, f.py(t), kLeft - 4, f.py(t) + 4, number(t));
  }
  for (double t : ticks(f.x0, f.x1)) {
    s += fmt::format("<text x=\"{0:.1f}\" y=\"{1}\" text-anchor=\"middle\">{2}</text>", f.px(t),
                     f.height - kBottom + 14, number(t));
  }
  s += fmt::format(
      "<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#333\"/>"
      "<line x1=\"{0}\" x2=\"{3}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#333\"/>"
      "<text x=\"{4}\" y=\"{5}\" text-anchor=\"middle\">{6}</text>"
      "<text transform=\"translate(12,{7}) rotate(-90)\" text-anchor=\"middle\">{8}</text>",
      kLeft, kTop, f.height - kBottom, f.width - kRight, (kLeft + f.width - kRight) / 2,
      f.height - 6, html_escape(labels.x), (kTop + f.height - kBottom) / 2, html_escape(labels.y));
  return s;
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string step_chart(const std::vector<Series>& series,
                       const ChartLabels& labels,
                       const std::string& x_kind) {
  Frame f{640, 260, 0, 1, 0, 1};
  bool any = false;
  for (const Series& s : series) {
    for (const auto& [x, y] : s.points) {
      f.x1 = std::max(f.x1, x);
      f.y1 = std::max(f.y1, y * 1.05);
      any = true;
    }
  }
  // The legend goes under the chart, a row per curve: drawn inside it, long database paths ran
  // past the image's edge and over the curves.
  const double rows = static_cast<double>(std::count_if(
      series.begin(), series.end(), [](const Series& s) { return !s.points.empty(); }));
  std::string svg = axes(f, labels, rows * 14 + (rows > 0 ? 6 : 0));
  svg.insert(4, " class=\"chart\" data-x=\"" + html_escape(x_kind) + "\"");  // after "<svg"
  if (!any)
    svg += fmt::format("<text x=\"{}\" y=\"{}\">no data</text>", f.width / 2 - 20, f.height / 2);
  double legend_y = f.height + 2;
  for (const Series& s : series) {
    if (s.points.empty())
      continue;
    std::string path =
        fmt::format("M{:.1f},{:.1f}", f.px(s.points[0].first), f.py(s.points[0].second));
    for (size_t i = 1; i < s.points.size(); ++i) {
      path += fmt::format(" H{:.1f} V{:.1f}", f.px(s.points[i].first), f.py(s.points[i].second));
    }
    // Each curve ends at its own last point (its database's last trial), not at the widest one.
    svg += fmt::format(
        "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" data-last-x=\"{:g}\"/>",
        path, s.color, s.points.back().first);
    svg += fmt::format(
        "<rect x=\"{0}\" y=\"{1:.1f}\" width=\"10\" height=\"10\" fill=\"{2}\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\">{5}</text>",
        kLeft, legend_y, s.color, kLeft + 14, legend_y + 9, html_escape(s.label));
    legend_y += 14;
  }
  return svg + "</svg>";
}

std::string histogram(const std::vector<double>& values,
                      int bins,
                      const ChartLabels& labels,
                      const std::string& color) {
  Frame f{640, 220, 0, 1, 0, 1};
  if (!values.empty())
    f.x1 = *std::max_element(values.begin(), values.end()) * 1.0001;
  std::vector<int> counts(static_cast<size_t>(std::max(1, bins)), 0);
  for (double v : values) {
    const auto b = static_cast<size_t>(std::min<double>(bins - 1, std::floor(v / f.x1 * bins)));
    ++counts[b];
  }
  f.y1 = std::max(1, *std::max_element(counts.begin(), counts.end()));
  std::string svg = axes(f, labels);
  const double w = (f.px(f.x1) - f.px(0)) / bins;
  for (size_t b = 0; b < counts.size(); ++b) {
    if (counts[b] == 0)
      continue;
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"{}\"><title>{}</title></rect>",
        f.px(0) + w * static_cast<double>(b) + 0.5, f.py(counts[b]), std::max(1.0, w - 1),
        f.py(0) - f.py(counts[b]), color, counts[b]);
  }
  return svg + "</svg>";
}

}  // namespace tensortune::cli
