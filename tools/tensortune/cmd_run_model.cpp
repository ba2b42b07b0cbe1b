// SPDX-License-Identifier: Apache-2.0
// `tensortune run-model DIR`: runs a compiled model folder on .npy inputs (random ones when
// none are given), writes every output as .npy and times it with the measurement protocol.
#include "commands.h"
#include "file_names.h"
#include "model_common.h"
#include "tensortune/graph/model_library.h"
#include "tensortune/graph/npy.h"
#include "tensortune/measure/timing.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/support/rng.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <optional>

namespace tensortune::cli {

ArgParser run_model_parser() {
  ArgParser parser(
      "run-model",
      "run-model DIR [--input NAME=FILE.npy ...] [--output-dir OUT] [--seed S] [--profile] "
      "[--json]",
      "Loads a folder written by compile-model, runs it on the given .npy inputs (inputs not "
      "given are uniform random values in [-1, 1) from --seed), writes each output as "
      "OUT/NAME.npy, and "
      "times one run with the measurement protocol (warm-up, repeats, median).");
  parser.positional("DIR", "the folder compile-model wrote (anywhere among the options)", 1, 1)
      .option("input", "NAME=FILE", "an input's values, a float32 .npy of its shape", {}, false,
              true)
      .option("output-dir", "OUT",
              "where to write OUTPUT_NAME.npy for each output (other characters than letters, "
              "digits, '_', '-', '.' become '_'; names that then collide get '_1', '_2', ...)")
      .option("seed", "S", "seed of the random inputs (default 0)")
      .option("repeat", "N", "timed repeats (default 5)")
      .option("cuda-graph", "MODE",
              "a GPU model's whole runs as one CUDA graph (on), launch by launch (off), or the "
              "faster of the two as timed when the model opens (auto, the default)",
              {"on", "off", "auto"})
      .flag("profile",
            "also time each kernel call over the repeats (median) and show where the time goes, "
            "each call's GFLOP/s and where its schedule came from")
      .flag("json",
            "print one JSON document {seconds, repeats, outputs: [{name, shape, file}], "
            "profile: [{function, workload, seconds, gflops, schedule}] with --profile}");
  return parser;
}

namespace {

using graph::PlanCall;

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

/// The calls, slowest first, with their share of the calls' total; then the total.
void print_profile(const graph::RunPlan& plan, const std::vector<double>& seconds) {
  double total = 0;
  for (double s : seconds)
    total += s;
  std::vector<size_t> order(seconds.size());
  for (size_t c = 0; c < order.size(); ++c)
    order[c] = c;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return seconds[a] > seconds[b]; });
  std::cout << fmt::format(
      "profile (median of each call over the repeats):\n  {:>4}  {:<44} {:>10} {:>6} {:>9}  "
      "{}\n",
      "call", "workload", "ms", "share", "GFLOP/s", "schedule");
  for (size_t c : order) {
    const PlanCall& call = plan.calls[c];
    std::cout << fmt::format("  {:>4}  {:<44} {:>10.4f} {:>5.1f}% {:>9}  {}\n", c, call.workload,
                             seconds[c] * 1e3, total > 0 ? 100 * seconds[c] / total : 0.0,
                             call.flop > 0 && seconds[c] > 0
                                 ? fmt::format("{:.1f}", call.flop / seconds[c] * 1e-9)
                                 : "-",
                             call.schedule.empty() ? "-" : call.schedule);
  }
  std::cout << fmt::format("  sum of the {} calls: {:.3f} ms\n", seconds.size(), total * 1e3);
}

}  // namespace

int run_run_model(const std::vector<std::string>& in_args) {
  std::optional<ArgParser::Parsed> parsed = parse_command_line(run_model_parser(), in_args);
  if (!parsed)
    return 0;
  const ArgParser::Parsed& p = *parsed;
  const std::string dir = p.positionals().at(0);
  graph::LoadedModel model = graph::LoadedModel::load(dir);
  if (p.has("cuda-graph")) {
    TT_USER_CHECK(model.is_gpu()) << "run-model: --cuda-graph is for a model compiled for a GPU; '"
                                  << dir << "' is a CPU model";
    const std::string mode = p.get("cuda-graph");
    model.set_gpu_launches(mode == "off" ? 0 : mode == "on" ? 1 : 2);
  }
  const graph::RunPlan& plan = model.plan();
  std::map<std::string, std::string> files;
  for (const std::string& a : p.get_all("input")) {
    size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == a.size()) {
      throw UsageError("--input takes NAME=FILE.npy, got '" + a + "'", "run-model");
    }
    files[a.substr(0, eq)] = a.substr(eq + 1);
  }
  for (const auto& [name, file] : files) {
    bool known = false;
    for (const graph::TensorInfo& t : plan.inputs)
      known = known || t.name == name;
    std::string names;
    for (const graph::TensorInfo& t : plan.inputs)
      names += (names.empty() ? "" : ", ") + t.name;
    TT_USER_CHECK(known) << "run-model: the model has no input '" << name << "' (inputs: " << names
                         << ")";
  }
  support::Rng rng(static_cast<uint64_t>(p.get_int("seed", 0, 0, INT64_MAX)));
  std::vector<std::vector<float>> inputs;
  for (const graph::TensorInfo& t : plan.inputs) {
    TT_USER_CHECK(t.dtype == ir::DataType::float32())
        << "run-model: input '" << t.name << "' is " << t.dtype.to_string() << " (float32 only)";
    auto it = files.find(t.name);
    if (it == files.end()) {
      std::vector<float> v(static_cast<size_t>(t.numel()));
      for (float& x : v)
        x = rng.uniform_float(-1.f, 1.f);
      inputs.push_back(std::move(v));
      continue;
    }
    // Bounded by the tensor it fills (8 bytes an element covers every dtype read_npy knows):
    // /dev/zero or a runaway file is refused instead of read until memory runs out.
    graph::NpyArray a = graph::read_npy(it->second, t.numel() * 8 + graph::kNpyHeaderRoom);
    TT_USER_CHECK(a.shape == t.shape)
        << "run-model: input '" << t.name << "' has shape " << shape_str(t.shape) << ", '"
        << it->second << "' holds " << a.dtype.to_string() << shape_str(a.shape);
    inputs.push_back(a.to_floats());
  }
  std::vector<std::vector<float>> outputs;
  for (const graph::TensorInfo& t : plan.outputs) {
    // Run into float32 buffers and written as float32 .npy: an int64 output would overflow its
    // buffer, and a bool (uint8) one would be written as garbage.
    TT_USER_CHECK(t.dtype == ir::DataType::float32())
        << "run-model: output '" << t.name << "' is " << t.dtype.to_string() << " (float32 only)";
    outputs.emplace_back(static_cast<size_t>(t.numel()));
  }
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  for (auto& v : inputs)
    in_ptrs.push_back(v.data());
  for (auto& v : outputs)
    out_ptrs.push_back(v.data());
  measure::TimingOptions timing;
  timing.repeat = static_cast<int>(p.get_int("repeat", 5, 1, 1000));
  measure::TimingResult tr =
      measure::time_with_warmup([&] { model.run(in_ptrs, out_ptrs); }, timing);
  std::vector<double> call_seconds;
  std::optional<graph::LoadedModel::GpuTimes> gpu;
  if (model.is_gpu()) {
    // CUDA events: the device-resident time and each call's, beside the host-to-host wall time.
    gpu = model.gpu_times(std::max(timing.repeat, 10));
    if (p.has("profile"))
      call_seconds = gpu->calls;
  } else if (p.has("profile")) {
    call_seconds = model.profile(in_ptrs, out_ptrs, timing.repeat);
  }
  support::Json out_list = support::Json::array();
  const std::string out_dir = p.get("output-dir", "");
  if (!out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    TT_USER_CHECK(!ec) << "run-model: cannot create '" << out_dir << "': " << ec.message();
  }
  // Decided before any file is written: outputs whose names sanitize alike (`a/b`, `a_b`) must
  // not overwrite each other.
  std::vector<std::string> output_names;
  for (const graph::TensorInfo& t : plan.outputs)
    output_names.push_back(t.name);
  const std::vector<std::string> stems = distinct_file_stems(output_names);
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const graph::TensorInfo& t = plan.outputs[i];
    support::Json j = support::Json::object();
    j["name"] = t.name;
    support::Json shape = support::Json::array();
    for (int64_t d : t.shape)
      shape.push_back(d);
    j["shape"] = std::move(shape);
    if (!out_dir.empty()) {
      std::string file = out_dir + "/" + stems[i] + ".npy";
      graph::write_npy(file, graph::NpyArray::from_floats(t.shape, outputs[i]));
      j["file"] = file;
    }
    out_list.push_back(std::move(j));
  }
  if (p.has("json")) {
    support::Json out = support::Json::object();
    out["model"] = dir;
    out["seconds"] = tr.median_seconds;
    support::Json reps = support::Json::array();
    for (double r : tr.repeats)
      reps.push_back(r);
    out["repeats"] = std::move(reps);
    out["number"] = tr.number;
    out["outputs"] = std::move(out_list);
    if (gpu) {
      support::Json g = support::Json::object();
      g["host_to_host_seconds"] = gpu->host_to_host;
      g["device_resident_seconds"] = gpu->device_resident;
      g["device_bytes"] = gpu->device_bytes;
      g["device_in_use_bytes"] = gpu->device_in_use;
      if (gpu->cuda_graph >= 0) {
        g["cuda_graph"] = gpu->cuda_graph == 1;
        if (gpu->each_seconds > 0) {  // the automatic choice's comparison
          g["launch_by_launch_seconds"] = gpu->each_seconds;
          g["cuda_graph_seconds"] = gpu->graph_seconds;
        }
      }
      out["gpu"] = std::move(g);
    }
    if (p.has("profile")) {
      support::Json calls = support::Json::array();
      for (size_t c = 0; c < call_seconds.size(); ++c) {
        support::Json j = support::Json::object();
        j["function"] = plan.calls[c].function;
        j["workload"] = plan.calls[c].workload;
        j["seconds"] = call_seconds[c];
        // GFLOP/s and where the kernel's schedule came from (older model folders: absent).
        if (plan.calls[c].flop > 0 && call_seconds[c] > 0)
          j["gflops"] = plan.calls[c].flop / call_seconds[c] * 1e-9;
        j["schedule"] = plan.calls[c].schedule;
        calls.push_back(std::move(j));
      }
      out["profile"] = std::move(calls);
    }
    std::cout << out.dump() << "\n";
    return 0;
  }
  std::cout << fmt::format("{}: {:.3f} ms per run (median of {} repeats x {} runs)\n", dir,
                           tr.median_seconds * 1e3, tr.repeats.size(), tr.number);
  if (gpu) {
    std::cout << fmt::format(
        "  CUDA events: {:.3f} ms device resident, {:.3f} ms host to host; device memory "
        "{:.1f} MiB allocated, {:.1f} MiB in use on the device\n",
        gpu->device_resident * 1e3, gpu->host_to_host * 1e3, gpu->device_bytes / 1048576.0,
        gpu->device_in_use / 1048576.0);
    if (gpu->cuda_graph >= 0) {
      std::cout << "  launches: " << (gpu->cuda_graph == 1 ? "one CUDA graph" : "one by one");
      if (gpu->each_seconds > 0)
        std::cout << fmt::format(
            " (timed at open: {:.3f} ms launch by launch, {:.3f} ms as a "
            "graph)",
            gpu->each_seconds * 1e3, gpu->graph_seconds * 1e3);
      std::cout << "\n";
    }
  }
  for (size_t i = 0; i < out_list.size(); ++i) {
    const support::Json& j = out_list.as_array()[i];
    std::cout << "  output " << j.at("name").as_string() << " " << shape_str(plan.outputs[i].shape)
              << (j.contains("file") ? " -> " + j.at("file").as_string() : std::string()) << "\n";
  }
  if (p.has("profile"))
    print_profile(plan, call_seconds);
  return 0;
}

}  // namespace tensortune::cli
