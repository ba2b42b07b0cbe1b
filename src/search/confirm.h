// SPDX-License-Identifier: Apache-2.0
// The choice of a job's best after its confirmation (confirm.cpp), apart so it can be tested
// without measuring.
#pragma once

#include "search/task_state.h"

#include <cstdint>
#include <vector>

namespace tensortune::search::detail {

/// Names in `state.result` the database's best Ok record of the task that is not among `failed`,
/// the records that never built or ran when measured again (a build that timed out, a schedule
/// that hangs the compiler): such a record is no best, however fast its stored time. No best
/// (record 0, 0 s) when none is left. The previous best goes to result.unconfirmed_best_id.
void choose_best_after_confirmation(TaskState& state,
                                    database::Database& db,
                                    const database::TargetKey& target_key,
                                    const std::vector<int64_t>& failed);

}  // namespace tensortune::search::detail
