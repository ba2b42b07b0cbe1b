// SPDX-License-Identifier: Apache-2.0
// Private to src/database: Database::write, the one way a Database method writes.
#pragma once

#include "database/connection.h"
#include "tensortune/database/database.h"

namespace tensortune::database {

namespace detail {
/// How often a write transaction is tried in all when its connection is lost before it commits
/// (each try first waits for the server to come back: see the PostgreSQL backend).
constexpr int kWriteTries = 3;
/// And when the server aborts it to break a deadlock with another transaction.
constexpr int kConflictTries = 10;
}  // namespace detail

template <class Body>
auto Database::write(Body&& body, bool exclusive) {
  for (int attempt = 1;; ++attempt) {
    try {
      detail::Transaction tx(*conn_, exclusive);
      auto result = body();
      tx.commit();
      return result;
    } catch (const detail::ConnectionLost&) {
      if (attempt >= detail::kWriteTries)
        throw;
    } catch (const detail::TransactionConflict&) {
      if (attempt >= detail::kConflictTries)
        throw;
    }
  }
}

}  // namespace tensortune::database
