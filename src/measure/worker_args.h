// SPDX-License-Identifier: Apache-2.0
// Private to src/measure: the command line shared by build and run workers, and the text of a
// worker's death for error messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::measure::detail {

/// `--memory-limit-mb M --threads T`, with M = 0 replaced by half of the machine's memory (at
/// least 2 GiB) and T = 0 by the hardware thread count.
std::vector<std::string> worker_args(int64_t memory_limit_mb, int threads);

/// "signal 11 (Segmentation fault)" or "exit status 3", followed by the worker's stderr tail.
std::string death_text(int signal, int exit_status, const std::string& stderr_tail);

}  // namespace tensortune::measure::detail
