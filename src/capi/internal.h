// SPDX-License-Identifier: Apache-2.0
// The C API's handles (what each opaque struct of c_api.h holds) and the one place C++
// exceptions become status codes.
#pragma once

#include "tensortune/c_api.h"
#include "tensortune/codegen/artifact.h"
#include "tensortune/database/database.h"
#include "tensortune/driver/compile.h"
#include "tensortune/support/error.h"
#include "tensortune/te/workload.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct tt_db {
  tensortune::database::Database db;
};

struct tt_compiler {
  const tt_db* db = nullptr;
  const tt_db* shipped = nullptr;
  tensortune::driver::Compiler compiler;
  /// Workloads by spec as the caller wrote it: making one builds its compute and canonical text.
  std::map<std::string, tensortune::te::Workload> workloads;
  std::vector<std::string> untuned;  ///< compiler.untuned() as of the last lookup or compile
};

struct tt_lookup {
  std::string source, describe, workload, workload_key, schedule;
  int64_t record_id = 0;
  double seconds = 0;
  std::string tool_version, git_revision, device;
  int64_t timestamp = 0, run_id = 0;
};

struct tt_kernel {
  tensortune::codegen::Artifact artifact;
  tensortune::ir::LoweredFunc func;
  std::string describe;
  std::vector<std::string> dtypes;  ///< one per buffer, ir::DataType::to_string
};

namespace tensortune::capi {

/// Records `message` as the calling thread's last error and returns `status`.
tt_status fail(tt_status status, const std::string& message);

/// Runs `body` (returning tt_status); a UserError becomes TT_ERROR_USER, anything else thrown
/// TT_ERROR_INTERNAL, each with its message.
template <class Body>
tt_status guarded(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (const UserError& e) {
    return fail(TT_ERROR_USER, std::string(function) + ": " + e.what());
  } catch (const std::exception& e) {
    return fail(TT_ERROR_INTERNAL, std::string(function) + ": " + e.what());
  } catch (...) {
    return fail(TT_ERROR_INTERNAL, std::string(function) + ": unknown exception");
  }
}

/// TT_ERROR_INVALID_ARGUMENT naming `function` and `what` (a null pointer, a bad index).
tt_status invalid(const char* function, const std::string& what);

/// The workload of `spec`, made once per compiler.
const te::Workload& workload_of(tt_compiler& compiler, const std::string& spec);

/// tt_shipped_logs_path's answer.
std::string shipped_logs_path();

/// Refreshes compiler.untuned from the driver.
void note_untuned(tt_compiler& compiler);

}  // namespace tensortune::capi
