// SPDX-License-Identifier: Apache-2.0
// The HTML report: one self-contained page (inline CSS and SVG, no script, no network). Every
// time on it is a record's one time (database::Record::seconds), labelled confirmed or
// unconfirmed, and every % of peak divides by the FMA peak stored with the tuning run.
#include "peak.h"
#include "report.h"
#include "report_diff.h"
#include "svg_chart.h"
#include "tensortune/codegen/host.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/error.h"
#include "tensortune/target/target.h"
#include "tensortune/te/operators.h"

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

namespace tensortune::cli {

namespace {

const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
constexpr int kMaxLoopLines = 80;
constexpr size_t kTopK = 8;

// Nothing may widen the page: tables and code wrap (long lines break anywhere), and a table
// wider than the page scrolls inside its own box.
const char* const kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:36px;border-bottom:1px solid #ccc}"
    "h3{font-size:15px;margin:18px 0 6px}"
    ".box{max-width:100%;overflow-x:auto}"
    "table{border-collapse:collapse;margin:8px 0;max-width:100%}"
    "table.wide{table-layout:fixed;width:100%}"
    "td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top;"
    "font-size:13px;overflow-wrap:anywhere;word-break:break-word}th{background:#f4f4f4}"
    "pre,code,table.diff td{font-family:monospace;font-size:11px}"
    "pre{background:#f8f8f8;padding:6px;max-height:480px;overflow:auto;margin:0;"
    "white-space:pre-wrap;overflow-wrap:anywhere;max-width:100%}"
    "table.diff{table-layout:fixed;width:100%}table.diff td{white-space:pre-wrap;padding:1px 6px}"
    "table.diff td:first-child,table.diff th:first-child{width:18px}"
    "table.diff tr.d td{background:#fff3c4}"
    ".charts{display:flex;flex-wrap:wrap;gap:12px}.charts svg{max-width:100%;height:auto}"
    "p{overflow-wrap:anywhere}.muted{color:#777}.warn{color:#a40}";

/// The FMA peak of an entry: the one stored with its tuning run, else one measured now on this
/// host (0 when the records were measured on another device). `how` says which.
double peak_of(const ReportEntry& e, std::map<int, double>& cache, std::string* how) {
  if (e.peak_gflops > 0) {
    *how = fmt::format("FMA peak {:.0f} GFLOP/s (measured during tuning run {}, spread {:.1f}%)",
                       e.peak_gflops, e.peak_run, 100 * e.peak_spread);
    return e.peak_gflops;
  }
  try {
    const target::Target t = target::Target::parse(e.target.target);
    if (t.is_gpu() || codegen::device_fingerprint(t) != e.target.fingerprint)
      return 0;
    const int threads =
        t.cores > 0 ? t.cores : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    auto it = cache.find(threads);
    if (it == cache.end())
      it = cache.emplace(threads, measure_fma_peak(threads, 50).gflops).first;
    *how = fmt::format(
        "FMA peak {:.0f} GFLOP/s (measured now: no tuning run stored one; it moves with the "
        "machine's load)",
        it->second);
    return it->second;
  } catch (const UserError&) {
    return 0;
  }
}

/// The loop nest of a record's schedule (loops and annotations, before vectorizing/unrolling).
std::string loop_nest(const ReportEntry& e, const database::Record& r) {
  try {
    const te::Workload w = te::make_workload(e.workload.spec);
    if (w.key() != e.workload.key)
      return "(the operator library changed: the workload cannot be rebuilt)";
    lower::LowerOptions lo;
    lo.vectorize_and_unroll = false;
    const ir::LoweredFunc f = lower::lower(w, schedule::parse_schedule(r.schedule),
                                           target::Target::parse(e.target.target), lo);
    std::vector<std::string> lines = split_lines(ir::to_string(f));
    std::string out;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (static_cast<int>(i) >= kMaxLoopLines) {
        out += "...\n";
        break;
      }
      out += lines[i] + "\n";
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

/// The best GFLOP/s so far against trials (or tuning seconds): after each trial, the record that
/// `best` would name among the trials so far. Leads change by rank_seconds, the one scale that
/// orders confirmed and unconfirmed records alike, and each is drawn at its rank time scaled by
/// the final best's seconds() / rank_seconds. So the curve never falls (a confirmed lead, slower
/// side by side than an earlier lead's single measurement, would otherwise drop it) and it ends
/// at the best's time as the tables show it. The curve ends at the last trial.
Series best_curve(const ReportEntry& e, bool by_time, const std::string& label, const char* color) {
  Series s{label, color, {}};
  const database::Record* lead = nullptr;
  const database::Record* best = e.best();
  const double scale =
      best != nullptr && best->rank_seconds > 0 ? best->seconds() / best->rank_seconds : 1.0;
  auto rate = [&](const database::Record& r) {  // GFLOP/s scale inversely with time
    const double t = r.rank_seconds * scale;
    return t > 0 && r.seconds() > 0 ? e.gflops(r) * r.seconds() / t : e.gflops(r);
  };
  double clock = 0;
  for (size_t i = 0; i < e.history.size(); ++i) {
    const database::Record& r = e.history[i];
    clock += r.wall_seconds;
    const double x = by_time ? clock : static_cast<double>(i + 1);
    // Once the best is reached it leads to the end, as the tables name it.
    const bool frozen = lead != nullptr && lead == best;
    if (!frozen && r.may_be_best() &&
        (lead == nullptr || &r == best || r.rank_seconds < lead->rank_seconds)) {
      lead = &r;
      s.points.emplace_back(x, rate(r));
    }
    if (i + 1 == e.history.size() && (s.points.empty() || s.points.back().first != x))
      s.points.emplace_back(x, lead != nullptr ? rate(*lead) : 0.0);
  }
  return s;
}

std::string rate_cell(const ReportEntry& e, const database::Record& r, double peak) {
  if (!r.ok())
    return "<td>" + html_escape(r.status + ": " + r.error.substr(0, 200)) + "</td>";
  const double g = e.gflops(r);
  return fmt::format("<td>{:.1f}{}<br>{:.4f} ms, {}</td>", g,
                     peak > 0 ? fmt::format(" ({:.1f}% of peak)", 100 * g / peak) : "",
                     r.seconds() * 1e3, time_kind(r));
}

using Column = std::pair<std::string, const database::Record*>;

/// `peak_of_entry` gives each column's peak: its own database's, as in that database's summary.
std::string schedule_table(const std::vector<std::pair<const ReportEntry*, Column>>& cols,
                           const std::function<double(const ReportEntry&)>& peak_of_entry) {
  std::string head = "<tr><th style='width:90px'></th>", rate = "<tr><th>GFLOP/s</th>",
              steps = "<tr><th>steps</th>", loops = "<tr><th>loop nest</th>";
  for (const auto& [e, col] : cols) {
    const auto& [title, r] = col;
    head += "<th>" + html_escape(title) + (r ? fmt::format(" (record {})", r->id) : "") + "</th>";
    if (r == nullptr) {
      rate += "<td class=muted>not measured</td>";
      steps += "<td></td>";
      loops += "<td></td>";
      continue;
    }
    rate += rate_cell(*e, *r, peak_of_entry(*e));
    steps += "<td><pre>" + html_escape(steps_text(*r)) + "</pre></td>";
    loops += "<td><pre>" + html_escape(loop_nest(*e, *r)) + "</pre></td>";
  }
  return "<div class=box><table class=wide>" + head + "</tr>" + rate + "</tr>" + steps + "</tr>" +
         loops + "</tr></table></div>";
}

/// The K best records of each database: knobs, confirmed time, share of peak.
std::string top_table(const ReportEntry& e, double peak) {
  std::string html = fmt::format(
      "<h3>top {} of {}</h3><div class=box><table class=wide><tr><th style='width:40px'>#</th>"
      "<th style='width:70px'>record</th><th style='width:110px'>time (ms)</th>"
      "<th style='width:150px'>GFLOP/s</th><th>knobs</th></tr>",
      kTopK, html_escape(e.source));
  int rank = 0;
  for (const database::Record* r : e.top(kTopK)) {
    const double g = e.gflops(*r);
    const std::string spread = r->confirm_rounds > 0
                                   ? fmt::format(", {} rounds, middle spread {:.1f}%",
                                                 r->confirm_rounds, 100 * r->confirm_spread)
                                   : "";
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{:.4f}<br><span class=muted>{}{}</span></td>"
        "<td>{:.1f}{}</td><td><code>{}</code></td></tr>",
        ++rank, r->id, r->seconds() * 1e3, time_kind(*r), spread, g,
        peak > 0 ? fmt::format(" ({:.1f}% of peak)", 100 * g / peak) : "", html_escape(r->knobs));
  }
  return html + "</table></div>";
}

/// Error classes: records by status, one column per database.
std::string status_table(const std::vector<const ReportEntry*>& all) {
  std::map<std::string, std::vector<int64_t>> counts;
  for (size_t i = 0; i < all.size(); ++i) {
    for (const auto& [status, n] : all[i]->by_status()) {
      auto& row = counts[status];
      row.resize(all.size(), 0);
      row[i] = n;
    }
  }
  std::string html = "<h3>records by status</h3><div class=box><table><tr><th>status</th>";
  for (const ReportEntry* e : all)
    html += "<th>" + html_escape(e->source + " · " + e->target.target) + "</th>";
  html += "</tr>";
  for (auto& [status, row] : counts) {
    row.resize(all.size(), 0);
    html += "<tr><td>" + html_escape(status) + "</td>";
    for (int64_t n : row)
      html += fmt::format("<td>{}</td>", n);
    html += "</tr>";
  }
  return html + "</table></div>";
}

/// Two schedules side by side, line by line, the lines that differ marked.
std::string diff_section(const ReportEntry& le,
                         const Column& left,
                         const ReportEntry& re,
                         const Column& right) {
  const std::string lt = fmt::format("{} (record {})", left.first, left.second->id);
  const std::string rt = fmt::format("{} (record {})", right.first, right.second->id);
  const auto steps =
      diff_lines(split_lines(steps_text(*left.second)), split_lines(steps_text(*right.second)));
  const auto loops = diff_lines(split_lines(loop_nest(le, *left.second)),
                                split_lines(loop_nest(re, *right.second)));
  auto differing = [](const std::vector<DiffRow>& rows) {
    return std::count_if(rows.begin(), rows.end(), [](const DiffRow& r) { return r.differs; });
  };
  return fmt::format(
             "<h3>{} against {}</h3><p class=muted>{} of {} step lines and {} of {} "
             "loop-nest lines differ (marked &ne;)</p>",
             html_escape(lt), html_escape(rt), differing(steps), steps.size(), differing(loops),
             loops.size()) +
         "<div class=box>" + diff_table(lt, rt, steps) + diff_table(lt, rt, loops) + "</div>";
}

std::string entry_section(const ReportEntry& e,
                          const std::vector<const ReportEntry*>& others,
                          const std::optional<database::Record>& chosen,
                          std::map<int, double>& peaks) {
  std::string peak_how;
  const double peak = peak_of(e, peaks, &peak_how);
  std::string html = fmt::format(
      "<h2>{}</h2><p><b>target</b> {}<br><span class=muted>{}</span><br>"
      "<b>key</b> {} &middot; <b>spec</b> {} &middot; {:.3g} GFLOP per call{}</p>",
      html_escape(e.workload.name), html_escape(e.target.target), html_escape(e.target.fingerprint),
      html_escape(e.workload.key), html_escape(e.workload.spec), e.workload.flop_count * 1e-9,
      peak > 0 ? " &middot; " + html_escape(peak_how) : "");
  std::vector<const ReportEntry*> all{&e};
  all.insert(all.end(), others.begin(), others.end());
  std::vector<Series> by_trial, by_time;
  std::string histograms;
  for (size_t i = 0; i < all.size(); ++i) {
    const char* color = kColors[i % 6];
    const std::string label = all[i]->source + " · " + all[i]->target.target;
    by_trial.push_back(best_curve(*all[i], false, label, color));
    by_time.push_back(best_curve(*all[i], true, label, color));
    std::vector<double> rates;
    for (const database::Record& r : all[i]->history) {
      if (r.ok())
        rates.push_back(all[i]->gflops(r));
    }
    histograms +=
        histogram(rates, 30, {"measured candidates: " + label, "GFLOP/s", "candidates"}, color);
  }
  html += "<div class=charts>" +
          step_chart(by_trial, {"best GFLOP/s by trial", "trials", "GFLOP/s"}, "trials") +
          step_chart(by_time, {"best GFLOP/s by tuning time", "seconds of measurement", "GFLOP/s"},
                     "seconds") +
          histograms + "</div>";
  html += status_table(all);
  for (const ReportEntry* x : all)
    html += top_table(*x, x == &e ? peak : peak_of(*x, peaks, &peak_how));
  std::vector<std::pair<const ReportEntry*, Column>> cols{{&e, {"default", e.default_record()}},
                                                          {&e, {"best", e.best()}}};
  if (chosen && chosen->workload_key == e.workload.key && chosen->target == e.target)
    cols.push_back({&e, {"chosen", &*chosen}});
  for (const ReportEntry* o : others)
    cols.push_back({o, {"best of " + o->source + " · " + o->target.target, o->best()}});
  html += "<h3>schedules</h3>" + schedule_table(cols, [&](const ReportEntry& x) {
            std::string how;
            return &x == &e ? peak : peak_of(x, peaks, &how);
          });
  // The diff: the best against the chosen record, else against the best of the first other
  // database or target, else against the runner-up.
  if (e.best() != nullptr) {
    const Column left{"best", e.best()};
    const std::vector<const database::Record*> top = e.top(2);
    if (cols.size() > 2 && cols[2].second.second != nullptr)
      html += diff_section(e, left, *cols[2].first, cols[2].second);
    else if (top.size() > 1)
      html += diff_section(e, left, e, {"runner-up", top[1]});
  }
  return html;
}

std::string summary_row(const ReportEntry& e, std::map<int, double>& peaks) {
  std::string how;
  const double peak = peak_of(e, peaks, &how);
  const database::Record* b = e.best();
  return fmt::format(
      "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
      html_escape(e.workload.name), html_escape(e.target.target), html_escape(e.source),
      e.history.size(), e.ok(),
      b ? fmt::format("{:.1f}{}", e.gflops(*b),
                      peak > 0 ? fmt::format(" ({:.1f}% of peak)", 100 * e.gflops(*b) / peak) : "")
        : "-",
      b ? fmt::format("{:.4f} ms, record {}, {}", b->seconds() * 1e3, b->id, time_kind(*b)) : "-");
}

}  // namespace

std::string render_html(const std::vector<ReportEntry>& entries,
                        const std::vector<ReportEntry>& compare,
                        const ReportOptions& options,
                        const std::optional<database::Record>& chosen) {
  (void)options;
  std::string body;
  std::map<int, double> peaks;
  for (const ReportEntry& e : entries) {
    std::vector<const ReportEntry*> others;
    for (const ReportEntry& o : entries) {  // the same workload on another target
      if (&o != &e && o.workload.key == e.workload.key)
        others.push_back(&o);
    }
    for (const ReportEntry& o : compare) {
      if (o.workload.key == e.workload.key)
        others.push_back(&o);
    }
    body += entry_section(e, others, chosen, peaks);
  }
  if (entries.empty())
    body = "<p>No records.</p>";
  std::string summary =
      "<div class=box><table><tr><th>workload</th><th>target</th><th>database</th>"
      "<th>trials</th><th>ok</th><th>best GFLOP/s</th><th>best time</th></tr>";
  for (const ReportEntry& e : entries)
    summary += summary_row(e, peaks);
  for (const ReportEntry& e : compare)
    summary += summary_row(e, peaks);
  summary += "</table></div>";
  return "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><meta name=viewport "
         "content='width=device-width'><title>tensortune report</title><style>" +
         std::string(kStyle) +
         "</style></head><body><h1>tensortune tuning report</h1><p class=muted>A record's time is "
         "its confirmed side-by-side median when the end of a tuning job measured it again "
         "(confirmed), else its single stored measurement (unconfirmed). % of peak divides by "
         "the FMA peak measured during the tuning run.</p>" +
         summary + body + "</body></html>\n";
}

}  // namespace tensortune::cli
