// SPDX-License-Identifier: Apache-2.0
// The HTML report: one self-contained page (inline CSS and SVG, no script, no network).
#include "peak.h"
#include "report.h"
#include "svg_chart.h"
#include "tensortune/codegen/host.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/error.h"
#include "tensortune/target/target.h"
#include "tensortune/te/operators.h"

#include <fmt/format.h>
#include <map>
#include <sstream>
#include <thread>

namespace tensortune::cli {

namespace {

const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
constexpr int kMaxLoopLines = 80;

const char* const kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:36px;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:4px 8px;"
    "text-align:left;vertical-align:top;font-size:13px}th{background:#f4f4f4}"
    "pre{font-size:11px;background:#f8f8f8;padding:6px;max-height:480px;overflow:auto;margin:0}"
    ".charts{display:flex;flex-wrap:wrap;gap:12px}.muted{color:#777}";

/// The FMA peak of this host for `target`, or 0 when the records were measured on another device.
double peak_for(const database::TargetKey& key, std::map<int, double>& cache) {
  try {
    const target::Target t = target::Target::parse(key.target);
    if (t.is_gpu() || codegen::device_fingerprint(t) != key.fingerprint) return 0;
    const int threads = t.cores > 0 ? t.cores : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    auto it = cache.find(threads);
    if (it == cache.end()) it = cache.emplace(threads, measure_fma_peak(threads, 50).gflops).first;
    return it->second;
  } catch (const UserError&) {
    return 0;
  }
}

/// The loop nest of a record's schedule (loops and annotations, before vectorizing/unrolling).
std::string loop_nest(const ReportEntry& e, const database::Record& r) {
  try {
    const te::Workload w = te::make_workload(e.workload.spec);
    if (w.key() != e.workload.key) return "(the operator library changed: the workload cannot be rebuilt)";
    lower::LowerOptions lo;
    lo.vectorize_and_unroll = false;
    const ir::LoweredFunc f = lower::lower(w, schedule::parse_schedule(r.schedule),
                                           target::Target::parse(e.target.target), lo);
    std::istringstream in(ir::to_string(f));
    std::string out, line;
    int n = 0;
    while (std::getline(in, line)) {
      if (++n > kMaxLoopLines) {
        out += "...\n";
        break;
      }
      out += line + "\n";
    }
    return out;
  } catch (const UserError& err) {
    return std::string("(does not replay: ") + err.what() + ")";
  }
}

std::string steps_text(const database::Record& r) {
  try {
    const schedule::Schedule s = schedule::parse_schedule(r.schedule);
    return s.steps.empty() ? "(no steps: the default schedule)" : schedule::to_string(s);
  } catch (const UserError& err) {
    return std::string("(unreadable steps: ") + err.what() + ")";
  }
}

Series best_curve(const ReportEntry& e, bool by_time, const std::string& label, const char* color) {
  Series s{label, color, {}};
  double best = 0, clock = 0;
  for (size_t i = 0; i < e.history.size(); ++i) {
    clock += e.history[i].wall_seconds;
    const double g = e.gflops(e.history[i]);
    if (g > best) {
      best = g;
      s.points.emplace_back(by_time ? clock : static_cast<double>(i + 1), best);
    }
  }
  return s;
}

std::string schedule_table(const ReportEntry& e, const std::vector<std::pair<std::string, const database::Record*>>& cols,
                           double peak) {
  std::string head = "<tr><th></th>", rate = "<tr><th>GFLOP/s</th>", steps = "<tr><th>steps</th>",
              loops = "<tr><th>loop nest</th>";
  for (const auto& [title, r] : cols) {
    head += "<th>" + html_escape(title) + (r ? fmt::format(" (record {})", r->id) : "") + "</th>";
    if (r == nullptr) {
      rate += "<td class=muted>not measured</td>";
      steps += "<td></td>";
      loops += "<td></td>";
      continue;
    }
    const double g = e.gflops(*r);
    rate += r->ok() ? fmt::format("<td>{:.1f}{}<br>{:.3f} ms</td>", g,
                                  peak > 0 ? fmt::format(" ({:.0f}% of peak)", 100 * g / peak) : "",
                                  r->median_seconds * 1e3)
                    : "<td>" + html_escape(r->status + ": " + r->error.substr(0, 200)) + "</td>";
    steps += "<td><pre>" + html_escape(steps_text(*r)) + "</pre></td>";
    loops += "<td><pre>" + html_escape(loop_nest(e, *r)) + "</pre></td>";
  }
  return "<table>" + head + "</tr>" + rate + "</tr>" + steps + "</tr>" + loops + "</tr></table>";
}

std::string entry_section(const ReportEntry& e, const std::vector<const ReportEntry*>& others,
                          const std::optional<database::Record>& chosen, std::map<int, double>& peaks) {
  const double peak = peak_for(e.target, peaks);
  std::string html = fmt::format("<h2>{}</h2><p><b>target</b> {}<br><span class=muted>{}</span><br>"
                                 "<b>key</b> {} &middot; <b>spec</b> {} &middot; {:.3g} GFLOP per call{}</p>",
                                 html_escape(e.workload.name), html_escape(e.target.target),
                                 html_escape(e.target.fingerprint), html_escape(e.workload.key),
                                 html_escape(e.workload.spec), e.workload.flop_count * 1e-9,
                                 peak > 0 ? fmt::format(" &middot; FMA peak here {:.0f} GFLOP/s", peak) : "");
  std::vector<Series> by_trial{best_curve(e, false, e.source + " · " + e.target.target, kColors[0])};
  std::vector<Series> by_time{best_curve(e, true, e.source + " · " + e.target.target, kColors[0])};
  for (size_t i = 0; i < others.size(); ++i) {
    const char* color = kColors[(i + 1) % 6];
    const std::string label = others[i]->source + " · " + others[i]->target.target;
    by_trial.push_back(best_curve(*others[i], false, label, color));
    by_time.push_back(best_curve(*others[i], true, label, color));
  }
  std::vector<double> rates;
  for (const database::Record& r : e.history) {
    if (r.ok()) rates.push_back(e.gflops(r));
  }
  html += "<div class=charts>" + step_chart(by_trial, {"best GFLOP/s by trial", "trials", "GFLOP/s"}) +
          step_chart(by_time, {"best GFLOP/s by tuning time", "seconds of measurement", "GFLOP/s"}) +
          histogram(rates, 30, {"measured candidates", "GFLOP/s", "candidates"}, kColors[0]) + "</div>";
  html += "<table><tr><th>status</th><th>records</th></tr>";
  for (const auto& [status, n] : e.by_status()) {
    html += fmt::format("<tr><td>{}</td><td>{}</td></tr>", html_escape(status), n);
  }
  html += "</table>";
  std::vector<std::pair<std::string, const database::Record*>> cols{{"default", e.default_record()},
                                                                     {"best", e.best()}};
  if (chosen && chosen->workload_key == e.workload.key && chosen->target == e.target) {
    cols.emplace_back("chosen", &*chosen);
  }
  for (const ReportEntry* o : others) cols.emplace_back("best of " + o->source + " · " + o->target.target, o->best());
  return html + schedule_table(e, cols, peak);
}

}  // namespace

std::string render_html(const std::vector<ReportEntry>& entries, const std::vector<ReportEntry>& compare,
                        const ReportOptions& options, const std::optional<database::Record>& chosen) {
  (void)options;
  std::string body;
  std::map<int, double> peaks;
  for (const ReportEntry& e : entries) {
    std::vector<const ReportEntry*> others;
    for (const ReportEntry& o : entries) {  // the same workload on another target
      if (&o != &e && o.workload.key == e.workload.key) others.push_back(&o);
    }
    for (const ReportEntry& o : compare) {
      if (o.workload.key == e.workload.key) others.push_back(&o);
    }
    body += entry_section(e, others, chosen, peaks);
  }
  if (entries.empty()) body = "<p>No records.</p>";
  std::string summary = "<table><tr><th>workload</th><th>target</th><th>trials</th><th>ok</th><th>best GFLOP/s</th></tr>";
  for (const ReportEntry& e : entries) {
    const database::Record* b = e.best();
    summary += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                           html_escape(e.workload.name), html_escape(e.target.target), e.history.size(),
                           e.ok(), b ? fmt::format("{:.1f}", e.gflops(*b)) : "-");
  }
  summary += "</table>";
  return "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>tensortune report</title><style>" +
         std::string(kStyle) + "</style></head><body><h1>tensortune tuning report</h1>" + summary + body +
         "</body></html>\n";
}

}  // namespace tensortune::cli
