// SPDX-License-Identifier: Apache-2.0
// The runtime that generated CPU code calls: a thread pool for parallel loops and aligned
// allocation for large scratch buffers. C linkage so generated code can call it by name.
#pragma once

#include <cstdint>

extern "C" {

/// Body of a parallel loop: runs iteration `index` with the captured variables in `closure`;
/// returns 0 on success.
typedef int32_t (*tt_parallel_body)(int32_t index, void* closure);  // NOLINT(modernize-use-using)

/// Runs body(i, closure) for i in [0, n) on the runtime's threads and waits; returns the first
/// non-zero result of a body, else 0. Nested calls run serially on the calling thread.
int32_t tt_parallel_for(int32_t n, tt_parallel_body body, void* closure);

/// Sets the number of threads used by tt_parallel_for (>= 1); 0 = hardware concurrency.
void tt_set_num_threads(int32_t n);
int32_t tt_get_num_threads(void);

/// Brings every pool thread to the start of a parallel loop and returns once all have arrived
/// (or after a few milliseconds), with how many arrived (1 with one thread): the workers then spin,
/// ready for the next loop, as they are between the back-to-back kernels of a model. A kernel timed
/// alone after an idle spell (a cache flush, another candidate) would otherwise start with its
/// workers asleep, and the calling thread could claim every chunk before they woke: the kernel then
/// runs serially, and a schedule whose threads fight over cache lines looks as fast as one that
/// does not.
int32_t tt_parallel_wake(void);

/// 64-byte aligned allocation for scratch buffers; never returns null for n > 0 (aborts instead).
/// Blocks of 64 KiB and more are kept when freed (up to 1 GiB in all) and handed out again for
/// the same size, so a kernel's scratch stays mapped from one call to the next (thread-safe);
/// the kept blocks are released when the process exits or the library holding this runtime is
/// unloaded.
void* tt_alloc(int64_t bytes);
/// tt_alloc, but null when the memory is not there: for the host side (the measurer's buffers),
/// which can say so instead of aborting.
void* tt_try_alloc(int64_t bytes);
void tt_free(void* ptr);

}  // extern "C"
