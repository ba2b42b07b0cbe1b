// SPDX-License-Identifier: Apache-2.0
// tune() from Python: the CLI's `tune` with workloads declared in Python or given as specs, the
// CLI's options and defaults (tune_common.h), its progress line or a Python callback, and Ctrl-C
// handled as the CLI handles it: the batch in flight is saved, then tensortune/tune.py raises
// KeyboardInterrupt and a later call resumes from the database.
#include "bindings.h"
#include "pipeline.h"
#include "progress.h"
#include "tensortune/cost_model/features.h"
#include "tensortune/database/database.h"
#include "tensortune/driver/compile.h"
#include "tensortune/measure/measurer.h"
#include "tensortune/search/tuner.h"
#include "tensortune/support/error.h"
#include "tune_common.h"
#include "zero_shot_cli.h"

#include <csignal>
#include <memory>
#include <optional>
#include <pybind11/stl.h>

namespace tensortune::python {
namespace {

cli::ArgParser tune_options_parser() {
  cli::ArgParser parser("tune", "tune(workloads, target, **options)",
                        "tensortune.tune's keyword options: the CLI's `tune` options.");
  cli::add_search_options(parser);
  cli::add_measurement_options(parser);
  cli::add_zero_shot_options(parser);
  return parser;
}

py::dict times_dict(const search::PhaseTimes& t) {
  py::dict d;
  d["search"] = t.search;
  d["features"] = t.features;
  d["training"] = t.training;
  d["build"] = t.build;
  d["run"] = t.run;
  d["database"] = t.database;
  return d;
}

py::dict round_dict(const search::TuneProgress& p) {
  py::dict d;
  d["task"] = p.task;
  d["workload"] = p.workload_name;
  d["round"] = p.round;
  d["trials"] = p.trials;
  d["budget"] = p.budget;
  d["measured"] = p.measured;
  d["task_trials"] = p.task_trials;
  d["best_seconds"] = p.best_seconds;
  d["best_gflops"] = p.best_gflops;
  d["ok"] = p.round_ok;
  d["errors"] = p.round_errors;
  d["invalid"] = p.round_invalid;
  d["elapsed_seconds"] = p.elapsed_seconds;
  d["times"] = times_dict(p.round_times);
  return d;
}

/// One task per (workload, spec, weight): a spec is tuned as the CLI tunes it (its operator's
/// records of other shapes transfer); a workload declared in Python is its own operator.
std::vector<search::TuneTask> make_tasks(const py::list& items) {
  std::vector<search::TuneTask> tasks;
  for (py::handle item : items) {
    auto [workload, spec, weight] = item.cast<std::tuple<te::Workload, std::string, double>>();
    TT_USER_CHECK(weight > 0) << "tune: a weight must be positive, got " << weight;
    if (!spec.empty()) {
      tasks.push_back(search::TuneTask::from_spec(spec, weight));
    } else {
      tasks.push_back(search::TuneTask{workload, "", workload.name(), weight});
    }
  }
  TT_USER_CHECK(!tasks.empty()) << "tune: give at least one workload";
  search::check_distinct_workloads(tasks);
  return tasks;
}

py::dict tune(const py::list& items,
              const std::string& target_text,
              const py::dict& options,
              const py::object& callback,
              const std::string& style,
              bool catch_sigint,
              const std::string& worker) {
  const cli::ArgParser::Parsed p = parse_options(tune_options_parser(), options);
  const std::vector<search::TuneTask> tasks = make_tasks(items);
  const search::TuneOptions tune_options = cli::tune_options(p);
  const target::Target target = cli::resolve_target(target_text);
  cli::check_target_runs_here(target_text, "tune", true);
  measure::MeasurerOptions mo = cli::measurer_options(p, target);
  if (!worker.empty()) {
    mo.build.worker_path = worker;
    mo.run.worker_path = worker;
  }
  cli::ProgressPrinter printer(cli::parse_progress_style(style), 0.0);
  std::vector<search::TuneProgress> rounds;
  std::optional<py::error_already_set> raised;
  search::TuneResult result;
  int sig = 0;
  std::string db_path;
  std::vector<database::Record> best;
  {
    py::gil_scoped_release release;
    measure::Measurer measurer(target, mo);
    database::Database db = cli::open_tuning_database(p, "tune");
    db_path = db.path();
    const database::TargetKey key = driver::target_key(target::Target::parse(target_text));
    std::optional<cli::StopOnSignals> stop_on_sigint;
    std::atomic<bool> stop_flag{false};
    if (catch_sigint) {
      stop_on_sigint.emplace(false);
    }
    const std::atomic<bool>* stop = stop_on_sigint ? &stop_on_sigint->flag() : &stop_flag;
    auto on_round = [&](const search::TuneProgress& pr) {
      rounds.push_back(pr);
      printer.update(pr);
      if (callback.is_none() || raised) {
        return;
      }
      py::gil_scoped_acquire acquire;
      try {
        callback(round_dict(pr));
      } catch (py::error_already_set& e) {
        // Stop after this batch, as Ctrl-C does; tune.py raises it once the batch is saved.
        raised.emplace(std::move(e));
        if (stop_on_sigint) {
          stop_on_sigint->request_stop();
        } else {
          stop_flag.store(true);
        }
      }
    };
    result = search::tune(tasks, target, key, db, measurer, tune_options, on_round, stop);
    sig = stop_on_sigint ? stop_on_sigint->signal() : 0;
    stop_on_sigint.reset();
    printer.finish();
    for (const search::TaskResult& t : result.tasks) {
      std::vector<database::Record> b = db.best(t.workload_key, key, 1);
      best.push_back(b.empty() ? database::Record{} : b.front());
    }
  }
  py::dict out;
  out["target"] = target.to_string();
  out["db"] = database::display_name(db_path);
  out["trials"] = result.trials;
  out["run_id"] = result.run_id;
  out["wall_seconds"] = result.wall_seconds;
  out["interrupted"] = result.interrupted;
  out["stop_reason"] = result.stop_reason;
  out["signal"] = sig;
  out["times"] = times_dict(result.times);
  py::list task_list;
  for (size_t i = 0; i < result.tasks.size(); ++i) {
    const search::TaskResult& t = result.tasks[i];
    py::dict d;
    d["workload"] = t.workload_name;
    d["workload_key"] = t.workload_key;
    d["spec"] = tasks[i].spec;
    d["weight"] = tasks[i].weight;
    d["resumed"] = t.resumed;
    d["trials"] = t.trials;
    d["ok"] = t.ok;
    d["best_seconds"] = t.best_seconds;
    d["best_gflops"] = t.best_gflops;
    d["best_record_id"] = t.best_record_id;
    d["confirmed"] = t.confirmed;
    d["refuted"] = t.refuted;
    d["curve"] = t.curve;
    d["best"] = best[i].id != 0 ? py::object(record_dict(best[i])) : py::none();
    task_list.append(d);
  }
  out["tasks"] = task_list;
  py::list round_list;
  for (const search::TuneProgress& r : rounds) {
    round_list.append(round_dict(r));
  }
  out["rounds"] = round_list;
  if (raised) {
    if (raised->matches(PyExc_KeyboardInterrupt)) {
      out["signal"] = SIGINT;  // raised by the callback: reported as a Ctrl-C
    } else {
      throw std::move(*raised);
    }
  }
  return out;
}

}  // namespace

void define_tune(py::module_& m) {
  m.def("_tune", &tune, py::arg("tasks"), py::arg("target"), py::arg("options"),
        py::arg("callback"), py::arg("progress"), py::arg("catch_sigint"), py::arg("worker"));
  m.def(
      "_zero_shot_model_name",
      [] { return "cpu.v" + std::to_string(cost_model::kFeatureVersion) + ".json"; },
      "The file name of the shipped zero-shot model this build reads.");
  m.def(
      "_tune_help", [] { return tune_options_parser().help_text(); },
      "The options tune() takes, as the CLI's help describes them.");
}

}  // namespace tensortune::python
