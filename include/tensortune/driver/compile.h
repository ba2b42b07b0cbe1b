// SPDX-License-Identifier: Apache-2.0
// Compile-time lookup: the best tuning record of a workload on a target, else the nearest
// compatible record (same operator, other shape) adapted to the new extents, else the default
// schedule; then lowering and code generation. Never links search, cost_model or measure.
#pragma once

#include "tensortune/codegen/artifact.h"
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/codegen/model_entry.h"
#include "tensortune/database/database.h"
#include "tensortune/driver/c_header.h"
#include "tensortune/ir/stmt.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/support/json.h"
#include "tensortune/target/target.h"
#include "tensortune/te/workload.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tensortune::runtime {
struct CudaModelImage;
}  // namespace tensortune::runtime

namespace tensortune::driver {

/// Where a chosen schedule came from.
enum class Source : uint8_t {
  Record,    ///< the best record of this workload on this target identity
  Adapted,   ///< a record of another shape of the same operator, its factors adapted
  Shipped,   ///< a record of the shipped tuning logs, from a CPU whose features this host has
  ZeroShot,  ///< no usable record: a schedule of the workload's own space, ranked without measuring
  Default,   ///< no usable record: the default schedule (no steps)
};
/// "record", "adapted", "shipped", "zero-shot", "default".
const char* source_name(Source source);

/// A chosen schedule and its provenance.
struct Lookup {
  Source source = Source::Default;
  /// The steps to apply, keyed by the looked-up workload.
  schedule::Schedule schedule;
  /// The record applied (Record) or adapted (Adapted); 0 for Default.
  int64_t record_id = 0;
  /// Adapted: the name of the workload the record was tuned for. Shipped: the device it was
  /// tuned on (its fingerprint's cpu and mcpu). ZeroShot: what ranked it and the configuration
  /// ("cost model: C:tile-SSRSRS C.i.split=[4,8,1] ...").
  std::string from_workload;
  /// The record's seconds per call as Database::best ranks it (Record::rank_seconds; 0 for
  /// Default).
  double record_seconds = 0;
  /// "record #12", "adapted from record #7 (matmul_64x64x64_float32)", "shipped record #3
  /// (AMD EPYC, znver4)", "zero-shot (cost model)" or "default schedule".
  std::string describe() const;
  /// {source, provenance, record_id, from_workload, record_seconds}: the provenance fields every
  /// build result (compile --json, compile-model --json, model.json) gives per kernel.
  support::Json to_json() const;
};

/// A looked-up schedule, lowered, and (after Compiler::compile) built.
struct Compiled {
  Lookup lookup;
  ir::LoweredFunc func;
  /// Empty after Compiler::lower_kernel.
  codegen::Artifact artifact;
};

/// What Compiler::export_cuda wrote.
struct ExportedCuda {
  std::string manifest_path;              ///< DIR/NAME.json: buffers and launches per function
  std::vector<std::string> source_paths;  ///< DIR/FUNCTION.cu, one per item
  std::vector<std::string> ptx_paths;     ///< DIR/FUNCTION.ptx, one per item
  std::vector<Compiled> functions;        ///< one per item, in order
};

/// A kernel lowered for a CUDA target, as CUDA C and, where NVRTC is available, PTX.
struct CompiledCuda {
  Compiled compiled;
  codegen::CudaModule module;
  std::string ptx;    ///< empty where NVRTC is missing
  std::string cubin;  ///< SASS for the target's arch, where NVRTC could make it
  /// ptxas's report on each kernel of the cubin (registers, spills, stack), where there is one.
  std::vector<codegen::KernelResources> resources;
};

/// One function of a library written by Compiler::export_library.
struct ExportItem {
  te::Workload workload;
  /// The spec the workload was made from ("matmul:M=64,N=64,K=64"), or "" when unknown; it
  /// names the operator and the shape the nearest-record fallback compares.
  std::string spec;
  /// The exported symbol; "" = lower::function_name(workload).
  std::string name;
};

/// What export_library wrote.
struct ExportedLibrary {
  /// DIR/libNAME.so (DIR/NAME.so, its former name, is a symbolic link to it for one release).
  std::string library_path;
  std::string header_path;  ///< DIR/NAME.h
  /// One per item, in order.
  std::vector<Compiled> functions;
};

/// The identity records are stored and looked up under: the canonical text of the target as
/// the user wrote it (target::Target::parse(text).to_string(), so "native" is "llvm") and
/// codegen::device_fingerprint of it. Tools that write records (tune) and read them (compile,
/// bench, show) must all build it here, from the unresolved target.
database::TargetKey target_key(const target::Target& target);

/// Parses a record's schedule JSON (schedule::parse_schedule). Throws UserError naming the
/// record when the text is malformed, of another format version, names an unknown step kind,
/// or belongs to a workload other than the record's.
schedule::Schedule record_schedule(const database::Record& record);

/// `steps` made to fit `workload` (another shape of the operator they were tuned for): replayed
/// one by one on `workload`'s loop state, a split or tile factor larger than the axis it splits
/// is clamped to that axis's extent (a factor that does not divide is legal: a guarded tail).
/// A step that does not apply is kept unchanged and the rest are not adapted, so replaying the
/// result reports the problem.
std::vector<schedule::Step> adapt_steps(const te::Workload& workload,
                                        const std::vector<schedule::Step>& steps);

/// How far apart two shapes of one operator are: the sum over numeric spec parameters of
/// |ln(1 + a) - ln(1 + b)|, plus 10 for each other parameter that differs or is missing on one
/// side. Throws UserError when a spec is malformed.
double spec_distance(const std::string& spec_a, const std::string& spec_b);

/// A schedule for a workload that has no usable record, chosen without measuring anything
/// (search::ZeroShot, wired in by the caller: the driver never links search).
struct ZeroShotChoice {
  std::vector<schedule::Step> steps;
  std::string ranking;  ///< "cost model" or "sketch prior"
  std::string config;   ///< the configuration, one readable line
};
/// nullopt when there is none for this workload; `target` is the resolved target.
using ZeroShotFn =
    std::function<std::optional<ZeroShotChoice>(const te::Workload&, const target::Target&)>;

/// The ISA features of a device fingerprint ("cpu=...; mcpu=...; features=avx,avx2,fma; ...").
std::set<std::string> fingerprint_features(const std::string& fingerprint);

/// The ISA features a record of `key` needs of the host that runs it: those of its device
/// (fingerprint_features) that code for its target may use (codegen::target_features). A
/// record for "llvm -mcpu=znver3" tuned on an AVX-512 device needs AVX2 and FMA only, so an
/// AVX2 host can use it; a "native" target's code may use all of its device's features.
std::set<std::string> record_needs(const database::TargetKey& key);

/// The compile-time lookup for one target. Not thread-safe (it caches and collects warnings).
class Compiler {
 public:
  /// `db` may be null: every workload then gets the default schedule. It must outlive the
  /// compiler. `target` is the target as parsed from the user's string, unresolved: records are
  /// looked up under target_key(target), and code is generated for it resolved against the host
  /// (codegen::resolve_host). Throws UserError on a target LLVM does not know.
  Compiler(const database::Database* db, const target::Target& target);

  /// Consults `shipped` (the tuning logs shipped with tensortune; it must outlive the compiler)
  /// after the user's database: its best record of the workload under a target that resolves on
  /// this host to the same target as this compiler's, tuned on a device whose ISA features are all
  /// features of this host (the fingerprints' feature lists), so a shipped kernel never uses an
  /// instruction the host lacks. For a GPU target, records of the same target as written (the
  /// architecture's code runs on every device of it). Records of this very device (the same
  /// fingerprint) come first,
  /// then the other devices' in the logs' order; the first device with records of a workload
  /// gives them all. The logs' devices are read here, once: a device added to them later is
  /// seen after another call.
  void set_shipped(const database::Database* shipped);

  /// Gives workloads without a usable record (neither their own nor an adapted one) a zero-shot
  /// schedule before the default one; a choice that does not replay or lower falls through to
  /// the default with a warning (for a GPU target, default_gpu_steps).
  void set_zero_shot(ZeroShotFn zero_shot) { zero_shot_ = std::move(zero_shot); }
  bool zero_shot_enabled() const { return static_cast<bool>(zero_shot_); }

  /// The resolved target code is generated for.
  const target::Target& target() const { return resolved_; }
  /// The identity records are looked up under.
  const database::TargetKey& identity() const { return identity_; }

  /// Chooses the schedule of `workload` (`spec` as in ExportItem): (a) its best Ok record on
  /// identity() whose steps parse and replay (the three fastest are tried); else (b) the nearest
  /// of the best records of other shapes of the same operator (nearest by spec_distance, or by
  /// FLOP count without specs), its steps adapted with adapt_steps, accepted only when they
  /// replay and lower (four are tried); else (c) the default schedule. A record of (a) that no
  /// longer applies adds a warning and falls through; never throws for a bad record.
  /// Costs one indexed query, a JSON parse and a replay when (a) succeeds.
  Lookup lookup(const te::Workload& workload, const std::string& spec = "");
  /// lookup(), then lowering to a function named `name` ("" = lower::function_name); a record
  /// of (a) that replays but fails to lower also falls through, with a warning.
  Compiled lower_kernel(const te::Workload& workload,
                        const std::string& spec = "",
                        const std::string& name = "");
  /// lower_kernel(), then codegen::build_cpu. Throws UserError for a GPU target.
  Compiled compile(const te::Workload& workload,
                   const std::string& spec = "",
                   const std::string& name = "");
  /// Writes DIR/libNAME.so exporting each item's function and NAME_set_num_threads /
  /// NAME_get_num_threads (codegen::export_shared_library with `runtime_archive`, "" = found
  /// automatically), the link DIR/NAME.so to it, and DIR/NAME.h documenting them (c_header).
  /// Creates DIR when missing; UserError when it cannot be created or written.
  ExportedLibrary export_library(const std::vector<ExportItem>& items,
                                 const std::string& dir,
                                 const std::string& name,
                                 const std::string& runtime_archive = "");
  /// export_library in two steps, for a caller that needs the lowered kernels before the
  /// library is written (a model's entry point depends on their prepacked buffers). The first
  /// checks the items' function names and lowers each (lower_kernel), in order.
  std::vector<Compiled> lower_items(const std::vector<ExportItem>& items);
  /// The second writes DIR/libNAME.so (and the link DIR/NAME.so) with `lowered`
  /// (lower_items(items)) and, when `model` is given, the model's entry point
  /// (codegen::export_shared_library), and DIR/NAME.h documenting them (c_header). UserError as
  /// export_library, or when the entry point does not fit.
  ExportedLibrary write_library(const std::vector<ExportItem>& items,
                                std::vector<Compiled> lowered,
                                const std::string& dir,
                                const std::string& name,
                                const std::string& runtime_archive = "",
                                const ModelDecl* model = nullptr);

  /// For a CUDA target: each item's looked-up kernel as CUDA C (DIR/FUNCTION.cu, generate_cuda)
  /// and PTX for the target's architecture (DIR/FUNCTION.ptx, NVRTC; the driver JIT-compiles it
  /// with cuModuleLoadData), and DIR/NAME.json listing per function its buffers (inputs, outputs,
  /// then scratch buffers the host allocates: name, dtype, shape) and its kernels in launch order
  /// (name, grid, block, shared bytes, parameter buffer indices). UserError for a CPU target,
  /// without NVRTC, or when DIR cannot be written.
  ExportedCuda export_cuda(const std::vector<ExportItem>& items,
                           const std::string& dir,
                           const std::string& name);

  /// For a CUDA target: lower_items, each generated as CUDA C and compiled to PTX for the
  /// target's architecture when NVRTC loads; otherwise `ptx` stays empty and `why_no_ptx` (when
  /// given) gets the reason. UserError for a CPU target or code CUDA C cannot express.
  std::vector<CompiledCuda> lower_cuda(const std::vector<ExportItem>& items,
                                       std::string* why_no_ptx = nullptr);
  /// A GPU model library at `path` (codegen::export_cuda_model_library, host code for this
  /// machine): `image` embedded, with the size queries of `sizes`.
  void write_cuda_model_library(const runtime::CudaModelImage& image,
                                const codegen::ModelEntry& sizes,
                                const std::string& path,
                                const std::string& runtime_archive = "") const;

  /// Warnings about records that no longer apply, one per record, in the order they were met.
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// The median seconds of `workload`'s fastest Ok record on identity(), 0 when it has none (or
  /// there is no database). Unlike lookup(), it notes nothing for untuned().
  double stored_best_seconds(const te::Workload& workload) const;
  /// The same for the shipped tuning logs: the fastest record of `workload` that try_shipped
  /// could use on this host, 0 when there is none (or no shipped logs).
  double shipped_best_seconds(const te::Workload& workload) const;
  /// Up to `k` best records of `workload` in the shipped logs, fastest first, of the device
  /// try_shipped would take them from (none without shipped logs): where a tuning job starts.
  std::vector<database::Record> shipped_records(const te::Workload& workload, int k) const;
  /// The names of the workloads looked up that had no usable record of their own (adapted or
  /// default), each once, in the order they were first looked up.
  std::vector<std::string> untuned() const;
  /// One line listing every untuned workload and what it got instead, e.g. "2 workloads have no
  /// tuning record for 'llvm' on this device: relu_64x64_float32 (default schedule), ...";
  /// "" when every workload was tuned.
  std::string summary_warning() const;

 private:
  struct Neighbour {
    database::Record record;
    database::WorkloadInfo info;
  };
  struct Attempt;
  Compiled choose(const te::Workload& workload,
                  const std::string& spec,
                  const std::string& name,
                  bool lower_tuned);
  bool try_tuned(const te::Workload& workload, Attempt& attempt);
  bool try_adapted(const te::Workload& workload, const std::string& spec, Attempt& attempt);
  bool try_zero_shot(const te::Workload& workload, Attempt& attempt);
  bool try_shipped(const te::Workload& workload, Attempt& attempt);
  /// The targets of the shipped logs whose records may run here (see set_shipped).
  std::vector<database::TargetKey> shipped_targets() const;
  /// shipped_targets' CPU part: appends the CPU targets whose code this host runs.
  void cpu_shipped_targets(std::vector<database::TargetKey>& out) const;
  const std::vector<Neighbour>& neighbours(const std::string& op);
  void warn_stale(const database::Record& record, const std::string& why);
  void note(const te::Workload& workload, const Lookup& lookup);

  const database::Database* db_;
  const database::Database* shipped_ = nullptr;
  std::vector<database::TargetKey> shipped_targets_;  ///< shipped_targets(), set by set_shipped
  ZeroShotFn zero_shot_;
  std::map<std::string, std::optional<ZeroShotChoice>> zero_shot_picks_;  ///< by workload key
  target::Target resolved_;
  database::TargetKey identity_;
  std::vector<std::string> warnings_;
  std::set<int64_t> warned_records_;
  struct Untuned {
    size_t order = 0;
    std::string name;
    std::string got;  // Lookup::describe()
  };
  /// Untuned workloads by key.
  std::map<std::string, Untuned> untuned_;
  std::map<std::string, std::vector<Neighbour>> neighbours_;
};

}  // namespace tensortune::driver
