// SPDX-License-Identifier: Apache-2.0
// Fuzz target: JSONL export text -> read_jsonl -> import_jsonl into a fresh temporary database.
// Import is all or nothing: a failed import leaves the record count as it was. Importing the same
// data twice stores nothing new the second time.
#include "common/temp_dir.h"
#include "fuzz_common.h"
#include "tensortune/database/jsonl_io.h"

#include <sstream>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensortune;
  std::istringstream in(fuzz::as_string(data, size));
  return fuzz::guarded([&] {
    database::ImportData import = database::read_jsonl(in, "fuzz.jsonl");
    test::TempDir dir("fuzz_jsonl");
    database::Database db = database::Database::open(dir.file("db.sqlite"));
    for (int round = 0; round < 2; ++round) {
      int64_t before = db.count_records();
      try {
        database::ImportSummary summary = database::import_jsonl(db, import);
        if (round == 1 && (summary.imported != 0 || db.count_records() != before)) {
          fuzz::finding("a second import of the same data stored " +
                        std::to_string(summary.imported) + " records");
        }
      } catch (const UserError&) {
        if (db.count_records() != before) {
          fuzz::finding("a failed import changed the record count from " + std::to_string(before) +
                        " to " + std::to_string(db.count_records()));
        }
        return;
      }
    }
  });
}
