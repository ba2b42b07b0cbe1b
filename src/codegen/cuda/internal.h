// SPDX-License-Identifier: Apache-2.0
// Private to the CUDA C generator: identifiers, the helper functions a module needs, where the
// barriers go, and the printer of one kernel's body.
#pragma once

#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/ir/simplify.h"

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace tensortune::codegen::cuda {

/// Whether `e` loads from `buffer` anywhere.
bool reads_buffer(const ir::Expr& e, const ir::Buffer& buffer);

/// The name of the lane counter of scalarised vector statements (reserved, never an IR name).
inline constexpr const char* kLane = "tt_lane";

/// Device helper functions used by the generated code; emitted once, only those used.
struct Helpers {
  bool floordiv = false;
  bool floormod = false;
  bool float_floormod = false;
  bool min = false;
  bool max = false;
  bool abs = false;
  bool cp_async = false;
  bool cp_async_groups = false;  ///< commit and wait_group, for pipelines of 3 or more stages
  bool dynamic_shared = false;
};

/// The definitions of the used helpers (empty when none is used).
std::string helper_source(const Helpers& helpers);

/// Valid, unique C identifiers for IR objects (variables and buffers, keyed by node address),
/// made from their name hints: "i.o@j.o" -> "i_o_j_o", a clash or a keyword gets a suffix.
class NameTable {
 public:
  /// The name of `key`, assigned from `hint` on first use.
  std::string get(const void* key, const std::string& hint);
  /// The name of `key` when it has one; nullptr otherwise.
  const std::string* find(const void* key) const;

 private:
  std::map<const void*, std::string> names_;
  std::set<std::string> used_;
};

/// The C spelling of a scalar element type; UserError for float16/bfloat16 (naming `what`).
std::string c_type(ir::DataType t, const std::string& what);

/// An identifier made of [A-Za-z0-9_] that is no C++/CUDA keyword or builtin.
std::string sanitize(const std::string& hint);

/// The serial loops pipeline_shared_fetches double-buffered.
struct Pipelines {
  std::set<const ir::StmtNode*> loops;
  /// Each pipelined loop's first statement (the next step's fetch), before which every step
  /// waits for its own copies and then for the block.
  std::set<const ir::StmtNode*> step_starts;
  /// The fetches' stores into the doubled buffers: cp.async copies where their form allows.
  std::set<const ir::Store*> async_stores;
  /// The repeated (double- or more-buffered) shared buffers.
  std::set<const ir::BufferNode*> doubled;
  /// With more than two stages: the statements each followed by a cp.async commit (a fetched
  /// step's last), and per step start the groups it leaves pending (cp.async.wait_group N).
  std::set<const ir::StmtNode*> commit_after;
  std::map<const ir::StmtNode*, int> step_waits;
};

/// The shared memory a kernel for `target` may use: the target's -max-shared-memory when given,
/// else its architecture's opt-in limit (227 KB on sm_90). A kernel over the 48 KB of static
/// shared memory declares it dynamic; only double-buffered tiles go past the target's default.
int64_t shared_memory_limit(const target::Target& target);

/// The kernel with each serial loop (outside the thread loops) whose body fetches shared tiles
/// and then computes from them multi-buffered, as far as the target's shared memory allows
/// (cuda/pipeline.cpp); `out` says which. Nothing before sm_80 (no cp.async). A loop gets the
/// depth its shared buffers ask for (ir::BufferNode::pipeline_stages), else 2; the environment's
/// TT_CUDA_PIPELINE overrides every loop (0 or 1: none; 2 to 4; UserError for another value). A
/// loop without the steps or the shared memory for more stages gets 2. Run after
/// shrink_local_buffers: the printer finds the loops and stores by address.
ir::Stmt pipeline_shared_fetches(const ir::Stmt& kernel,
                                 const target::Target& target,
                                 Pipelines* out);

/// The statements before which a kernel needs __syncthreads(): a shared buffer written by one
/// statement and read (or overwritten) by a later one, at the level where both are siblings
/// outside every thread-bound loop, including from one iteration of a serial loop to the next.
/// A pipelined loop has one barrier at the top of each step, and its doubled buffers are ignored
/// inside it.
std::set<const ir::StmtNode*> plan_barriers(const ir::Stmt& kernel, const Pipelines& pipelines);

/// The kernel with each local buffer that is allocated outside the threadIdx loops, and whose
/// accesses all add the same linear function of the thread indices, reduced to the slice one
/// thread touches (the thread part subtracted): an accumulator tile becomes per-thread registers.
ir::Stmt shrink_local_buffers(const ir::Stmt& kernel);

/// What is known of an integer value: it is `base` plus some multiple of `coeff` (TVM's
/// ModularSet). `coeff` 0: exactly `base`; `coeff` 1: nothing; else `base` is in [0, coeff).
struct ModularSet {
  int64_t coeff = 1;
  int64_t base = 0;
};

/// The values each variable is bound to, for the alignment analysis: let values, the min of a
/// loop of extent 1, an undefined Expr (any value) for other loops. A variable bound several
/// times (copies of an unrolled body) may have any of its values.
using VarBindings = std::map<const ir::VarNode*, std::vector<ir::Expr>>;

/// The bindings of every LetStmt and loop of `kernel`.
VarBindings collect_bindings(const ir::Stmt& kernel);

/// What is known of the integer `e` modulo some number: sums, differences and products of
/// constants and variables, floor division/modulo by constants, min/max/select (either value).
/// Unbound variables (loop and thread indices) are unknown; a float is unknown.
ModularSet modular_set(const ir::Expr& e, const VarBindings& bindings);

/// True when the integer `e` is provably a multiple of `n` > 0 whatever its variables' values.
bool provably_multiple_of(const ir::Expr& e, int64_t n, const VarBindings& bindings);

/// Lanes per vector memory operation (4: float4, 2: float2) for a load or store of `type` at
/// `index`: a float32 vector, unpredicated, at a stride-1 ramp whose lane count the width divides
/// and whose base is a proven multiple of the width. 0 when the access must stay scalarised.
int vector_access_width(ir::DataType type,
                        const ir::Expr& index,
                        const ir::Expr& predicate,
                        const VarBindings& bindings);

/// "float4" or "float2".
std::string vector_type_name(int width);

/// A loop bound to threadIdx.x whose body updates one element that does not depend on it
/// (`buffer[index] = buffer[index] op value`): a reduction across the threads of a block.
struct CrossThreadReduction {
  ir::Buffer buffer;
  ir::Expr index;  ///< flattened
  ir::ReduceKind reducer = ir::ReduceKind::Sum;
};

/// The variables of the loops of `kernel` (before shrink_local_buffers, which removes the thread
/// part of per-thread slices) that reduce across the threads of a block
/// (ir::find_cross_thread_reductions). Throws UserError, naming the loop and kernel, for a
/// thread-bound loop that stores outside itself at an index independent of its variable in a
/// way that cannot be combined.
std::set<const ir::VarNode*> plan_cross_thread_reductions(const ir::Stmt& kernel,
                                                          const std::string& kernel_name);

/// The update of a loop plan_cross_thread_reductions found (looked up again after
/// shrink_local_buffers, which may have replaced the updated buffer by a thread's slice).
CrossThreadReduction cross_thread_update(const ir::For* loop);

/// What the printer of one kernel needs from the module.
struct KernelContext {
  std::string kernel_name;
  std::array<int64_t, 3> grid{{1, 1, 1}};
  std::array<int64_t, 3> block{{1, 1, 1}};
  /// Module buffers (params and global scratch) -> index into CudaModule::buffers.
  const std::map<const ir::BufferNode*, int>* module_buffers = nullptr;
  std::set<const ir::StmtNode*> barriers;
  Helpers* helpers = nullptr;
  /// plan_cross_thread_reductions of the kernel (loop variables).
  std::set<const ir::VarNode*> cross_thread;
  /// For the alignment proofs of vector memory accesses (collect_bindings of the kernel).
  VarBindings bindings;
  /// pipeline_shared_fetches of the kernel.
  Pipelines pipelines;
};

/// Prints one kernel's body; the names of module buffers are given in `names`.
class KernelPrinter {
 public:
  KernelPrinter(KernelContext context, NameTable names);

  /// Prints `kernel` (the top-level nest) as the body of the __global__ function.
  void print_kernel(const ir::Stmt& kernel);

  std::string body() const { return os_.str(); }
  /// `__shared__` declarations, hoisted to the top of the kernel.
  /// `__shared__` declarations, hoisted to the top of the kernel; with `dynamic`, slices of one
  /// dynamic shared array instead (TT_DYNAMIC_SHARED, for kernels over the 48 KB of static
  /// shared memory), each 16-byte aligned.
  std::vector<std::string> shared_declarations(bool dynamic) const;
  int64_t shared_bytes() const { return shared_bytes_; }
  /// Indices (into CudaModule::buffers) of the module buffers the kernel reads or writes.
  const std::set<int>& used_buffers() const { return used_; }

  /// The C text of `e`; for a vector expression, its lane `lane` (an expression, e.g. kLane).
  std::string expr(const ir::Expr& e, const std::string& lane = "");

 private:
  // Statements (cuda/stmt.cpp).
  void stmt(const ir::Stmt& s, bool sole_in_scope);
  void for_loop(const ir::For* op, bool sole_in_scope);
  void bound_loops(const ir::For* op, bool sole_in_scope);
  void store(const ir::Store* op);
  void vector_store(const ir::Store* op, const std::string& guard);
  // Vector memory accesses (cuda/vector.cpp).
  bool vector_memory_store(const ir::Store* op, const std::string& guard);
  bool strided_store_of_vector_loads(const ir::Store* op, const std::string& guard);
  std::vector<std::pair<const ir::Load*, int>> aligned_vector_loads(const ir::Expr& value) const;
  void read_vectors(const std::vector<std::pair<const ir::Load*, int>>& loads);
  bool async_copy(const ir::Store* op, const std::string& guard);
  std::string vector_load_lane(const ir::Load* op, const std::string& lane) const;
  void allocate(const ir::Allocate* op, bool sole_in_scope);
  void let(const ir::LetStmt* op, bool sole_in_scope);
  // Cross-thread reductions (cuda/allreduce.cpp).
  void cross_thread_reduction(const ir::For* op, bool sole_in_scope);
  void combine_across_threads(ir::ReduceKind kind,
                              const std::string& acc,
                              ir::DataType dtype,
                              const std::string& type,
                              bool everywhere);
  std::string combine(ir::ReduceKind kind,
                      const std::string& a,
                      const std::string& b,
                      const std::string& type);
  std::string single_writer_guard(const ir::Buffer& buffer) const;
  void line(const std::string& text);
  void open(const std::string& text);
  void close();
  void enter_range(const ir::Var& var, const ir::Expr& min, const ir::Expr& extent);

  // Expressions (cuda/expr.cpp).
  std::string var_name(const ir::VarNode* v);
  std::string buffer_name(const ir::Buffer& b);
  std::string constant(const ir::Expr& e);
  std::string arith(const ir::Expr& e, const std::string& lane);
  std::string div_mod(const ir::Expr& e, const std::string& lane);
  std::string compare(const ir::Expr& e, const std::string& lane);
  std::string load(const ir::Load* op, const std::string& lane);
  std::string call(const ir::Call* op, const std::string& lane);
  std::string cast(const ir::Cast* op, const std::string& lane);
  bool non_negative(const ir::Expr& e) const;

  KernelContext ctx_;
  NameTable names_;
  std::ostringstream os_;
  int indent_ = 1;
  ir::VarRanges ranges_;
  /// How many enclosing loops bind each ForKind (indexed by the enum value).
  std::array<int, 10> bound_{};
  int thread_depth_ = 0;
  struct SharedArray {
    std::string type, name;
    int64_t elements = 0;
    int64_t bytes = 0;    ///< rounded up to 16
    bool aligned = true;  ///< declared __align__(16) (the slices of a dynamic array all are)
  };
  std::vector<SharedArray> shared_;
  int64_t shared_bytes_ = 0;
  std::set<int> used_;
  /// The vector loads read as float2/float4 by the vector store being printed: the first
  /// temporary (tt_vN) and the lanes per temporary.
  struct VectorLoad {
    int first = 0;
    int width = 0;
  };
  std::map<const ir::Load*, VectorLoad> vector_loads_;
};

}  // namespace tensortune::codegen::cuda
