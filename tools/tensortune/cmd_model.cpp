// SPDX-License-Identifier: Apache-2.0
// `tensortune tune-model` and `compile-model`: an ONNX model imported and optimized, its kernels
// extracted as tuning tasks (weighted by how often they occur) and tuned with the task
// scheduler, or built with the database's best records into a model folder.
#include "commands.h"
#include "db_schedule.h"
#include "model_common.h"
#include "pipeline.h"
#include "progress.h"
#include "tensortune/database/database.h"
#include "tensortune/driver/compile.h"
#include "tensortune/graph/model_library.h"
#include "tensortune/graph/onnx_import.h"
#include "tensortune/graph/partition.h"
#include "tensortune/graph/passes.h"
#include "tensortune/measure/measurer.h"
#include "tensortune/search/tuner.h"
#include "tensortune/support/error.h"
#include "tensortune/support/file.h"
#include "tensortune/support/json.h"
#include "tensortune/te/workload.h"
#include "tune_common.h"
#include "zero_shot_cli.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <map>

namespace tensortune::cli {

graph::Graph load_model(const std::string& path, bool quiet) {
  graph::PassReport r;
  graph::Graph g = graph::load_model(path, &r);
  if (!quiet)
    std::cerr << "tensortune: " << path << ": " << r.to_string() << "\n";
  return g;
}

ArgParser tune_model_parser() {
  ArgParser parser(
      "tune-model",
      "tune-model MODEL.onnx --target T [--trials N] [--db PATH] [--tuner xgb|xgb-evo|random] "
      "[--seed S] [--batch N] [--winograd] [--no-cache-flush] [--json]",
      "Imports an ONNX model, extracts its kernels (each fused layer: a convolution with its "
      "bias, relu and residual add, ...) as tuning tasks weighted by how often they occur, and "
      "tunes them with the task scheduler sharing --trials among them by the estimated gradient "
      "of the model's latency. Resumes from the database. Shows per-task progress and the "
      "estimated end-to-end latency (sum of weight x best time) as it improves.");
  parser.positional("MODEL.onnx", "the ONNX model (anywhere among the options)", 1, 1)
      .option("target", "T", kTargetHelp, {}, true)
      .option("trials", "N",
              "trial budget over all tasks (default 200 per task; none with --time-budget)")
      .option("db", "PATH", "tuning database (default tuning_logs/tensortune.db; created)")
      .option("tuner", "NAME", "search strategy (default xgb)", {"xgb", "xgb-evo", "random"})
      .option("seed", "S", "seed of every random choice (default 0)")
      .option("batch", "N", "candidates measured per round (default 32)")
      .option("scheduler", "NAME", "how rounds are shared (default gradient)",
              {"gradient", "round-robin"})
      .flag("winograd",
            "also tune the Winograd form of every 3x3 stride-1 conv (compile-model builds the "
            "faster form of each layer)")
      .flag("json",
            "print one JSON document {model, target, trials, tasks: [...], "
            "estimated_seconds}");
  // A model's kernels find their weights cold: timing them so keeps the estimate honest (warm
  // timings of ResNet-18 summed to 24 ms for a model that ran in 32) and picks schedules for it.
  add_measurement_options(parser, true);
  add_zero_shot_options(parser);
  return parser;
}

int run_tune_model(const std::vector<std::string>& in_args) {
  std::optional<ArgParser::Parsed> parsed = parse_command_line(tune_model_parser(), in_args);
  if (!parsed)
    return 0;
  const ArgParser::Parsed& p = *parsed;
  const std::string model = p.positionals().at(0);
  // A bad target fails before the import, which can take seconds.
  const target::Target target = resolve_target(p.get("target"));
  graph::Graph g = load_model(model, false);
  graph::Partition partition = graph::partition(g);
  std::vector<graph::Task> model_tasks = graph::extract_tasks(g, partition);
  // Every unique kernel is a task, and with --winograd so is its Winograd form (a 3x3 stride-1
  // conv). A task's group is the model task it computes: the scheduler and the estimate count
  // each kernel at its fastest form (a group of one form is just that task).
  std::vector<search::TuneTask> tasks;
  for (size_t m = 0; m < model_tasks.size(); ++m) {
    const graph::Task& t = model_tasks[m];
    std::vector<const te::Workload*> forms{&t.workload};
    for (const te::Workload& w : t.alternatives) {
      if (p.has("winograd"))
        forms.push_back(&w);
    }
    for (const te::Workload* w : forms) {
      // The operator: the name without its shape and dtype ("conv_add_relu").
      std::string op = w->name();
      op = op.substr(0, op.rfind('_'));
      op = op.substr(0, op.rfind('_'));
      tasks.push_back(
          search::TuneTask{*w, "", op, static_cast<double>(t.weight()), static_cast<int>(m)});
    }
  }
  // Two tasks may share a name (a 3->8 and an 8->8 convolution): shown with their keys' ends.
  std::vector<te::NamedKey> named;
  for (const search::TuneTask& t : tasks)
    named.push_back({t.workload.name(), t.workload.key()});
  const std::vector<std::string> shown = te::distinct_names(named);
  std::cerr << fmt::format("tensortune: {} kernels, {} unique, {} tasks\n",
                           partition.kernels.size(), model_tasks.size(), tasks.size());
  add_shipped_starts(p, tasks);
  search::TuneOptions o = tune_options(p);
  // 200 trials a task by default; a time budget alone is not capped (tune_options).
  if (p.has("trials") || !p.has("time-budget"))
    o.trials = p.get_int("trials", 200 * static_cast<int64_t>(tasks.size()), 0, int64_t{1} << 40);
  check_target_runs_here(p.get("target"), "tune-model", true);
  read_machine_speed(o, target);
  const measure::MeasurerOptions mo = measurer_options(p, target, true);
  o.queue_options = job_measure_options(mo).dump();
  measure::Measurer measurer(target, mo);
  const std::string db_path = database_path(p);
  database::Database db = open_tuning_database(p, "tune-model");
  const database::TargetKey key = driver::target_key(target::Target::parse(p.get("target")));
  // The estimate starts from the records already stored (a resumed job).
  std::vector<double> best(tasks.size(), 0.0);
  for (size_t i = 0; i < tasks.size(); ++i) {
    const std::vector<database::Record> stored = db.best(tasks[i].workload.key(), key, 1);
    if (!stored.empty())
      best[i] = stored.front().rank_seconds;
  }
  // Each kernel counts with its fastest form measured so far.
  auto estimate = [&]() {
    std::vector<double> fastest(model_tasks.size(), 0.0);
    for (size_t i = 0; i < tasks.size(); ++i) {
      double& f = fastest[static_cast<size_t>(tasks[i].group)];
      if (best[i] > 0 && (f <= 0 || best[i] < f))
        f = best[i];
    }
    double total = 0;
    for (size_t m = 0; m < model_tasks.size(); ++m)
      total += model_tasks[m].weight() * fastest[m];
    return total;
  };
  const search::TuneResult result =
      search::tune(tasks, target, key, db, measurer, o, [&](const search::TuneProgress& pr) {
        best[static_cast<size_t>(pr.task)] = pr.best_seconds;
        size_t known = static_cast<size_t>(
            std::count_if(best.begin(), best.end(), [](double b) { return b > 0; }));
        const std::string of =
            clock_budget(pr) ? fmt::format(" trials, {} of {}", format_duration(pr.elapsed_seconds),
                                           format_duration(pr.time_budget_seconds))
                             : fmt::format("/{}", pr.budget);
        std::cerr << fmt::format(
            "[{}{}] task {}/{} {}: best {:.3f} ms; model estimate {:.3f} ms ({}/{} tasks "
            "measured)\n",
            pr.trials, of, pr.task + 1, tasks.size(), shown[static_cast<size_t>(pr.task)],
            pr.best_seconds * 1e3, estimate() * 1e3, known, tasks.size());
      });
  for (size_t i = 0; i < result.tasks.size(); ++i)
    best[i] = result.tasks[i].best_seconds;
  support::Json list = support::Json::array();
  for (size_t i = 0; i < result.tasks.size(); ++i) {
    const search::TaskResult& t = result.tasks[i];
    support::Json j = support::Json::object();
    j["workload"] = shown[i];
    j["workload_key"] = t.workload_key;
    j["weight"] = tasks[i].weight;
    j["trials"] = t.resumed + t.trials;
    j["best_seconds"] = t.best_seconds;
    j["best_gflops"] = t.best_gflops;
    list.push_back(std::move(j));
    if (!p.has("json")) {
      std::cout << fmt::format("{:<44} x{:<2} {:>5} trials  {:>9.4f} ms  {:>7.1f} GFLOP/s\n",
                               shown[i], tasks[i].weight, t.resumed + t.trials,
                               t.best_seconds * 1e3, t.best_gflops);
    }
  }
  if (p.has("json")) {
    support::Json out = support::Json::object();
    out["model"] = model;
    out["target"] = target.to_string();
    out["db"] = database::display_name(db_path);
    out["trials"] = result.trials;
    out["wall_seconds"] = result.wall_seconds;
    out["estimated_seconds"] = estimate();
    out["tasks"] = std::move(list);
    std::cout << out.dump() << "\n";
  } else {
    std::cout << fmt::format("estimated model latency (sum of weight x best): {:.3f} ms; {}\n",
                             estimate() * 1e3, format_duration(result.wall_seconds));
  }
  return 0;
}

ArgParser compile_model_parser() {
  ArgParser parser(
      "compile-model", "compile-model MODEL.onnx --target T [--db PATH] --out DIR [--json]",
      "Builds every kernel of an ONNX model with its best record in the database (else the "
      "nearest record of the same operator adapted, else a zero-shot schedule that the shipped "
      "cost model picks from the kernel's own space without measuring, else the default "
      "schedule; one summary lists what was untuned) into DIR/libmodel.so (and the link "
      "DIR/model.so), with DIR/model.h, the run plan DIR/model.json "
      "(a static memory plan reusing activation buffers) and the weights DIR/weights.bin. "
      "`tensortune run-model DIR` runs it.");
  parser.positional("MODEL.onnx", "the ONNX model (anywhere among the options)", 1, 1)
      .option("target", "T", kTargetHelp, {}, true)
      .option("db", "PATH",
              "the tuning database, read only (default tuning_logs/tensortune.db when it exists; "
              "without one: default schedules)")
      .option("out", "DIR", "the output directory (created when missing)", {}, true)
      .flag("json",
            "print one JSON document {dir, kernels, calls, functions: [{name, workload, source, "
            "provenance}], untuned, arena_bytes, ..., warnings}");
  add_zero_shot_options(parser);
  return parser;
}

int run_compile_model(const std::vector<std::string>& in_args) {
  std::optional<ArgParser::Parsed> parsed = parse_command_line(compile_model_parser(), in_args);
  if (!parsed)
    return 0;
  const ArgParser::Parsed& p = *parsed;
  const std::string model = p.positionals().at(0);
  const target::Target target = target::Target::parse(p.get("target"));
  graph::Graph g = load_model(model, p.has("json"));
  std::optional<database::Database> db;
  if (has_database(p)) {
    check_database_exists(database_path(p), "compile-model");
    // Read only: opened for writing, a file in rollback-journal mode (the shipped logs, a copy
    // made for distribution) would be switched to WAL.
    db.emplace(database::Database::open(database_path(p), true));
  }
  driver::Compiler compiler(db ? &*db : nullptr, target);
  enable_zero_shot(p, compiler);
  check_target_runs_here(p.get("target"), "compile-model", false);
  graph::ExportedModel m = graph::export_model(g, compiler, p.get("out"));
  if (m.gpu && !m.no_ptx_reason.empty()) {
    std::cerr << "tensortune: warning: NVRTC is not available here (" << m.no_ptx_reason
              << "): the kernels are CUDA C (" << m.dir
              << "/kernels/*.cu), which a device cannot load; compile the model again where "
                 "NVRTC is installed to run it\n";
  }
  std::map<std::string, int> sources;
  for (const driver::Compiled& c : m.functions)
    ++sources[driver::source_name(c.lookup.source)];
  print_driver_warnings(compiler);
  if (p.has("json")) {
    support::Json out = support::Json::object();
    out["dir"] = m.dir;
    out["library"] = m.library_path;
    out["device"] = m.gpu ? "cuda" : "cpu";
    if (m.gpu) {
      out["ptx"] = m.no_ptx_reason.empty();
      out["launches"] = static_cast<int64_t>(m.image.launches.size());
    }
    out["kernels"] = static_cast<int64_t>(m.functions.size());
    out["calls"] = static_cast<int64_t>(m.plan.calls.size());
    out["arena_bytes"] = m.memory.arena_bytes;
    out["activation_bytes"] = m.memory.activation_bytes;
    out["weight_bytes"] = static_cast<int64_t>(m.plan.weights.size());
    out["functions"] = m.functions_json();
    add_driver_notes(compiler, &out);
    std::cout << out.dump() << "\n";
    return 0;
  }
  std::cout << fmt::format(
      "{}: {} kernels ({} calls): {} from records, {} adapted, {} shipped, {} zero-shot, {} "
      "default\n",
      m.library_path, m.functions.size(), m.plan.calls.size(), sources["record"],
      sources["adapted"], sources["shipped"], sources["zero-shot"], sources["default"]);
  std::cout << fmt::format(
      "memory: peak activations {:.1f} KiB (arena) of {:.1f} KiB in all; weights {:.1f} KiB\n",
      m.memory.arena_bytes / 1024.0, m.memory.activation_bytes / 1024.0,
      m.plan.weights.size() / 1024.0);
  return 0;
}

}  // namespace tensortune::cli
