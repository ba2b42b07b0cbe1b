// SPDX-License-Identifier: Apache-2.0
// tensortune-worker: the process the measurer builds and runs candidates in (src/measure).
#include "tensortune/measure/worker.h"

#if defined(__SANITIZE_ADDRESS__)
#define TT_WORKER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TT_WORKER_ASAN 1
#endif
#endif

#ifdef TT_WORKER_ASAN
// The measurer reads a candidate's crash from the signal that killed the worker, and its memory
// limit from a failed allocation. AddressSanitizer would instead turn SIGSEGV, SIGBUS and SIGFPE
// into a report and exit status 1, and abort on an allocation the limit refuses; a sanitizer
// build's worker leaves both to the process as a plain build does. ASAN_OPTIONS still overrides.
extern "C" const char* __asan_default_options() {  // NOLINT(readability-identifier-naming)
  return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:allocator_may_return_null=1";
}
#endif

int main(int argc, char** argv) {
  return tensortune::measure::worker_main(argc, argv);
}
