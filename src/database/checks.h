// SPDX-License-Identifier: Apache-2.0
// Private to src/database: the checks a database passes before anything writes to it, so that a
// damaged file is named as such instead of being pruned, imported into or vacuumed.
#pragma once

#include "database/connection.h"

#include <string>

namespace tensortune::database::detail {

/// UserError naming the file and SQLite's first findings unless it passes PRAGMA quick_check
/// (`thorough`: integrity_check, which also compares indexes with their tables). A PostgreSQL
/// server keeps its own pages consistent: nothing to check there.
void check_integrity(Connection& conn, bool thorough);

/// UserError naming the first missing table or column unless the database has every table and
/// column that migrations 1..current create (as SQLite's migrations build them in memory: the
/// PostgreSQL migrations must build the same).
void check_schema(Connection& conn);

}  // namespace tensortune::database::detail
