// SPDX-License-Identifier: Apache-2.0
// What the benchmarks that take --name=value options share: the option's value, a number that is
// the whole of its text, and main's answer to a bad argument (the usage and exit 2; a failure
// while running exits 1). A typo must not start hours of tuning with the defaults.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tensortune::bench {

/// The value of `--name=V` among the arguments, or `fallback`.
inline std::string option(int argc,
                          char** argv,
                          const std::string& name,
                          const std::string& fallback) {
  const std::string prefix = "--" + name + "=";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind(prefix, 0) == 0)
      return arg.substr(prefix.size());
  }
  return fallback;
}

/// `text` as a number, the whole of it; std::invalid_argument naming --name when it is not one.
inline double number(const std::string& name, const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value))
    throw std::invalid_argument("--" + name + " expects a number, not '" + text + "'");
  return value;
}

/// `text` as a whole number; std::invalid_argument naming --name when it is not one.
inline int64_t integer(const std::string& name, const std::string& text) {
  const double value = number(name, text);
  if (value != std::floor(value) || std::fabs(value) > 1e15)
    throw std::invalid_argument("--" + name + " expects an integer, not '" + text + "'");
  return static_cast<int64_t>(value);
}

/// main of a benchmark: the usage and 2 when an argument is not --name=value with a name of
/// `names`, 2 when a value is empty; else `body`'s result, 2 when it throws std::invalid_argument
/// (a bad value), 1 when it throws anything else, each with the message after `program`'s name.
inline int run_with_options(const std::string& program,
                            int argc,
                            char** argv,
                            const std::vector<std::string>& names,
                            const std::function<int()>& body) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const bool known = arg.rfind("--", 0) == 0 && eq != std::string::npos &&
                       std::find(names.begin(), names.end(), arg.substr(2, eq - 2)) != names.end();
    if (!known) {
      std::cerr << program << ": unknown argument '" << arg << "'\nusage: " << program;
      for (const std::string& name : names)
        std::cerr << " [--" << name << "=V]";
      std::cerr << "\n(the header of bench/" << program << ".cpp says what each means)\n";
      return 2;
    }
    if (eq + 1 == arg.size()) {
      std::cerr << program << ": " << arg.substr(0, eq) << " needs a value\n";
      return 2;
    }
  }
  try {
    return body();
  } catch (const std::invalid_argument& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace tensortune::bench
