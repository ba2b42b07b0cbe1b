// SPDX-License-Identifier: Apache-2.0
// Private to src/database: the schema as a list of forward migrations. Version N is what
// migrations 1..N create; a database is opened at its version and migrated forward in one
// transaction per step.
#pragma once

#include <sqlite3.h>

namespace tensortune::database::detail {

/// The number of migrations (= the current schema version).
int schema_version_count();

/// The schema version stored in the file (PRAGMA user_version; 0 for a new, empty file).
int stored_version(sqlite3* db);

/// Applies migrations stored+1 .. `target` (each in its own transaction).
void migrate(sqlite3* db, int target);

}  // namespace tensortune::database::detail
