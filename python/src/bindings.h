// SPDX-License-Identifier: Apache-2.0
// What the define_*.cpp files of the `_tensortune` extension share: one registration function per
// area, keyword options turned into the CLI's parsed options, and NumPy buffers checked against a
// kernel's parameters.
#pragma once

#include "args.h"
#include "tensortune/database/record.h"
#include "tensortune/ir/type.h"

#include <Python.h>
#include <cstdint>
#include <pybind11/pybind11.h>
#include <string>
#include <vector>

namespace tensortune::python {

namespace py = pybind11;

void define_errors(py::module_& m);
void define_te(py::module_& m);
void define_schedule(py::module_& m);
void define_database(py::module_& m);
void define_tune(py::module_& m);
void define_build(py::module_& m);
void define_model(py::module_& m);

/// Parses `options` (a dict of the Python keyword arguments: trials=8 is --trials 8, True is a
/// flag, False and None are left out, a list repeats the option, `_` in a name is `-`) with
/// `parser`, so the Python package takes the CLI's options with the CLI's defaults, checks and
/// messages.
cli::ArgParser::Parsed parse_options(const cli::ArgParser& parser, const py::dict& options);

/// One Python buffer (a NumPy array or anything with the buffer protocol) held for a call:
/// zero-copy, released when destroyed.
class BufferView {
 public:
  /// Checks that `object` is a C-contiguous buffer of `dtype` and `shape`; an output (`output`)
  /// must be writable. UserError "OWNER: input 'PARAM': ..." (or output) otherwise.
  BufferView(py::handle object,
             ir::DataType dtype,
             const std::vector<int64_t>& shape,
             bool output,
             const std::string& owner,
             const std::string& param);
  ~BufferView();
  BufferView(const BufferView&) = delete;
  BufferView& operator=(const BufferView&) = delete;
  void* data() const { return view_.buf; }

 private:
  Py_buffer view_{};
  bool held_ = false;
};

/// A record as a dict of its fields (tensortune/database.py makes it a Record).
py::dict record_dict(const database::Record& record);

/// "[2, 3]".
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace tensortune::python
