// SPDX-License-Identifier: Apache-2.0
// The message of the error a call throws, for tests of error texts.
#pragma once

#include "tensortune/support/error.h"

#include <string>

namespace tensortune::test {

/// The message of the `Error` that `fn` throws, or "" when it throws none.
template <class Error, class Fn>
std::string error_message(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

/// The UserError's message, or "" when `fn` throws none.
template <class Fn>
std::string user_error(Fn fn) {
  return error_message<UserError>(fn);
}

/// The InternalError's message (a broken invariant), or "" when `fn` throws none.
template <class Fn>
std::string internal_error(Fn fn) {
  return error_message<InternalError>(fn);
}

}  // namespace tensortune::test
