// SPDX-License-Identifier: Apache-2.0
// `tensortune compile`: ahead-of-time build of one or more workloads with their best records (or
// the driver's fallbacks) into DIR/libNAME.so and the header DIR/NAME.h that documents it.
#include "commands.h"
#include "db_schedule.h"
#include "pipeline.h"
#include "tensortune/database/database.h"
#include "tensortune/driver/compile.h"
#include "tensortune/lower/lower.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/te/operators.h"
#include "zero_shot_cli.h"

#include <cstdlib>
#include <iostream>
#include <memory>

namespace tensortune::cli {

ArgParser compile_parser() {
  ArgParser parser(
      "compile",
      "compile --workload SPEC [--workload SPEC ...] --target T [--db PATH] --out DIR "
      "[--name NAME] [--json]",
      "Builds each workload with its best record in the tuning database (else the nearest "
      "record of another shape of its operator, adapted; else, on a CPU, a zero-shot schedule "
      "that the shipped cost model picks from the workload's own space without measuring; else "
      "the default schedule) into "
      "DIR/libNAME.so (DIR/NAME.so links to it), exporting extern \"C\" int32_t FUNCTION(void* "
      "const* buffers) per workload "
      "(buffers: inputs in declaration order, then outputs; dense row-major; returns 0), and "
      "writes DIR/NAME.h documenting the buffers. The library needs only system libraries. "
      "For a CUDA target ('cuda -arch=sm_90') it writes DIR/FUNCTION.cu and DIR/FUNCTION.ptx "
      "per workload (load the PTX with cuModuleLoadData) and DIR/NAME.json listing each "
      "function's buffers (inputs, outputs, then scratch buffers to allocate) and kernels in "
      "launch order (grid, block, shared bytes, parameter buffers); this needs NVRTC. "
      "Prints where each schedule came from; one warning on stderr lists the workloads "
      "without a record. TT_RUNTIME_ARCHIVE overrides where libtt_runtime.a is found.");
  parser.option("workload", "SPEC", kWorkloadHelp, {}, true, true)
      .option("target", "T", kTargetHelp, {}, true)
      .option("db", "PATH",
              "the tuning database, read only (default tuning_logs/tensortune.db when it exists; "
              "without one: default schedules)")
      .option("out", "DIR", "the output directory (created when missing)", {}, true)
      .option("build-timeout", "S", kBuildTimeoutHelp)
      .option("name", "NAME",
              "library name; with one workload also the function name (default: the "
              "workload's function name, e.g. matmul_64x48x32_float32)")
      .flag("json",
            "print one JSON document {library, header, target, fingerprint, functions: [{name, "
            "workload, source, record_id, ...}], untuned, warnings}");
  add_zero_shot_options(parser);
  return parser;
}

namespace {

support::Json function_json(const driver::ExportItem& item, const driver::Compiled& c) {
  support::Json f = support::Json::object();
  f["name"] = c.func.name;
  f["workload"] = item.workload.name();
  f["workload_key"] = item.workload.key();
  f["spec"] = item.spec;
  const support::Json lookup = c.lookup.to_json();
  for (const auto& [key, value] : lookup.as_object("lookup"))
    f[key] = value;
  f["steps"] = static_cast<int64_t>(c.lookup.schedule.steps.size());
  return f;
}

void print_result(bool json,
                  const std::vector<driver::ExportItem>& items,
                  const driver::ExportedLibrary& lib,
                  const driver::Compiler& compiler) {
  if (!json) {
    std::cout << "wrote " << lib.library_path << " and " << lib.header_path << "\n";
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string& function = lib.functions[i].func.name;
      std::string workload = items[i].workload.name();
      std::cout << "  " << function << (function == workload ? "" : " (" + workload + ")") << ": "
                << lib.functions[i].lookup.describe() << "\n";
    }
    return;
  }
  support::Json out = support::Json::object();
  out["library"] = lib.library_path;
  out["header"] = lib.header_path;
  out["target"] = compiler.identity().target;
  out["fingerprint"] = compiler.identity().fingerprint;
  support::Json functions = support::Json::array();
  for (size_t i = 0; i < items.size(); ++i) {
    functions.push_back(function_json(items[i], lib.functions[i]));
  }
  out["functions"] = std::move(functions);
  add_driver_notes(compiler, &out);
  std::cout << out.dump() << "\n";
}

void print_cuda_result(bool json,
                       const std::vector<driver::ExportItem>& items,
                       const driver::ExportedCuda& cuda,
                       const driver::Compiler& compiler) {
  if (!json) {
    std::cout << "wrote " << cuda.manifest_path << "\n";
    for (size_t i = 0; i < items.size(); ++i) {
      std::cout << "  " << cuda.functions[i].func.name << ": " << cuda.source_paths[i] << ", "
                << cuda.ptx_paths[i] << "; " << cuda.functions[i].lookup.describe() << "\n";
    }
    return;
  }
  support::Json out = support::Json::object();
  out["manifest"] = cuda.manifest_path;
  out["target"] = compiler.identity().target;
  out["fingerprint"] = compiler.identity().fingerprint;
  support::Json functions = support::Json::array();
  for (size_t i = 0; i < items.size(); ++i) {
    support::Json f = function_json(items[i], cuda.functions[i]);
    f["cuda_source"] = cuda.source_paths[i];
    f["ptx"] = cuda.ptx_paths[i];
    functions.push_back(std::move(f));
  }
  out["functions"] = std::move(functions);
  add_driver_notes(compiler, &out);
  std::cout << out.dump() << "\n";
}

}  // namespace

int run_compile(const std::vector<std::string>& args) {
  std::optional<ArgParser::Parsed> parsed = parse_command_line(compile_parser(), args);
  if (!parsed) {
    return 0;
  }
  const ArgParser::Parsed& p = *parsed;
  std::vector<driver::ExportItem> items;
  for (const std::string& spec : p.get_all("workload")) {
    items.push_back(driver::ExportItem{te::make_workload(spec), spec, ""});
  }
  TT_USER_CHECK(items.size() == 1 || p.has("name"))
      << "compile: give --name NAME for a library of " << items.size() << " workloads";
  std::string name = p.get("name", lower::function_name(items[0].workload));
  if (items.size() == 1) {
    items[0].name = name;
  }
  target::Target target = target::Target::parse(p.get("target"));
  std::unique_ptr<database::Database> db;
  if (has_database(p)) {
    db = std::make_unique<database::Database>(database::Database::open(database_path(p), true));
  }
  driver::Compiler compiler(db.get(), target);
  enable_zero_shot(p, compiler);
  check_target_runs_here(p.get("target"), "compile", false);
  const BuildDeadline deadline(p.get_double("build-timeout", kDefaultBuildTimeout, 0.001, 86400),
                               "compile");
  if (target.is_gpu()) {
    driver::ExportedCuda cuda = compiler.export_cuda(items, p.get("out"), name);
    print_driver_warnings(compiler);
    print_cuda_result(p.has("json"), items, cuda, compiler);
    return 0;
  }
  const char* runtime = std::getenv("TT_RUNTIME_ARCHIVE");
  driver::ExportedLibrary lib = compiler.export_library(
      items, p.get("out"), name, runtime != nullptr ? std::string(runtime) : "");
  print_driver_warnings(compiler);
  print_result(p.has("json"), items, lib, compiler);
  return 0;
}

}  // namespace tensortune::cli
