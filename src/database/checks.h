// SPDX-License-Identifier: Apache-2.0
// Private to src/database: the checks a database passes before anything writes to it, so that a
// damaged file is named as such instead of being pruned, imported into or vacuumed.
#pragma once

#include <sqlite3.h>

#include <string>

namespace tensortune::database::detail {

/// UserError naming `path` and SQLite's first findings unless the file passes PRAGMA quick_check
/// (`thorough`: integrity_check, which also compares indexes with their tables).
void check_integrity(sqlite3* db, const std::string& path, bool thorough);

/// UserError naming the first missing table or column unless the file has every table and column
/// that migrations 1..current create.
void check_schema(sqlite3* db, const std::string& path);

}  // namespace tensortune::database::detail
