// SPDX-License-Identifier: Apache-2.0
// The message of the UserError a call throws, for tests of error texts.
#pragma once

#include "tensortune/support/error.h"

#include <string>

namespace tensortune::test {

/// The UserError's message, or "" when `fn` throws none.
template <class Fn>
std::string user_error(Fn fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace tensortune::test
