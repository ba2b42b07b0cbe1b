// SPDX-License-Identifier: Apache-2.0
// Whole models from Python: an ONNX model compiled into a model folder as `tensortune
// compile-model` writes it (graph::export_model with the driver's lookup), and a folder loaded and
// run (graph::LoadedModel) on NumPy arrays, zero-copy, with the GIL released.
#include "bindings.h"
#include "pipeline.h"
#include "tensortune/database/database.h"
#include "tensortune/driver/compile.h"
#include "tensortune/graph/model_library.h"
#include "tensortune/support/error.h"
#include "zero_shot_cli.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <pybind11/stl.h>

namespace tensortune::python {
namespace {

cli::ArgParser compile_options_parser() {
  cli::ArgParser parser("model.compile", "compile(path, target, db=None, **options)",
                        "tensortune.model.compile's keyword options: the CLI's `compile-model` "
                        "options.");
  parser.option("db", "PATH", "the tuning database, read only (without it: no records)");
  cli::add_zero_shot_options(parser);
  return parser;
}

py::dict compile_model(const std::string& path,
                       const std::string& target_text,
                       const py::dict& options,
                       const std::string& out_dir,
                       const std::string& runtime) {
  const cli::ArgParser::Parsed p = parse_options(compile_options_parser(), options);
  std::optional<database::Database> db;
  if (p.has("db")) {
    TT_USER_CHECK(std::filesystem::exists(p.get("db")))
        << "compile-model: database '" << p.get("db") << "' does not exist";
    db.emplace(database::Database::open(p.get("db"), true));
  }
  driver::Compiler compiler(db ? &*db : nullptr, target::Target::parse(target_text));
  cli::enable_zero_shot(p, compiler);
  cli::check_target_runs_here(target_text, "compile-model", false);
  std::optional<graph::ExportedModel> m;
  {
    py::gil_scoped_release release;
    const graph::Graph g = graph::load_model(path);
    m.emplace(graph::export_model(g, compiler, out_dir, runtime));
  }
  py::dict out;
  out["dir"] = m->dir;
  out["library"] = m->library_path;
  out["calls"] = m->plan.calls.size();
  out["arena_bytes"] = m->memory.arena_bytes;
  out["weight_bytes"] = m->plan.weights.size();
  py::list functions;
  for (const driver::Compiled& c : m->functions) {
    py::dict f;
    f["name"] = c.func.name;
    f["source"] = driver::source_name(c.lookup.source);
    f["provenance"] = c.lookup.describe();
    f["record_id"] = c.lookup.record_id;
    functions.append(f);
  }
  out["functions"] = functions;
  std::vector<std::string> warnings = compiler.warnings();
  if (const std::string summary = compiler.summary_warning(); !summary.empty()) {
    warnings.push_back(summary);
  }
  out["warnings"] = warnings;
  return out;
}

py::list tensor_infos(const std::vector<graph::TensorInfo>& infos) {
  py::list out;
  for (const graph::TensorInfo& t : infos) {
    out.append(py::make_tuple(t.name, t.dtype.to_string(), t.shape));
  }
  return out;
}

/// The buffers of one run: inputs then outputs, checked against the plan.
struct RunBuffers {
  std::vector<std::unique_ptr<BufferView>> views;
  std::vector<const void*> inputs;
  std::vector<void*> outputs;
};

void take(RunBuffers& b,
          const graph::RunPlan& plan,
          const py::list& inputs,
          const py::list& outputs) {
  TT_USER_CHECK(inputs.size() == plan.inputs.size() && outputs.size() == plan.outputs.size())
      << "run: the model takes " << plan.inputs.size() << " inputs and " << plan.outputs.size()
      << " outputs, got " << inputs.size() << " and " << outputs.size();
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const graph::TensorInfo& t = plan.inputs[i];
    b.views.push_back(
        std::make_unique<BufferView>(inputs[i], t.dtype, t.shape, false, "run", t.name));
    b.inputs.push_back(b.views.back()->data());
  }
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const graph::TensorInfo& t = plan.outputs[i];
    b.views.push_back(
        std::make_unique<BufferView>(outputs[i], t.dtype, t.shape, true, "run", t.name));
    b.outputs.push_back(b.views.back()->data());
  }
}

}  // namespace

void define_model(py::module_& m) {
  m.def("_compile_model", &compile_model, py::arg("path"), py::arg("target"), py::arg("options"),
        py::arg("out_dir"), py::arg("runtime"));
  py::class_<graph::LoadedModel>(m, "_LoadedModel")
      .def(py::init([](const std::string& dir) { return graph::LoadedModel::load(dir); }))
      .def_property_readonly(
          "inputs", [](const graph::LoadedModel& l) { return tensor_infos(l.plan().inputs); })
      .def_property_readonly(
          "outputs", [](const graph::LoadedModel& l) { return tensor_infos(l.plan().outputs); })
      .def("run",
           [](const graph::LoadedModel& l, const py::list& inputs, const py::list& outputs) {
             RunBuffers b;
             take(b, l.plan(), inputs, outputs);
             py::gil_scoped_release release;
             l.run(b.inputs, b.outputs);
           })
      .def("profile", [](const graph::LoadedModel& l, const py::list& inputs,
                         const py::list& outputs, int runs) {
        RunBuffers b;
        take(b, l.plan(), inputs, outputs);
        std::vector<double> seconds;
        {
          py::gil_scoped_release release;
          seconds = l.profile(b.inputs, b.outputs, runs);
        }
        py::list out;
        for (size_t c = 0; c < seconds.size(); ++c) {
          out.append(
              py::make_tuple(l.plan().calls[c].function, l.plan().calls[c].workload, seconds[c]));
        }
        return out;
      });
}

}  // namespace tensortune::python
