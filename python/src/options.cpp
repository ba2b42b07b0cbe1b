// SPDX-License-Identifier: Apache-2.0
// parse_options (bindings.h): Python keyword arguments as the CLI's command-line options.
#include "bindings.h"

#include <algorithm>

namespace tensortune::python {
namespace {

/// The text of one option value: Python's str(), except that floats keep their full precision.
std::string value_text(py::handle value) {
  if (PyFloat_Check(value.ptr())) {
    return py::str(py::repr(value));
  }
  return py::str(value);
}

}  // namespace

cli::ArgParser::Parsed parse_options(const cli::ArgParser& parser, const py::dict& options) {
  std::vector<std::string> args;
  for (const auto& [key, value] : options) {
    std::string name = py::str(key);
    std::replace(name.begin(), name.end(), '_', '-');
    if (value.is_none() || (PyBool_Check(value.ptr()) && value.ptr() == Py_False)) {
      continue;
    }
    if (PyBool_Check(value.ptr())) {
      args.push_back("--" + name);
    } else if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) {
      for (py::handle item : value) {
        args.push_back("--" + name);
        args.push_back(value_text(item));
      }
    } else {
      args.push_back("--" + name);
      args.push_back(value_text(value));
    }
  }
  return parser.parse(args);
}

}  // namespace tensortune::python
