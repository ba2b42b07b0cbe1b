// SPDX-License-Identifier: Apache-2.0
// Graph passes run before a model is partitioned into kernels: constant folding, batch-norm
// folding into convolution weights, identity removal and dead-node elimination.
#pragma once

#include "tensortune/graph/graph.h"

#include <string>
#include <vector>

namespace tensortune::graph {

/// What the passes changed, for logs and tests.
struct PassReport {
  int folded_constants = 0;       ///< nodes replaced by constant values
  int folded_batch_norms = 0;     ///< BatchNormalization nodes merged into a Conv's weights
  int batch_norms_to_affine = 0;  ///< other BatchNormalization nodes turned into Mul + Add
  int removed_identities = 0;     ///< Identity / Dropout nodes bypassed
  int removed_dead = 0;           ///< nodes whose outputs nobody reads
  int transposed_weights = 0;     ///< Gemm weights stored transposed (transB) made [K, N]
  /// "folded 3 constants, 2 batch norms into convolutions, ...".
  std::string to_string() const;
};

/// Replaces every node whose inputs are all constants by its result: Shape from the static
/// shape, views and Gather/Concat/Cast/Unsqueeze of integer data directly, anything else by
/// building it as a kernel and running it once. Returns the number of nodes folded.
int fold_constants(Graph& graph);

/// Merges `Conv -> BatchNormalization` (the Conv's output read only by the BN, constant
/// parameters) into the Conv's weights and bias; any other BatchNormalization (inference mode)
/// becomes `Mul(scale) -> Add(shift)` with per-channel constants. UserError naming the node
/// when a BN is in training mode (more than one output used) or its parameters are not
/// constants. `report` may be null.
void fold_batch_norm(Graph& graph, PassReport* report);

/// Bypasses Identity and inference Dropout nodes. Returns how many were removed.
int remove_identities(Graph& graph);

/// Removes nodes none of whose outputs is read (transitively) by a graph output, then the
/// values nobody refers to. Returns the number of nodes removed.
int eliminate_dead_nodes(Graph& graph);

/// Stores the constant float weight B of every `Gemm` with transB=1 (PyTorch's Linear exports
/// [N, K]) transposed, as [K, N], and clears transB: the kernel then reads B with the output
/// column innermost, so its vectors over N are contiguous loads (and B can be packed into
/// panels) instead of gathers along K. Returns how many weights were transposed.
int transpose_gemm_weights(Graph& graph);

/// The standard pipeline: fold_constants, fold_batch_norm, remove_identities, fold_constants,
/// transpose_gemm_weights, eliminate_dead_nodes; validates the result.
PassReport optimize(Graph& graph);

}  // namespace tensortune::graph
