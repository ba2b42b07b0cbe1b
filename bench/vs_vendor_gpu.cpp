// SPDX-License-Identifier: Apache-2.0
// Issue 7's acceptance benchmark: tensortune's best tuned CUDA kernels against cuBLAS (float32
// GEMM 1024^3, 2048^3, 4096^3) and cuDNN (the 8 ResNet-18 conv layers, batch 1, NCHW), both timed
// on the device in this run.
//
// Per case: the best record of the database for the target (the driver's lookup, as `tensortune
// compile`; "adapted" = another shape's record; a case without any is skipped, since the default
// schedule runs on one GPU thread), built as the measurer builds GPU candidates (CUDA C, NVRTC in
// a build worker) and run with measure::GpuKernel, as the GPU worker runs them. The vendor call
// reads the same device inputs: cuBLAS cublasGemmEx with CUBLAS_COMPUTE_32F (no TF32), cuDNN
// cudnnConvolutionForward with CUDNN_FMA_MATH and the algorithm
// cudnnFindConvolutionForwardAlgorithm timed fastest, its workspace allocated
// (vs_vendor_gpu_libs.h; both dlopen-ed, so this builds without CUDA). The two outputs must agree
// (the measurer's tolerance); then both are timed with CUDA events on the same stream under the
// measurer's protocol (measure::time_on_device: number grows until a repeat lasts 50 ms, median of
// 7 repeats, at most 3 s of repeats). Ratios are vendor seconds / tensortune seconds (> 1:
// tensortune is faster); geomean per group. With --tune-trials N, cases with fewer than N records
// are first tuned up to N trials (XGB, seed 0, one job per case) into the database; the reference
// outputs of the tuner are computed on the host CPU (a GEMM 4096^3 reference takes minutes there).
//
// Without a CUDA device it prints one line, "vs_vendor_gpu: no CUDA device: <reason>", and exits
// with status 1 before the database is opened or created.
//
// Acceptance run on a GPU machine (H100, CUDA 13 at /usr/local/cuda), one command line:
//   build/bench/vs_vendor_gpu --target "cuda -arch=sm_90" --db tuning_logs/vs_vendor_gpu.db
//       --tune-trials 1000 --json vs_vendor_gpu.json
// Options: --db PATH (required) --target T ("cuda -arch=sm_90") --tune-trials N (0)
//          --only SUBSTR[,SUBSTR...] --json FILE
// The device checks that go with it (correctness of every operator on the GPU, the GPU worker,
// module unloading, tuning through the command line), skipped where there is no device:
//   ctest --test-dir build -R 'GpuMeasurer|GpuKernel|CudaDevice|GpuTuneCli|VsVendorGpu' -V
#include "args.h"
#include "bench_tuning.h"
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/database/database.h"
#include "tensortune/driver/compile.h"
#include "tensortune/ir/stmt.h"
#include "tensortune/measure/builder.h"
#include "tensortune/measure/gpu_kernel.h"
#include "tensortune/measure/kernel_buffers.h"
#include "tensortune/runtime/cuda_driver.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"
#include "tensortune/te/operators.h"
#include "vs_vendor_gpu_libs.h"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>

namespace tensortune::bench {
namespace {

constexpr const char* kGemmGroup = "GEMM";
constexpr const char* kConvGroup = "ResNet-18 conv";
/// Issue 7's goal: tensortune >= 0.9x cuBLAS on float32 GEMM 4096^3.
constexpr const char* kGoalCase = "gemm_4096";
constexpr double kGoalRatio = 0.9;

struct GpuCase {
  std::string name, group, spec;
  bool conv = false;
  int64_t m = 0, n = 0, k = 0;  ///< GEMM: C[M,N] = A[M,K] B[K,N], row-major
  ConvShape shape;              ///< conv: NCHW data, OIHW weights

  /// The element counts of the inputs, then of the output.
  std::vector<int64_t> sizes() const {
    if (!conv) {
      return {m * k, k * n, m * n};
    }
    const ConvShape& p = shape;
    return {p.n * p.c * p.h * p.w, p.k * p.c * p.r * p.s, p.n * p.k * p.out_h() * p.out_w()};
  }
  int64_t reduction_length() const { return conv ? shape.c * shape.r * shape.s : k; }
};

GpuCase gemm(int64_t size) {
  GpuCase c;
  c.name = fmt::format("gemm_{}", size);
  c.group = kGemmGroup;
  c.spec = fmt::format("matmul:M={},N={},K={}", size, size, size);
  c.m = c.n = c.k = size;
  return c;
}

GpuCase conv(int64_t ch, int64_t hw, int64_t k, int64_t rs, int64_t stride, int64_t pad) {
  GpuCase c;
  c.name = stride == 1 ? fmt::format("conv_{}x{}_{}_{}x{}", ch, hw, k, rs, rs)
                       : fmt::format("conv_{}x{}_{}_{}x{}s{}", ch, hw, k, rs, rs, stride);
  c.group = kConvGroup;
  c.spec = fmt::format("conv2d:N=1,C={},H={},W={},K={},R={},S={},stride={},pad={}", ch, hw, hw, k,
                       rs, rs, stride, pad);
  c.conv = true;
  c.shape = ConvShape{1, ch, hw, hw, k, rs, rs, stride, pad};
  return c;
}

/// Issue 7's cases, in report order.
std::vector<GpuCase> all_cases() {
  return {gemm(1024),
          gemm(2048),
          gemm(4096),
          conv(3, 224, 64, 7, 2, 3),
          conv(64, 56, 64, 3, 1, 1),
          conv(64, 56, 128, 3, 2, 1),
          conv(128, 28, 128, 3, 1, 1),
          conv(128, 28, 256, 3, 2, 1),
          conv(256, 14, 256, 3, 1, 1),
          conv(256, 14, 512, 3, 2, 1),
          conv(512, 7, 512, 3, 1, 1)};
}

struct CaseResult {
  const GpuCase* c = nullptr;
  /// "ok", "skipped: WHY" or "error: WHY".
  std::string status = "ok";
  std::string source;  ///< "record #12", "adapted #7", "untuned"
  int64_t record_id = 0;
  int64_t records = 0;
  double flop = 0;
  double ours_seconds = 0;
  double vendor_seconds = 0;
  std::string vendor;  ///< the vendor routine and its algorithm
  bool ok() const { return status == "ok"; }
  double ratio() const { return vendor_seconds / ours_seconds; }
};

struct RunInfo {
  std::string target, db, device, device_arch;
  int64_t tune_trials = 0;
  measure::TimingOptions timing;
};

void progress(const std::string& text) {
  std::cerr << "vs_vendor_gpu: " << text << std::endl;
}

/// The timing protocol of both sides: number grows until a repeat lasts 50 ms, the median of 7
/// repeats, fewer once the repeats add up to 3 s.
measure::TimingOptions timing_options() {
  measure::TimingOptions t;
  t.repeat = 7;
  t.min_repeat_ms = 50;
  t.budget_s = 3;
  return t;
}

/// Tunes every case with fewer than `trials` records up to `trials`, each in its own job, with the
/// measurement options of `tensortune tune`; a case that cannot be tuned is reported with what it
/// has.
void tune_cases(const std::vector<GpuCase>& cases,
                database::Database& db,
                const target::Target& target,
                int64_t trials) {
  const database::TargetKey key = driver::target_key(target);
  for (const GpuCase& c : cases) {
    try {
      tune_up_to({c.name, c.spec, trials, "vs_vendor_gpu"}, db, target, key,
                 tune_measurer_options(), progress);
    } catch (const UserError& e) {
      progress(c.name + ": tuning failed: " + e.what());
    }
  }
}

/// Device memory freed when it goes out of scope.
struct DeviceBuffer {
  runtime::CudaDevice& device;
  uint64_t ptr = 0;
  DeviceBuffer(runtime::CudaDevice& d, size_t bytes) : device(d), ptr(d.alloc(bytes)) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    try {
      device.free(ptr);
    } catch (const runtime::CudaError&) {  // a lost context freed it
    }
  }
};

/// The vendor libraries' handles, made on first use and kept for the run.
struct Vendors {
  std::unique_ptr<Cublas> cublas;
};

/// The lowered kernel the driver chooses for `c` (its provenance in `r`), or nothing when there is
/// no record to use (`r` says so).
std::optional<ir::LoweredFunc> choose_kernel(const GpuCase& c,
                                             driver::Compiler& compiler,
                                             const database::Database* db,
                                             CaseResult& r) {
  te::Workload workload = te::make_workload(c.spec);
  r.flop = workload.flop_count();
  r.records = db == nullptr
                  ? 0
                  : static_cast<int64_t>(db->history(workload.key(), compiler.identity()).size());
  driver::Compiled chosen = compiler.lower_kernel(workload, c.spec);
  r.record_id = chosen.lookup.record_id;
  switch (chosen.lookup.source) {
    case driver::Source::Record:
      r.source = fmt::format("record #{}", chosen.lookup.record_id);
      break;
    case driver::Source::Adapted:  // another shape's record, its factors adapted
      r.source = fmt::format("adapted #{}", chosen.lookup.record_id);
      break;
    case driver::Source::Shipped:   // CPU targets only: never chosen here
    case driver::Source::ZeroShot:
    case driver::Source::Default:
      r.source = "untuned";
      r.status =
          "skipped: no record for this workload or operator on this target (tune it with "
          "--tune-trials N); the default schedule runs on one GPU thread";
      return std::nullopt;
  }
  return std::move(chosen.func);
}

/// Checks that the kernel's parameters are the buffers the vendor call assumes.
void check_signature(const GpuCase& c, const measure::KernelSignature& sig) {
  const std::vector<int64_t> sizes = c.sizes();
  TT_USER_CHECK(sig.num_inputs == 2 && sig.params.size() == 3)
      << "the kernel has " << sig.num_inputs << " inputs and " << sig.params.size()
      << " parameters, expected 2 and 3";
  for (size_t i = 0; i < sizes.size(); ++i) {
    TT_USER_CHECK(sig.params[i].num_elements() == sizes[i])
        << "parameter '" << sig.params[i].name << "' has " << sig.params[i].num_elements()
        << " elements, expected " << sizes[i];
  }
}

/// Builds, checks and times tensortune's kernel and the vendor's for one case.
void run_case(const GpuCase& c,
              driver::Compiler& compiler,
              const database::Database* db,
              measure::Builder& builder,
              runtime::CudaDevice& device,
              Vendors& vendors,
              const measure::TimingOptions& timing,
              CaseResult& r) {
  std::optional<ir::LoweredFunc> func = choose_kernel(c, compiler, db, r);
  if (!func) {
    return;
  }
  progress(fmt::format("{}: building ({})", c.name, r.source));
  const measure::BuildResult built = builder.build({*func}).at(0);
  TT_USER_CHECK(built.ok()) << "tensortune's kernel does not build: " << built.message;
  const measure::KernelSignature& sig = built.signature;
  check_signature(c, sig);
  const size_t out = 2;
  const auto out_bytes = static_cast<size_t>(sig.params[out].num_bytes());

  // tensortune's kernel: inputs from seed 1, the output poisoned, one call (the warm-up).
  measure::KernelBuffers ours(sig);
  ours.fill_inputs(1);
  ours.poison_outputs();
  measure::GpuKernel kernel(device, built.object);
  kernel.upload(ours);
  const std::function<void()> call = [&] {
    kernel.call();
  };
  const double warmup = device.time_events(1, call);
  device.synchronize();
  kernel.download_outputs(ours);

  // The vendor's, on the same device inputs, into an output of its own (poisoned too).
  measure::KernelBuffers vendor_host(sig);
  vendor_host.copy_inputs_from(ours);
  vendor_host.poison_outputs();
  DeviceBuffer vendor_out(device, out_bytes);
  device.copy_to_device(vendor_out.ptr, vendor_host.data(out), out_bytes);
  const uint64_t a = kernel.buffer(0);
  const uint64_t b = kernel.buffer(1);
  std::function<void()> vendor_call;
  std::unique_ptr<CudnnConv> cudnn;
  if (c.conv) {
    cudnn = std::make_unique<CudnnConv>(device, c.shape);
    vendor_call = [&] {
      cudnn->run(a, b, vendor_out.ptr);
    };
    r.vendor = "cuDNN " + cudnn->describe();
  } else {
    if (!vendors.cublas) {
      vendors.cublas = std::make_unique<Cublas>(device);
    }
    vendor_call = [&] {
      vendors.cublas->gemm(c.m, c.n, c.k, a, b, vendor_out.ptr);
    };
    r.vendor = "cuBLAS " + Cublas::describe();
  }
  const double vendor_warmup = device.time_events(1, vendor_call);
  device.synchronize();
  device.copy_to_host(vendor_host.data(out), vendor_out.ptr, out_bytes);
  const std::optional<std::string> diff = measure::compare_output(
      ours, out, vendor_host.bytes(out), measure::Tolerance::for_reduction(c.reduction_length()));
  TT_USER_CHECK(!diff) << "tensortune and " << (c.conv ? "cuDNN" : "cuBLAS")
                       << " disagree (tensortune vs vendor): " << *diff;

  progress(fmt::format("{}: timing", c.name));
  r.ours_seconds = measure::time_on_device(device, call, warmup, timing).median_seconds;
  r.vendor_seconds =
      measure::time_on_device(device, vendor_call, vendor_warmup, timing).median_seconds;
}

double gflops(double flop, double seconds) {
  return seconds > 0 ? flop / seconds / 1e9 : 0;
}

/// The geomean of the ratios of the group's measured cases (0 when none), and how many.
std::pair<double, int> geomean(const std::vector<CaseResult>& results, const std::string& group) {
  double log_sum = 0;
  int n = 0;
  for (const CaseResult& r : results) {
    if (r.ok() && r.c->group == group) {
      log_sum += std::log(r.ratio());
      ++n;
    }
  }
  return {n > 0 ? std::exp(log_sum / n) : 0.0, n};
}

const CaseResult* find_case(const std::vector<CaseResult>& results, const std::string& name) {
  for (const CaseResult& r : results) {
    if (r.c->name == name) {
      return &r;
    }
  }
  return nullptr;
}

std::string goal_text(const std::vector<CaseResult>& results) {
  const CaseResult* r = find_case(results, kGoalCase);
  std::string head = fmt::format("goal: {} >= {:.1f}x cuBLAS: ", kGoalCase, kGoalRatio);
  if (r == nullptr) {
    return head + "not run (not selected)";
  }
  if (!r->ok()) {
    return head + "not measured (" + r->status + ")";
  }
  return head +
         fmt::format("{} ({:.2f}x)", r->ratio() >= kGoalRatio ? "met" : "NOT met", r->ratio());
}

void print_report(std::ostream& os, const RunInfo& info, const std::vector<CaseResult>& results) {
  os << fmt::format("vs_vendor_gpu: {} ({}), target \"{}\", db {}, tune-trials {}\n", info.device,
                    info.device_arch, info.target, info.db, info.tune_trials);
  os << "ratio = vendor time / tensortune time (> 1: tensortune is faster); float32, CUDA events, "
        "median of repeats\n\n";
  os << fmt::format("{:<24} {:<13} {:>10} {:>10} {:>10} {:>10} {:>7}\n", "case", "source",
                    "ours ms", "GFLOP/s", "vendor ms", "GFLOP/s", "ratio");
  for (const CaseResult& r : results) {
    if (!r.ok()) {
      os << fmt::format("{:<24} {:<13} {}\n", r.c->name, r.source, r.status);
      continue;
    }
    os << fmt::format("{:<24} {:<13} {:>10.3f} {:>10.1f} {:>10.3f} {:>10.1f} {:>6.2f}x\n",
                      r.c->name, r.source, r.ours_seconds * 1e3, gflops(r.flop, r.ours_seconds),
                      r.vendor_seconds * 1e3, gflops(r.flop, r.vendor_seconds), r.ratio());
  }
  os << "\n";
  for (const char* group : {kGemmGroup, kConvGroup}) {
    auto [mean, n] = geomean(results, group);
    os << fmt::format("geomean {:<16} {}\n", group,
                      n > 0 ? fmt::format("{:.2f}x over {} cases", mean, n) : "no case measured");
  }
  os << goal_text(results) << "\n\nvendor routines:\n";
  for (const CaseResult& r : results) {
    if (r.ok()) {
      os << fmt::format("  {:<24} {}\n", r.c->name, r.vendor);
    }
  }
}

support::Json report_json(const RunInfo& info, const std::vector<CaseResult>& results) {
  support::Json doc = support::Json::object();
  doc["benchmark"] = "vs_vendor_gpu";
  doc["device"] = info.device;
  doc["device_arch"] = info.device_arch;
  doc["target"] = info.target;
  doc["db"] = info.db;
  doc["tune_trials"] = info.tune_trials;
  doc["timing"] = info.timing.to_json();
  support::Json cases = support::Json::array();
  for (const CaseResult& r : results) {
    support::Json c = support::Json::object();
    c["name"] = r.c->name;
    c["group"] = r.c->group;
    c["spec"] = r.c->spec;
    c["status"] = r.status;
    c["source"] = r.source;
    c["record_id"] = r.record_id;
    c["records"] = r.records;
    c["flop"] = r.flop;
    if (r.ok()) {
      c["ours_seconds"] = r.ours_seconds;
      c["vendor_seconds"] = r.vendor_seconds;
      c["ours_gflops"] = gflops(r.flop, r.ours_seconds);
      c["vendor_gflops"] = gflops(r.flop, r.vendor_seconds);
      c["ratio"] = r.ratio();
      c["vendor"] = r.vendor;
    }
    cases.push_back(std::move(c));
  }
  doc["cases"] = std::move(cases);
  support::Json groups = support::Json::object();
  for (const char* group : {kGemmGroup, kConvGroup}) {
    auto [mean, n] = geomean(results, group);
    support::Json g = support::Json::object();
    g["geomean_ratio"] = mean;
    g["cases"] = static_cast<int64_t>(n);
    groups[group] = std::move(g);
  }
  doc["groups"] = std::move(groups);
  doc["goal"] = goal_text(results);
  return doc;
}

cli::ArgParser parser() {
  cli::ArgParser p("vs_vendor_gpu",
                   "vs_vendor_gpu --db PATH [--target T] [--tune-trials N] [--only SUBSTR] "
                   "[--json FILE]",
                   "Issue 7's acceptance benchmark: tensortune's best CUDA kernels against cuBLAS "
                   "(GEMM) and cuDNN (ResNet-18 convs), float32, both timed on the device in this "
                   "run. Without a CUDA device it says so and exits with status 1.",
                   "");
  p.option("db", "PATH", "tuning database with the records (required)", {}, true)
      .option("target", "T", "CUDA target (default \"cuda -arch=sm_90\")")
      .option("tune-trials", "N", "first tune cases with fewer records up to N trials (default 0)")
      .option("only", "SUBSTR", "run only the cases whose name contains one of these (comma list)")
      .option("json", "FILE", "write every figure to FILE");
  return p;
}

/// The database: tuned into first with --tune-trials, else opened read-only when it exists.
std::optional<database::Database> open_database(const std::vector<GpuCase>& cases,
                                                const target::Target& target,
                                                const RunInfo& info) {
  std::optional<database::Database> db;
  if (info.tune_trials > 0) {
    db.emplace(database::Database::open(info.db));
    tune_cases(cases, *db, target, info.tune_trials);
  } else if (std::filesystem::exists(info.db)) {
    db.emplace(database::Database::open(info.db, true));
  } else {
    progress("no database at '" + info.db + "': every case is untuned");
  }
  return db;
}

/// Runs every case; a CUDA error that loses the context leaves the remaining cases unrun.
std::vector<CaseResult> run_cases(const std::vector<GpuCase>& cases,
                                  driver::Compiler& compiler,
                                  const database::Database* db,
                                  const target::Target& target,
                                  runtime::CudaDevice& device,
                                  const measure::TimingOptions& timing) {
  measure::BuilderOptions build_options;
  build_options.workers = 1;
  build_options.timeout_s = 300;
  measure::Builder builder(target, build_options);
  Vendors vendors;
  std::vector<CaseResult> results(cases.size());
  std::string lost;  // the case whose CUDA error lost the context
  for (size_t i = 0; i < cases.size(); ++i) {
    CaseResult& r = results[i];
    r.c = &cases[i];
    if (!lost.empty()) {
      r.status = "error: not run: the CUDA context was lost in " + lost;
      continue;
    }
    try {
      run_case(cases[i], compiler, db, builder, device, vendors, timing, r);
    } catch (const runtime::CudaError& e) {
      r.status = std::string("error: ") + e.what();
      if (!e.leaves_context_usable()) {  // the remaining cases cannot run in this process
        lost = cases[i].name;
      }
    } catch (const std::exception& e) {  // UserError, a vendor library's refusal
      r.status = std::string("error: ") + e.what();
    }
    if (!r.ok()) {
      progress(cases[i].name + ": " + r.status);
    }
  }
  return results;
}

int run(const std::vector<std::string>& args) {
  const cli::ArgParser spec = parser();
  const std::optional<cli::ArgParser::Parsed> parsed = cli::parse_command_line(spec, args);
  if (!parsed) {
    return 0;  // --help
  }
  const cli::ArgParser::Parsed& p = *parsed;
  RunInfo info;
  info.target = p.get("target", "cuda -arch=sm_90");
  info.db = p.get("db");
  info.tune_trials = p.get_int("tune-trials", 0, 0, int64_t{1} << 30);
  info.timing = timing_options();
  const target::Target target = target::Target::parse(info.target);
  TT_USER_CHECK(target.is_gpu()) << "--target '" << info.target
                                 << "' is not a CUDA target (e.g. \"cuda -arch=sm_90\")";
  std::vector<GpuCase> cases;
  for (GpuCase& c : all_cases()) {
    if (selected(c.name, p.get("only"))) {
      cases.push_back(std::move(c));
    }
  }
  TT_USER_CHECK(!cases.empty()) << "--only '" << p.get("only") << "' selects no case";
  // Before the database is opened or created: without a device nothing can be measured.
  if (const std::string why = runtime::cuda_unavailable_reason(); !why.empty()) {
    std::cerr << "vs_vendor_gpu: no CUDA device: " << why << "\n";
    return 1;
  }
  std::string why;
  TT_USER_CHECK(codegen::nvrtc_available(&why)) << "nvrtc: not available: " << why;

  std::optional<database::Database> db = open_database(cases, target, info);
  runtime::CudaDevice device(0);
  info.device = device.info().name;
  info.device_arch = device.info().arch();
  if (target.arch != info.device_arch) {
    progress("warning: the target's arch " + target.arch + " is not the device's " +
             info.device_arch);
  }
  for (const std::string& missing : {cublas_unavailable_reason(), cudnn_unavailable_reason()}) {
    if (!missing.empty()) {
      progress("warning: " + missing);
    }
  }
  driver::Compiler compiler(db ? &*db : nullptr, target);
  const std::vector<CaseResult> results =
      run_cases(cases, compiler, db ? &*db : nullptr, target, device, info.timing);
  for (const std::string& w : compiler.warnings()) {
    progress("warning: " + w);
  }
  print_report(std::cout, info, results);
  if (p.has("json")) {
    std::ofstream file(p.get("json"));
    file << report_json(info, results).dump(2) << "\n";
    TT_USER_CHECK(file.good()) << "cannot write '" << p.get("json") << "'";
  }
  return 0;
}

}  // namespace
}  // namespace tensortune::bench

int main(int argc, char** argv) {
  return tensortune::cli::run_program("vs_vendor_gpu", argc, argv, tensortune::bench::run);
}
