// SPDX-License-Identifier: Apache-2.0
// Private to src/search: the choices of a split knob (ordered factorizations of an axis extent,
// with non-dividing factors for awkward extents) and the factor-moving mutation of Ansor.
#pragma once

#include "tensortune/support/rng.h"

#include <cstdint>
#include <vector>

namespace tensortune::search::detail {

/// Largest innermost factor of a data-parallel split (the widest vector the lowering accepts;
/// register tiles beyond it only spill).
inline constexpr int64_t kMaxInnermostFactor = 64;
/// Largest inner factor of a reduction split (a k tile of a few hundred keeps a packed panel in
/// cache; the hand-written matmul kernels use 128 to 256).
inline constexpr int64_t kMaxReductionFactor = 512;
/// Most choices one split knob keeps (sampling and mutation stay fast).
inline constexpr size_t kMaxSplitChoices = 1000;

/// The prime factors of `n` (n >= 1) with multiplicity, ascending.
std::vector<int64_t> prime_factors(int64_t n);

/// Choices for splitting an axis of `extent` into `inner_levels` + 1 loops: tuples of the inner
/// factors, outermost first (the outer extent is implied, ceil(extent / product)). Every ordered
/// factorization whose product divides `extent` (innermost factor <= `max_innermost`); when
/// `extent` is not a multiple of 16 (and above 16), also those of `extent` rounded up to a multiple
/// of 16 and of 64, which split with a guarded tail; for the vector axis of blocked inputs
/// (`lanes` > 0) holding an odd number of vectors, also those of `extent` rounded up to four
/// vectors. Sorted, unique, at most kMaxSplitChoices (thinned evenly, always keeping the all-ones
/// tuple and the dividing ones first).
std::vector<std::vector<int64_t>> split_choices(int64_t extent,
                                                int inner_levels,
                                                int64_t max_innermost = kMaxInnermostFactor,
                                                int64_t lanes = 0);

/// Vector lengths for an innermost axis of `extent`: 1 (scalar) and the powers of two from 2 to
/// 64 that are not more than twice the extent.
std::vector<int64_t> vector_choices(int64_t extent);

/// Ansor's split mutation: moves one prime factor from a level to another level of choice
/// `current` (the implied outer level included: moving from it multiplies an inner factor, moving
/// to it divides one). Tries a few random moves and returns the index in `choices` of the first
/// result that is a choice, or -1 when none is.
int move_split_factor(const std::vector<std::vector<int64_t>>& choices,
                      int current,
                      support::Rng& rng);

}  // namespace tensortune::search::detail
