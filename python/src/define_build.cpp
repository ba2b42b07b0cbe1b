// SPDX-License-Identifier: Apache-2.0
// build() from Python: a workload compiled with the driver's lookup (the database's best record,
// else adapted, shipped, zero-shot or default, as `tensortune compile` chooses) or with a given
// schedule, JIT-compiled into a callable kernel. A call takes NumPy arrays through the buffer
// protocol (no copy; dtype, shape and contiguity checked) and runs with the GIL released;
// export_library writes the NAME.so and NAME.h `tensortune compile` writes.
#include "bindings.h"
#include "pipeline.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/database/database.h"
#include "tensortune/driver/compile.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/lower/lower.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/error.h"
#include "zero_shot_cli.h"

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <pybind11/stl.h>

namespace tensortune::python {
namespace {

cli::ArgParser build_options_parser() {
  cli::ArgParser parser("build", "build(workload, target, db=None, **options)",
                        "tensortune.build's keyword options: the CLI's `compile` options.");
  parser.option("db", "PATH", "the tuning database, read only (without it: no records)");
  cli::add_zero_shot_options(parser);
  return parser;
}

/// The database and compiler a kernel was chosen with, kept for export_library.
struct BuildContext {
  std::unique_ptr<database::Database> db;
  std::unique_ptr<driver::Compiler> compiler;
};

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

class Kernel {
 public:
  Kernel(std::shared_ptr<BuildContext> context,
         te::Workload workload,
         std::string spec,
         driver::Compiled compiled)
      : context_(std::move(context)),
        workload_(std::move(workload)),
        spec_(std::move(spec)),
        compiled_(std::move(compiled)) {
    for (const ir::Buffer& b : compiled_.func.prepacked) {
      int64_t bytes = b.dtype().bytes();
      for (int64_t d : b.shape()) {
        bytes *= d;
      }
      const size_t rounded = (static_cast<size_t>(bytes) + 63) / 64 * 64;
      prepacked_.emplace_back(std::aligned_alloc(64, rounded == 0 ? 64 : rounded));
      TT_CHECK(prepacked_.back() != nullptr) << "out of memory for a prepacked buffer";
    }
  }

  const ir::LoweredFunc& func() const { return compiled_.func; }
  const driver::Lookup& lookup() const { return compiled_.lookup; }
  const te::Workload& workload() const { return workload_; }

  void call(const py::args& args) {
    const std::vector<ir::Buffer>& params = compiled_.func.params;
    const size_t n = params.size();
    if (args.size() != n) {
      throw UserError(signature_error(args.size()));
    }
    std::unique_ptr<std::optional<BufferView>[]> views(new std::optional<BufferView>[n]);
    std::vector<void*> pointers(n + prepacked_.size());
    for (size_t i = 0; i < n; ++i) {
      const bool output = i >= compiled_.func.num_inputs;
      views[i].emplace(args[i], params[i].dtype(), params[i].shape(), output, compiled_.func.name,
                       params[i].name());
      pointers[i] = views[i]->data();
    }
    for (size_t i = 0; i < prepacked_.size(); ++i) {
      pointers[n + i] = prepacked_[i].get();
    }
    int32_t status = 0;
    {
      py::gil_scoped_release release;
      if (!prepacked_.empty()) {
        status = compiled_.artifact.prepare(pointers.data());
      }
      if (status == 0) {
        status = compiled_.artifact(pointers.data());
      }
    }
    TT_CHECK(status == 0) << compiled_.func.name << " returned " << status;
  }

  py::dict export_library(const std::string& path, const std::string& runtime) const {
    std::filesystem::path p(path);
    TT_USER_CHECK(p.extension() == ".so" && !p.stem().empty())
        << "export_library: give the path of the library to write, DIR/NAME.so, got '" << path
        << "'";
    const std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
    const std::string name = p.stem().string();
    const target::Target& target = context_->compiler->target();
    TT_USER_CHECK(!target.is_gpu()) << "export_library: a CUDA target's kernels are exported by "
                                       "`tensortune compile` (CUDA C and PTX), not as a .so";
    driver::ExportItem item{workload_, spec_, name};
    driver::Compiled c;
    c.lookup = compiled_.lookup;
    {
      py::gil_scoped_release release;
      c.func =
          lower::lower(schedule::apply_steps(workload_, c.lookup.schedule.steps), target, name);
    }
    driver::ExportedLibrary lib =
        context_->compiler->write_library({item}, {std::move(c)}, dir, name, runtime);
    py::dict d;
    d["library"] = lib.library_path;
    d["header"] = lib.header_path;
    d["function"] = name;
    return d;
  }

 private:
  std::string signature_error(size_t got) const {
    const ir::LoweredFunc& f = compiled_.func;
    std::string inputs, outputs;
    for (size_t i = 0; i < f.params.size(); ++i) {
      std::string& list = i < f.num_inputs ? inputs : outputs;
      list += (list.empty() ? "" : ", ") + f.params[i].name() + " " +
              f.params[i].dtype().to_string() + shape_text(f.params[i].shape());
    }
    return f.name + ": takes " + std::to_string(f.params.size()) + " arrays, the inputs (" +
           inputs + ") then the outputs (" + outputs + "), got " + std::to_string(got);
  }

  std::shared_ptr<BuildContext> context_;
  te::Workload workload_;
  std::string spec_;
  driver::Compiled compiled_;
  std::vector<std::unique_ptr<void, AlignedFree>> prepacked_;
};

std::unique_ptr<Kernel> build(const te::Workload& workload,
                              const std::string& spec,
                              const std::string& target_text,
                              const py::dict& options,
                              const std::string& schedule_json) {
  const cli::ArgParser::Parsed p = parse_options(build_options_parser(), options);
  auto context = std::make_shared<BuildContext>();
  if (p.has("db")) {
    context->db = std::make_unique<database::Database>(database::Database::open(p.get("db"), true));
  }
  context->compiler =
      std::make_unique<driver::Compiler>(context->db.get(), target::Target::parse(target_text));
  TT_USER_CHECK(!context->compiler->target().is_gpu())
      << "build: '" << target_text << "' is a GPU target; build() makes CPU kernels (export a "
      << "CUDA kernel with `tensortune compile`)";
  cli::check_target_runs_here(target_text, "build", true);
  driver::Compiled compiled;
  if (!schedule_json.empty()) {
    schedule::Schedule s = schedule::parse_schedule(schedule_json);
    if (s.workload_key.empty()) {
      s.workload_key = workload.key();
    }
    py::gil_scoped_release release;
    cli::BuiltKernel k = cli::build_kernel(workload, s, context->compiler->target());
    compiled.lookup.schedule = std::move(s);
    compiled.func = std::move(k.func);
    compiled.artifact = std::move(k.artifact);
  } else {
    cli::enable_zero_shot(p, *context->compiler);
    py::gil_scoped_release release;
    compiled = context->compiler->compile(workload, spec);
  }
  return std::make_unique<Kernel>(context, workload, spec, std::move(compiled));
}

}  // namespace

void define_build(py::module_& m) {
  py::class_<Kernel>(m, "_Kernel")
      .def("__call__", &Kernel::call)
      .def_property_readonly("name", [](const Kernel& k) { return k.func().name; })
      .def_property_readonly("workload", &Kernel::workload)
      .def_property_readonly("source",
                             [](const Kernel& k) { return driver::source_name(k.lookup().source); })
      .def_property_readonly("provenance", [](const Kernel& k) { return k.lookup().describe(); })
      .def_property_readonly("record_id", [](const Kernel& k) { return k.lookup().record_id; })
      .def_property_readonly(
          "schedule_json",
          [](const Kernel& k) { return schedule::to_json(k.lookup().schedule).dump(); })
      .def_property_readonly("ir", [](const Kernel& k) { return ir::to_string(k.func()); })
      .def_property_readonly(
          "params",
          [](const Kernel& k) {
            py::list out;
            const ir::LoweredFunc& f = k.func();
            for (size_t i = 0; i < f.params.size(); ++i) {
              out.append(py::make_tuple(f.params[i].name(), f.params[i].dtype().to_string(),
                                        f.params[i].shape(), i >= f.num_inputs));
            }
            return out;
          })
      .def("export_library", &Kernel::export_library, py::arg("path"), py::arg("runtime"));
  m.def("_build", &build, py::arg("workload"), py::arg("spec"), py::arg("target"),
        py::arg("options"), py::arg("schedule"));
}

}  // namespace tensortune::python
