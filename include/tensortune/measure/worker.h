// SPDX-License-Identifier: Apache-2.0
// The measurement worker: the process that compiles candidates for the Builder and runs them for
// the Runner, so a candidate that crashes, hangs or exhausts memory costs one record, not the
// job. tools/tensortune-worker is a main() that calls worker_main.
#pragma once

#include <string>

namespace tensortune::measure {

/// Serves requests on the socket `--fd N` until it closes; applies `--memory-limit-mb M` and
/// `--threads T` first. Returns the process exit status.
int worker_main(int argc, char** argv);

/// The worker executable: `explicit_path` if not empty, else $TT_WORKER, else tensortune-worker
/// next to the running executable, else in ../bin beside the binary this code is loaded from
/// (an installed libtensortune.so), else the one in the build tree. UserError naming every place
/// tried when none exists.
std::string find_worker(const std::string& explicit_path = {});

}  // namespace tensortune::measure
