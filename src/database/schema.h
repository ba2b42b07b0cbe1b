// SPDX-License-Identifier: Apache-2.0
// Private to src/database: the schema as a list of forward migrations, written for SQLite; the
// PostgreSQL backend runs the same list translated to its types. Version N is what migrations 1..N create; a database is
// opened at its version and migrated forward in one transaction per step.
#pragma once

#include "database/connection.h"

namespace tensortune::database::detail {

/// The number of migrations (= the current schema version).
int schema_version_count();

/// The schema version stored in the database (SQLite: PRAGMA user_version; PostgreSQL: the
/// table tensortune_schema); 0 for a new, empty one.
int stored_version(Connection& conn);

/// Applies migrations stored+1 .. `target` (each in its own transaction).
void migrate(Connection& conn, int target);

}  // namespace tensortune::database::detail
