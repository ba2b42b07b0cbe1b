// SPDX-License-Identifier: Apache-2.0
// The error hierarchy (user errors blame the input, internal errors blame us) and the two check
// macros. See docs/style.md section 4.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace tensortune {

/// Base of every exception tensortune throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad input: a compute, a schedule, a command line, a file. Exit code 1 in the CLI.
class UserError : public Error {
 public:
  using Error::Error;
};

/// A schedule step is illegal for the loop state it is applied to. The search drops such
/// candidates.
class ScheduleError : public UserError {
 public:
  using UserError::UserError;
};

/// A broken invariant: a bug in tensortune. Exit code 70 in the CLI.
class InternalError : public Error {
 public:
  using Error::Error;
};

namespace support {

/// Collects a streamed message and throws it as `E` when destroyed; used only by the check macros.
template <class E>
class ErrorBuilder {
 public:
  ErrorBuilder() = default;
  ErrorBuilder(const char* file, int line, const char* cond) {
    os_ << file << ":" << line << ": check failed: " << cond << ": ";
  }
  ErrorBuilder(const ErrorBuilder&) = delete;
  ErrorBuilder& operator=(const ErrorBuilder&) = delete;
  [[noreturn]] ~ErrorBuilder() noexcept(false) { throw E(os_.str()); }
  template <class T>
  ErrorBuilder& operator<<(const T& value) {
    os_ << value;
    return *this;
  }

 private:
  std::ostringstream os_;
};

}  // namespace support
}  // namespace tensortune

/// Checks an invariant; on failure throws InternalError with file, line and the streamed message.
#define TT_CHECK(cond) \
  if (cond) {          \
  } else               \
    ::tensortune::support::ErrorBuilder<::tensortune::InternalError>(__FILE__, __LINE__, #cond)

/// Checks user input; on failure throws UserError with the streamed message only.
#define TT_USER_CHECK(cond) \
  if (cond) {               \
  } else                    \
    ::tensortune::support::ErrorBuilder<::tensortune::UserError>()
