// SPDX-License-Identifier: Apache-2.0
// One record, one time: `tune`, `db best`, `db stats` and `report` show the same time and
// GFLOP/s for the best record. And the HTML report of a two-database comparison, rendered by
// headless Chromium at 1280 px: no horizontal overflow, every tuning curve ending at its
// database's last trial.
#include "cli_runner.h"
#include "tensortune/support/json.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sys/wait.h>
#include <utility>

namespace tensortune {
namespace {

using e2e::run_cli;
using e2e::temp_path;

constexpr const char* kReportWorkload = "matmul:M=32,N=32,K=32";

std::string report_tune_args(const std::string& db, int trials, uint64_t seed) {
  return std::string("tune --workload ") + kReportWorkload + " --target 'llvm -cores=1' --db '" +
         db + "' --trials " + std::to_string(trials) +
         " --batch 4 --tuner random --progress none " + "--seed " + std::to_string(seed);
}

/// `x` with `digits` decimals, as the text surfaces print it.
std::string fixed(double x, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", digits, x);
  return buffer;
}

support::Json json_of(const std::string& args) {
  const e2e::CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  return support::Json::parse(r.out);
}

TEST(RecordTime, TuneDbBestDbStatsAndReportShowTheSameTimeAndRate) {
  const std::string db = temp_path("one-time.db");
  const support::Json tuned = json_of(report_tune_args(db, 12, 0) + " --json");
  const support::Json& best = tuned.at("best");
  // Confirmed as a rule (an unconfirmed record that still ranks first joins a second
  // confirmation); whichever it is, every surface must say the same.
  const std::string kind = best.at("time").as_string();
  ASSERT_TRUE(kind == "confirmed" || kind == "unconfirmed") << kind;
  const int64_t id = best.at("record_id").as_int();
  const double seconds = best.at("seconds").as_double();
  const double gflops = best.at("gflops").as_double();
  if (kind == "confirmed") {
    EXPECT_GE(best.at("spread").as_double(), 0);
  }

  const support::Json db_best =
      json_of("db best --db '" + db + "' --workload " + kReportWorkload + " --k 1 --json")
          .at("records")
          .as_array()
          .at(0);
  EXPECT_EQ(db_best.at("id").as_int(), id);
  EXPECT_DOUBLE_EQ(db_best.at("seconds").as_double(), seconds);
  EXPECT_DOUBLE_EQ(db_best.at("gflops").as_double(), gflops);
  EXPECT_EQ(db_best.at("time").as_string(), kind);

  const support::Json stats =
      json_of("db stats --db '" + db + "' --json").at("workloads").as_array().at(0);
  EXPECT_EQ(stats.at("best_record_id").as_int(), id);
  EXPECT_DOUBLE_EQ(stats.at("best_seconds").as_double(), seconds);
  EXPECT_DOUBLE_EQ(stats.at("best_gflops").as_double(), gflops);

  const support::Json report =
      json_of("report --db '" + db + "' --json").at("workloads").as_array().at(0);
  EXPECT_EQ(report.at("best_record_id").as_int(), id);
  EXPECT_DOUBLE_EQ(report.at("best_seconds").as_double(), seconds);
  EXPECT_DOUBLE_EQ(report.at("best_gflops").as_double(), gflops);
  EXPECT_EQ(report.at("best_time").as_string(), kind);
  EXPECT_GT(report.at("peak_gflops").as_double(), 0);  // stored with the run

  // The text forms print that rate, labelled.
  const std::string rate = fixed(gflops, 1) + " GFLOP/s";
  const std::string text_report = run_cli("report --db '" + db + "'").out;
  EXPECT_NE(text_report.find(rate), std::string::npos) << text_report;
  EXPECT_NE(text_report.find("record " + std::to_string(id) + ", " + kind), std::string::npos)
      << text_report;
  const std::string text_stats = run_cli("db stats --db '" + db + "'").out;
  EXPECT_NE(text_stats.find(fixed(gflops, 1) + " GFLOP/s"), std::string::npos) << text_stats;
  EXPECT_NE(text_stats.find("record " + std::to_string(id) + ", " + kind), std::string::npos)
      << text_stats;
  const std::string text_best =
      run_cli("db best --db '" + db + "' --workload " + kReportWorkload + " --k 1").out;
  EXPECT_NE(text_best.find(fixed(seconds * 1e3, 4) + " ms"), std::string::npos) << text_best;
}

/// Runs tensortune with `args` in the folder `dir`; its exit status and standard output.
std::pair<int, std::string> run_in(const std::string& dir, const std::string& args) {
  const std::string out = temp_path("run-in.txt");
  const std::string command =
      "cd '" + dir + "' && '" + TT_TENSORTUNE_PATH + "' " + args + " >'" + out + "' 2>/dev/null";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, e2e::read_text(out)};
}

TEST(DefaultDatabase, EveryCommandTakingDbReadsTheOneTuneWrites) {
  const std::string dir = temp_path("default-db");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string workload = std::string(" --workload ") + kReportWorkload;
  ASSERT_EQ(run_in(dir, "tune" + workload +
                            " --target 'llvm -cores=1' --trials 4 --batch 4 --tuner random "
                            "--progress none --confirm 0")
                .first,
            0);
  ASSERT_TRUE(std::filesystem::exists(dir + "/tuning_logs/tensortune.db"));
  const auto stats = run_in(dir, "db stats --json");
  ASSERT_EQ(stats.first, 0);
  EXPECT_EQ(support::Json::parse(stats.second).at("records").as_int(), 4);
  const auto best = run_in(dir, "db best" + workload + " --k 1 --json");
  ASSERT_EQ(best.first, 0);
  const int64_t id =
      support::Json::parse(best.second).at("records").as_array().at(0).at("id").as_int();
  const auto report = run_in(dir, "report --json");
  ASSERT_EQ(report.first, 0);
  EXPECT_EQ(support::Json::parse(report.second)
                .at("workloads")
                .as_array()
                .at(0)
                .at("best_record_id")
                .as_int(),
            id);
  const auto bench = run_in(dir, "bench" + workload +
                                     " --target 'llvm -cores=1' --schedule best "
                                     "--repeat 1 --min-repeat-ms 1 --json");
  ASSERT_EQ(bench.first, 0);
  EXPECT_EQ(support::Json::parse(bench.second).at("schedule").as_string(),
            "record #" + std::to_string(id));
  std::filesystem::remove_all(dir);
}

TEST(Ops, ListsEveryOperatorWithTheKeysItsSpecAccepts) {
  const support::Json ops = json_of("ops --json").at("operators");
  std::set<std::string> names;
  for (const support::Json& op : ops.as_array()) {
    names.insert(op.at("name").as_string());
    std::set<std::string> keys;
    for (const support::Json& k : op.at("keys").as_array())
      keys.insert(k.as_string());
    EXPECT_EQ(keys.count("dtype"), 1U) << op.at("name").as_string();
    if (op.at("name").as_string() == "conv2d") {
      for (const char* k : {"N", "C", "H", "W", "K", "R", "S", "stride", "pad"})
        EXPECT_EQ(keys.count(k), 1U) << k;
    }
  }
  for (const char* n : {"matmul", "conv2d", "dense", "softmax", "batch_matmul"})
    EXPECT_EQ(names.count(n), 1U) << n;
  const e2e::CliResult text = run_cli("ops");
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("matmul             M, N, K"), std::string::npos) << text.out;
}

/// Runs `page` in headless Chromium at 1280 px with a probe appended that writes, as JSON into
/// the DOM: the page's scroll width against its width, and each trial chart's curve ends.
support::Json probe_in_chromium(const std::string& chromium, const std::string& page) {
  const std::string probe = temp_path("report-probe.html");
  const std::string script =
      "<script>const r={scroll:document.documentElement.scrollWidth,"
      "width:document.documentElement.clientWidth,widest:0,ends:[]};"
      "for(const e of document.body.querySelectorAll('*'))"
      "r.widest=Math.max(r.widest,e.getBoundingClientRect().right);"
      "for(const s of document.querySelectorAll('svg.chart[data-x=trials]')){const c=[];"
      "for(const p of s.querySelectorAll('path[data-last-x]'))"
      "c.push(Number(p.getAttribute('data-last-x')));r.ends.push(c);}"
      "const o=document.createElement('pre');o.id='probe';o.textContent=JSON.stringify(r);"
      "document.body.appendChild(o);</script>";
  const size_t end = page.rfind("</body>");
  e2e::write_text(probe, page.substr(0, end) + script + page.substr(end));
  const std::string dom = temp_path("report-dom.txt");
  const std::string command = chromium +
                              " --headless --no-sandbox --disable-gpu --hide-scrollbars "
                              "--window-size=1280,1600 --dump-dom 'file://" +
                              probe + "' >'" + dom + "' 2>/dev/null";
  EXPECT_EQ(std::system(command.c_str()), 0);
  const std::string text = e2e::read_text(dom);
  const size_t open = text.find("<pre id=\"probe\">");
  EXPECT_NE(open, std::string::npos) << text.substr(0, 400);
  if (open == std::string::npos)
    return support::Json::object();
  const size_t from = open + std::string("<pre id=\"probe\">").size();
  std::string json = text.substr(from, text.find("</pre>", from) - from);
  for (size_t at = json.find("&quot;"); at != std::string::npos; at = json.find("&quot;"))
    json.replace(at, 6, "\"");
  return support::Json::parse(json);
}

TEST(ReportCli, ATwoDatabaseComparisonFitsThePageAndEveryCurveEndsAtItsLastTrial) {
  const std::string a = temp_path("report-a.db");
  const std::string b = temp_path("report-b.db");
  ASSERT_EQ(run_cli(report_tune_args(a, 6, 1)).exit_code, 0);
  ASSERT_EQ(run_cli(report_tune_args(b, 10, 2)).exit_code, 0);
  const std::string html = temp_path("report.html");
  const e2e::CliResult r =
      run_cli("report --db '" + a + "' --compare '" + b + "' --out '" + html + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("matmul_32x32x32_float32"), std::string::npos) << r.out;
  const std::string page = e2e::read_text(html);
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("best GFLOP/s by trial"), std::string::npos);
  EXPECT_NE(page.find("(no steps: the default schedule)"), std::string::npos);
  EXPECT_NE(page.find("<h3>top 8 of " + a), std::string::npos);  // a top-K table per database
  EXPECT_NE(page.find("<h3>top 8 of " + b), std::string::npos);
  EXPECT_NE(page.find("class=diff"), std::string::npos);  // the best against the other's best
  EXPECT_NE(page.find("measured during tuning run"), std::string::npos);  // the stored peak
  // The summary and the status table cover both databases.
  EXPECT_NE(page.find("<td>" + b + "</td>"), std::string::npos);
  // b's best shows one share of b's own peak wherever it appears: its summary row, its top-K
  // table and the schedules table of a's section.
  const size_t row = page.find("<td>" + b + "</td>");
  ASSERT_NE(row, std::string::npos);
  const size_t share_end = page.find("% of peak)", row);
  ASSERT_NE(share_end, std::string::npos);
  const size_t share_begin = page.rfind("<td>", share_end) + 4;
  const std::string share = page.substr(share_begin, share_end + 10 - share_begin);
  size_t shown = 0;
  for (size_t at = page.find(share); at != std::string::npos; at = page.find(share, at + 1))
    ++shown;
  EXPECT_GE(shown, 3U) << share;
  EXPECT_EQ(page.find("http://"), page.find("http://www.w3.org/2000/svg"));  // no network
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);

  const char* chromium = nullptr;
  for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (std::filesystem::exists(c))
      chromium = c;
  }
  if (chromium == nullptr)
    GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs it)";
  const std::string png = temp_path("report.png");
  const std::string log = temp_path("chromium.log");
  const std::string command =
      std::string(chromium) +
      " --headless --no-sandbox --disable-gpu --hide-scrollbars "
      "--enable-logging=stderr --v=0 --window-size=1280,1600 --screenshot='" +
      png + "' 'file://" + html + "' >'" + log + "' 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << e2e::read_text(log);
  const std::string console = e2e::read_text(log);
  EXPECT_EQ(console.find("Uncaught"), std::string::npos) << console;
  EXPECT_EQ(console.find("CONSOLE"), std::string::npos) << console;
  const std::string check =
      std::string("python3 '") + TT_SOURCE_DIR + "/scripts/png_stats.py' '" + png + "'";
  FILE* pipe = popen(check.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[256] = {};
  const size_t n = fread(buffer, 1, sizeof(buffer) - 1, pipe);
  ASSERT_EQ(pclose(pipe), 0);
  const support::Json s = support::Json::parse(std::string(buffer, n));
  EXPECT_EQ(s.at("width").as_int(), 1280);
  EXPECT_GT(s.at("colors").as_int(), 8);  // text, axes, curves: not a blank page
  EXPECT_GT(s.at("non_white").as_double(), 0.01);

  const support::Json probe = probe_in_chromium(chromium, page);
  ASSERT_TRUE(probe.contains("scroll"));
  EXPECT_LE(probe.at("scroll").as_int(), probe.at("width").as_int())
      << "the page scrolls sideways at 1280 px";
  EXPECT_LE(probe.at("widest").as_double(), probe.at("width").as_double() + 0.5)
      << "an element reaches past the page's right edge";
  // One trial chart per section (the workload in a, against b): a's curve ends at its 6th
  // trial, b's at its 10th.
  const auto& ends = probe.at("ends").as_array();
  ASSERT_EQ(ends.size(), 1U);
  std::vector<double> last;
  for (const support::Json& x : ends[0].as_array())
    last.push_back(x.as_double());
  EXPECT_EQ(last, (std::vector<double>{6, 10}));
}

/// The heights of the step curves in the page's charts, one list per curve (SVG's y grows
/// downwards: a rising GFLOP/s curve has falling heights).
std::vector<std::vector<double>> curve_heights(const std::string& page) {
  std::vector<std::vector<double>> curves;
  for (size_t at = page.find("<path d=\""); at != std::string::npos;
       at = page.find("<path d=\"", at + 1)) {
    const size_t begin = at + 9;
    const std::string d = page.substr(begin, page.find('"', begin) - begin);
    std::vector<double> ys{std::atof(d.c_str() + d.find(',') + 1)};  // "Mx,y" starts the path
    for (size_t v = d.find('V'); v != std::string::npos; v = d.find('V', v + 1))
      ys.push_back(std::atof(d.c_str() + v + 1));
    curves.push_back(ys);
  }
  return curves;
}

TEST(ReportCli, TheBestSoFarCurveNeverFallsWhenAConfirmedLeadIsSlowerThanItsSingleTime) {
  // A later record that ranks first but whose side-by-side time is slower than every single
  // measurement before it: drawn at its confirmed time, the curve would drop at its trial.
  const std::string db = temp_path("curve.db");
  ASSERT_EQ(run_cli(report_tune_args(db, 8, 3) + " --confirm 0").exit_code, 0);
  const std::string exported = temp_path("curve.jsonl");
  ASSERT_EQ(run_cli("db export --db '" + db + "' --out '" + exported + "'").exit_code, 0);
  std::vector<support::Json> lines;
  double fastest = 1e30, slowest = 0;
  size_t last_ok = 0;
  std::string text = e2e::read_text(exported);
  for (size_t begin = 0, end; begin < text.size(); begin = end + 1) {
    end = text.find('\n', begin);
    if (end == std::string::npos)
      end = text.size();
    if (end == begin)
      continue;
    lines.push_back(support::Json::parse(text.substr(begin, end - begin)));
    const support::Json& l = lines.back();
    if (l.at("kind").as_string() == "record" && l.at("status").as_string() == "Ok") {
      const double t = l.at("median_seconds").as_double();
      fastest = std::min(fastest, t);
      slowest = std::max(slowest, t);
      last_ok = lines.size() - 1;
    }
  }
  ASSERT_GT(slowest, 0);
  lines[last_ok]["confirmed_seconds"] = 3 * slowest;
  lines[last_ok]["rank_seconds"] = fastest / 2;
  text.clear();
  for (const support::Json& l : lines)
    text += l.dump() + "\n";
  e2e::write_text(exported, text);
  const std::string edited = temp_path("curve-edited.db");
  ASSERT_EQ(run_cli("db import --db '" + edited + "' '" + exported + "'").exit_code, 0);
  const std::string html = temp_path("curve.html");
  ASSERT_EQ(run_cli("report --db '" + edited + "' --out '" + html + "'").exit_code, 0);
  const auto curves = curve_heights(e2e::read_text(html));
  ASSERT_EQ(curves.size(), 2U);  // best by trial and by tuning time
  for (const std::vector<double>& ys : curves) {
    ASSERT_GE(ys.size(), 2U);
    for (size_t i = 1; i < ys.size(); ++i)
      EXPECT_LE(ys[i], ys[i - 1]) << "the curve falls at its point " << i;
  }
}

}  // namespace
}  // namespace tensortune
