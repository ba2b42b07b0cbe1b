// SPDX-License-Identifier: Apache-2.0
// The C API's errors, version, databases, compilers and lookups (c_api.h).
#include "capi/internal.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/support/file.h"
#include "tensortune/target/target.h"
#include "tensortune/te/operators.h"

#include <exception>
#include <filesystem>
#include <vector>

#if !defined(TT_VERSION) || !defined(TT_VERSION_MAJOR) || !defined(TT_VERSION_MINOR) || \
    !defined(TT_VERSION_PATCH)
#error "TT_VERSION and its parts TT_VERSION_MAJOR, _MINOR and _PATCH must be defined"
#endif
#ifndef TT_SOURCE_DIR
#error \
    "TT_SOURCE_DIR (the source tree, whose tuning_logs/ a build-tree library uses) must be defined"
#endif

namespace tensortune::capi {
namespace {

thread_local std::string last_error;  // NOLINT: the per-thread message c_api.h promises

/// A string field of `lookup`, "" for a null lookup.
const char* text(const tt_lookup* lookup, std::string tt_lookup::*field) {
  return lookup == nullptr ? "" : (lookup->*field).c_str();
}

}  // namespace

tt_status fail(tt_status status, const std::string& message) {
  last_error = message;
  return status;
}

tt_status invalid(const char* function, const std::string& what) {
  return fail(TT_ERROR_INVALID_ARGUMENT, std::string(function) + ": " + what);
}

const te::Workload& workload_of(tt_compiler& compiler, const std::string& spec) {
  auto it = compiler.workloads.find(spec);
  if (it == compiler.workloads.end()) {
    it = compiler.workloads.emplace(spec, te::make_workload(spec)).first;
  }
  return it->second;
}

std::string shipped_logs_path() {
  std::vector<std::string> candidates;
  if (const std::string dir = support::loaded_binary_dir(); !dir.empty()) {
    candidates.push_back(dir + "/../share/tensortune/shipped/cpu.db");
  }
  candidates.push_back(std::string(TT_SOURCE_DIR) + "/tuning_logs/shipped/cpu.db");
  for (const std::string& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec)) {
      const std::filesystem::path canonical = std::filesystem::weakly_canonical(c, ec);
      return ec ? c : canonical.string();
    }
  }
  return "";
}

void note_untuned(tt_compiler& compiler) {
  compiler.untuned = compiler.compiler.untuned();
}

}  // namespace tensortune::capi

using namespace tensortune;  // NOLINT(google-build-using-namespace): the C API's one .cpp

extern "C" {

const char* tt_status_name(tt_status status) {
  switch (status) {
    case TT_OK:
      return "ok";
    case TT_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case TT_ERROR_USER:
      return "user error";
    case TT_ERROR_KERNEL:
      return "kernel error";
    case TT_ERROR_INTERNAL:
      return "internal error";
  }
  return "unknown status";
}

const char* tt_last_error(void) {
  return capi::last_error.c_str();
}

const char* tt_version(void) {
  return TT_VERSION;
}
int tt_version_major(void) {
  return TT_VERSION_MAJOR;
}
int tt_version_minor(void) {
  return TT_VERSION_MINOR;
}
int tt_version_patch(void) {
  return TT_VERSION_PATCH;
}

tt_status tt_db_open(const char* path, int mode, tt_db** out) {
  if (path == nullptr || out == nullptr) {
    return capi::invalid("tt_db_open", "path and out must not be null");
  }
  *out = nullptr;
  if (mode != TT_DB_READ_ONLY && mode != TT_DB_READ_WRITE) {
    return capi::invalid("tt_db_open", "mode is neither TT_DB_READ_ONLY nor TT_DB_READ_WRITE");
  }
  return capi::guarded("tt_db_open", [&] {
    *out = new tt_db{database::Database::open(path, mode == TT_DB_READ_ONLY)};
    return TT_OK;
  });
}

void tt_db_close(tt_db* db) {
  delete db;
}

tt_status tt_db_count_records(const tt_db* db, int64_t* out) {
  if (db == nullptr || out == nullptr) {
    return capi::invalid("tt_db_count_records", "db and out must not be null");
  }
  return capi::guarded("tt_db_count_records", [&] {
    *out = db->db.count_records();
    return TT_OK;
  });
}

tt_status tt_compiler_create(const tt_db* db, const char* target, tt_compiler** out) {
  if (target == nullptr || out == nullptr) {
    return capi::invalid("tt_compiler_create", "target and out must not be null");
  }
  *out = nullptr;
  return capi::guarded("tt_compiler_create", [&] {
    *out = new tt_compiler{
        db,
        nullptr,
        driver::Compiler(db == nullptr ? nullptr : &db->db, target::Target::parse(target)),
        {},
        {}};
    return TT_OK;
  });
}

void tt_compiler_free(tt_compiler* compiler) {
  delete compiler;
}

tt_status tt_compiler_set_shipped(tt_compiler* compiler, const tt_db* shipped) {
  if (compiler == nullptr) {
    return capi::invalid("tt_compiler_set_shipped", "compiler must not be null");
  }
  compiler->shipped = shipped;
  compiler->compiler.set_shipped(shipped == nullptr ? nullptr : &shipped->db);
  return TT_OK;
}

tt_status tt_lookup_best(tt_compiler* compiler, const char* spec, tt_lookup** out) {
  if (compiler == nullptr || spec == nullptr || out == nullptr) {
    return capi::invalid("tt_lookup_best", "compiler, spec and out must not be null");
  }
  *out = nullptr;
  return capi::guarded("tt_lookup_best", [&] {
    const te::Workload& w = capi::workload_of(*compiler, spec);
    driver::Lookup found = compiler->compiler.lookup(w, spec);
    capi::note_untuned(*compiler);
    auto lookup = std::make_unique<tt_lookup>();
    lookup->source = driver::source_name(found.source);
    lookup->describe = found.describe();
    lookup->workload = w.name();
    lookup->workload_key = w.key();
    lookup->schedule = schedule::to_json(found.schedule).dump();
    lookup->record_id = found.record_id;
    lookup->seconds = found.record_seconds;
    const tt_db* from = found.source == driver::Source::Shipped ? compiler->shipped : compiler->db;
    if (found.record_id != 0 && from != nullptr) {
      if (std::optional<database::Record> r = from->db.record(found.record_id)) {
        lookup->tool_version = r->tool_version;
        lookup->git_revision = r->git_revision;
        lookup->device = r->target.fingerprint;
        lookup->timestamp = r->timestamp;
        lookup->run_id = r->run_id;
      }
    }
    *out = lookup.release();
    return TT_OK;
  });
}

const char* tt_shipped_logs_path(void) {
  thread_local std::string path;  // NOLINT: returned to C, valid until the next call
  path = capi::shipped_logs_path();
  return path.c_str();
}

void tt_lookup_free(tt_lookup* lookup) {
  delete lookup;
}

// The getters return "" or 0 for a null lookup, as for a field it does not have.
const char* tt_lookup_source(const tt_lookup* lookup) {
  return capi::text(lookup, &tt_lookup::source);
}
const char* tt_lookup_describe(const tt_lookup* lookup) {
  return capi::text(lookup, &tt_lookup::describe);
}
const char* tt_lookup_workload(const tt_lookup* lookup) {
  return capi::text(lookup, &tt_lookup::workload);
}
const char* tt_lookup_workload_key(const tt_lookup* lookup) {
  return capi::text(lookup, &tt_lookup::workload_key);
}
const char* tt_lookup_schedule(const tt_lookup* lookup) {
  return capi::text(lookup, &tt_lookup::schedule);
}
int64_t tt_lookup_record_id(const tt_lookup* lookup) {
  return lookup == nullptr ? 0 : lookup->record_id;
}
double tt_lookup_seconds(const tt_lookup* lookup) {
  return lookup == nullptr ? 0 : lookup->seconds;
}
const char* tt_lookup_tool_version(const tt_lookup* lookup) {
  return capi::text(lookup, &tt_lookup::tool_version);
}
const char* tt_lookup_git_revision(const tt_lookup* lookup) {
  return capi::text(lookup, &tt_lookup::git_revision);
}
int64_t tt_lookup_timestamp(const tt_lookup* lookup) {
  return lookup == nullptr ? 0 : lookup->timestamp;
}
int64_t tt_lookup_run_id(const tt_lookup* lookup) {
  return lookup == nullptr ? 0 : lookup->run_id;
}
const char* tt_lookup_device(const tt_lookup* lookup) {
  return capi::text(lookup, &tt_lookup::device);
}

}  // extern "C"
