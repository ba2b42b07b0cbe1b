// SPDX-License-Identifier: Apache-2.0
// BufferView (bindings.h): a kernel's argument taken through the buffer protocol and checked.
#include "bindings.h"
#include "tensortune/support/error.h"

namespace tensortune::python {
namespace {

/// The ir type of a buffer format character of `itemsize` bytes; false for anything else.
bool format_type(const char* format, Py_ssize_t itemsize, ir::DataType* type) {
  std::string f = format == nullptr ? "B" : format;
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<')) {
    f = f.substr(1);
  }
  if (f.size() != 1) {
    return false;
  }
  const int bits = static_cast<int>(itemsize) * 8;
  switch (f[0]) {
    case 'f':
    case 'd':
    case 'e':
      *type = ir::DataType(ir::DataType::Code::Float, bits);
      return true;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
      *type = ir::DataType(ir::DataType::Code::Int, bits);
      return true;
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
      *type = ir::DataType(ir::DataType::Code::UInt, bits);
      return true;
    case '?':
      *type = ir::DataType::boolean();
      return true;
    default:
      return false;
  }
}

/// numpy's name of a type ("float32", "bool").
std::string numpy_name(ir::DataType t) {
  return t.to_string();
}

}  // namespace

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    s += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return s + "]";
}

BufferView::BufferView(py::handle object,
                       ir::DataType dtype,
                       const std::vector<int64_t>& shape,
                       bool output,
                       const std::string& owner,
                       const std::string& param) {
  // The message is made only on failure: a kernel call checks every argument.
  // A constructor that throws runs no destructor: the view is released here.
  auto fail = [&](const std::string& message) {
    if (held_) {
      PyBuffer_Release(&view_);
      held_ = false;
    }
    throw UserError(owner + (output ? ": output '" : ": input '") + param + "': " + message);
  };
  const int flags = PyBUF_STRIDES | PyBUF_FORMAT | (output ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(object.ptr(), &view_, flags) != 0) {
    PyErr_Clear();
    const bool is_buffer = PyObject_CheckBuffer(object.ptr()) != 0;
    fail("expected a " + std::string(output ? "writable " : "") + "NumPy array of " +
         numpy_name(dtype) + shape_text(shape) + ", got " +
         (is_buffer ? "a read-only buffer" : std::string("a ") + Py_TYPE(object.ptr())->tp_name));
  }
  held_ = true;
  ir::DataType got;
  if (!format_type(view_.format, view_.itemsize, &got)) {
    fail("expected " + numpy_name(dtype) + " elements, got the buffer format '" +
         (view_.format != nullptr ? view_.format : "B") + "'");
  }
  if (got != dtype) {
    fail("expected " + numpy_name(dtype) + ", got " + numpy_name(got) + " (convert with .astype(" +
         "numpy." + numpy_name(dtype) + "))");
  }
  bool same_shape = static_cast<size_t>(view_.ndim) == shape.size();
  for (size_t d = 0; same_shape && d < shape.size(); ++d) {
    same_shape = view_.shape[d] == shape[d];
  }
  if (!same_shape) {
    fail("expected the shape " + shape_text(shape) + ", got " +
         shape_text(std::vector<int64_t>(view_.shape, view_.shape + view_.ndim)));
  }
  if (PyBuffer_IsContiguous(&view_, 'C') == 0) {
    fail("the array is not C-contiguous (use numpy.ascontiguousarray)");
  }
}

BufferView::~BufferView() {
  if (held_) {
    PyBuffer_Release(&view_);
  }
}

}  // namespace tensortune::python
