// SPDX-License-Identifier: Apache-2.0
// Tensor expressions from Python: Expr with Python's operators, IterVar, Tensor, Workload,
// placeholder / compute / reduce_axis / the reductions and intrinsics, the operator library and
// workload specs. tensortune/te.py gives them TVM's names and keyword arguments.
#include "bindings.h"
#include "tensortune/ir/ir_printer.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <optional>
#include <pybind11/functional.h>
#include <pybind11/stl.h>

namespace tensortune::python {
namespace {

using ir::Expr;

/// A Python value as an expression: an Expr, an IterVar (its variable), a bool, an int (int32, or
/// int64 beyond its range) or a float (float32); nullopt for anything else.
std::optional<Expr> try_expr(py::handle h) {
  if (py::isinstance<Expr>(h)) {
    return h.cast<Expr>();
  }
  if (py::isinstance<ir::IterVar>(h)) {
    return Expr(h.cast<ir::IterVar>().var);
  }
  if (PyBool_Check(h.ptr())) {
    return ir::make_const(ir::DataType::boolean(), int64_t{h.ptr() == Py_True ? 1 : 0});
  }
  if (PyLong_Check(h.ptr())) {
    const int64_t v = h.cast<int64_t>();
    if (v >= INT32_MIN && v <= INT32_MAX) {
      return Expr(static_cast<int>(v));
    }
    return ir::make_const(ir::DataType::int64(), v);
  }
  if (PyFloat_Check(h.ptr())) {
    return Expr(static_cast<float>(h.cast<double>()));
  }
  return std::nullopt;
}

Expr to_expr(py::handle h, const std::string& what) {
  std::optional<Expr> e = try_expr(h);
  if (!e) {
    throw UserError(what + ": expected an expression or a number, got a " +
                    std::string(Py_TYPE(h.ptr())->tp_name));
  }
  return *e;
}

using Binary = Expr (*)(Expr, Expr);

/// A Python binary operator: NotImplemented when the other operand is no expression, so Python
/// tries the reflected one; `reflected` swaps the operands (__radd__).
template <class Class>
void def_binary(Class& c, const char* name, Binary f, bool reflected) {
  c.def(name, [f, reflected](py::handle self, py::handle other) -> py::object {
    std::optional<Expr> a = try_expr(self);
    std::optional<Expr> b = try_expr(other);
    if (!a || !b) {
      return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    }
    return py::cast(reflected ? f(*b, *a) : f(*a, *b));
  });
}

template <class Class>
void add_operators(Class& c) {
  struct Op {
    const char* name;
    const char* reflected;
    Binary f;
  };
  const Op ops[] = {
      {"__add__", "__radd__",
       [](Expr a, Expr b) {
         return a + b;
       }},
      {"__sub__", "__rsub__",
       [](Expr a, Expr b) {
         return a - b;
       }},
      {"__mul__", "__rmul__",
       [](Expr a, Expr b) {
         return a * b;
       }},
      {"__truediv__", "__rtruediv__",
       [](Expr a, Expr b) {
         return a / b;
       }},
      {"__floordiv__", "__rfloordiv__",
       [](Expr a, Expr b) {
         return a / b;
       }},
      {"__mod__", "__rmod__",
       [](Expr a, Expr b) {
         return a % b;
       }},
      {"__pow__", "__rpow__",
       [](Expr a, Expr b) {
         return ir::pow(a, b);
       }},
      {"__and__", "__rand__",
       [](Expr a, Expr b) {
         return a && b;
       }},
      {"__or__", "__ror__",
       [](Expr a, Expr b) {
         return a || b;
       }},
      {"__lt__", nullptr,
       [](Expr a, Expr b) {
         return a < b;
       }},
      {"__le__", nullptr,
       [](Expr a, Expr b) {
         return a <= b;
       }},
      {"__gt__", nullptr,
       [](Expr a, Expr b) {
         return a > b;
       }},
      {"__ge__", nullptr,
       [](Expr a, Expr b) {
         return a >= b;
       }},
      {"__eq__", nullptr,
       [](Expr a, Expr b) {
         return a == b;
       }},
      {"__ne__", nullptr,
       [](Expr a, Expr b) {
         return a != b;
       }},
  };
  for (const Op& op : ops) {
    def_binary(c, op.name, op.f, false);
    if (op.reflected != nullptr) {
      def_binary(c, op.reflected, op.f, true);
    }
  }
  c.def("__neg__", [](py::handle self) { return -to_expr(self, "-x"); });
  c.def("__invert__", [](py::handle self) { return !to_expr(self, "~x"); });
  c.def("__hash__", [](py::handle self) { return reinterpret_cast<intptr_t>(self.ptr()); });
  c.def("__bool__", [](py::handle) -> bool {
    throw UserError(
        "an expression has no truth value while it is being declared: use te.select(cond, a, b) "
        "for a choice, & and | for and / or");
  });
}

std::vector<ir::IterVar> axes_of(py::handle axis) {
  if (py::isinstance<ir::IterVar>(axis)) {
    return {axis.cast<ir::IterVar>()};
  }
  return axis.cast<std::vector<ir::IterVar>>();
}

void define_expressions(py::module_& m) {
  py::class_<Expr> expr(m, "Expr",
                        "An expression of a compute body: built from index variables, tensor "
                        "reads (A[i, k]), numbers and Python's operators (+ - * / // % ** < <= "
                        "> >= == != & | ~ and unary -).");
  expr.def_property_readonly(
          "dtype", [](const Expr& e) { return e.type().to_string(); }, "Its type, e.g. 'float32'.")
      .def(
          "astype",
          [](const Expr& e, const std::string& t) { return ir::cast(ir::DataType::parse(t), e); },
          py::arg("dtype"), "The expression converted to `dtype`.")
      .def("__str__", [](const Expr& e) { return ir::to_string(e); })
      .def("__repr__", [](const Expr& e) { return "<Expr " + ir::to_string(e) + ">"; });
  add_operators(expr);

  py::class_<ir::IterVar> iv(m, "IterVar",
                             "An index variable over [0, extent): a compute axis, or a reduction "
                             "axis from te.reduce_axis. Usable wherever an expression is.");
  iv.def_property_readonly(
        "var", [](const ir::IterVar& v) { return Expr(v.var); }, "The variable as an expression.")
      .def_property_readonly(
          "name", [](const ir::IterVar& v) { return v.var.name(); }, "Its name.")
      .def_readonly("extent", &ir::IterVar::extent, "The number of values it takes.")
      .def("__repr__", [](const ir::IterVar& v) {
        return "<IterVar " + v.var.name() + " in [0, " + std::to_string(v.extent) + ")>";
      });
  add_operators(iv);

  m.def(
      "_const",
      [](py::object value, const std::string& dtype) {
        const ir::DataType t = ir::DataType::parse(dtype);
        if (t.is_float()) {
          return ir::make_const(t, value.cast<double>());
        }
        return ir::make_const(t, value.cast<int64_t>());
      },
      "A constant of `dtype`.");
  m.def("_cast", [](const std::string& dtype, py::handle x) {
    return ir::cast(ir::DataType::parse(dtype), to_expr(x, "cast"));
  });
  m.def("_select", [](py::handle c, py::handle a, py::handle b) {
    return ir::select(to_expr(c, "select"), to_expr(a, "select"), to_expr(b, "select"));
  });
  using Unary = Expr (*)(Expr);
  const std::pair<const char*, Unary> unary[] = {
      {"exp", ir::exp}, {"log", ir::log}, {"sqrt", ir::sqrt},   {"tanh", ir::tanh},
      {"erf", ir::erf}, {"abs", ir::abs}, {"floor", ir::floor}, {"ceil", ir::ceil},
  };
  for (const auto& [name, f] : unary) {
    m.def((std::string("_") + name).c_str(),
          [f, name = std::string(name)](py::handle x) { return f(to_expr(x, name)); });
  }
  m.def("_pow",
        [](py::handle x, py::handle y) { return ir::pow(to_expr(x, "pow"), to_expr(y, "pow")); });
  m.def("_min",
        [](py::handle x, py::handle y) { return ir::min(to_expr(x, "min"), to_expr(y, "min")); });
  m.def("_max",
        [](py::handle x, py::handle y) { return ir::max(to_expr(x, "max"), to_expr(y, "max")); });
  m.def("_reduce", [](const std::string& kind, py::handle source, py::handle axis) {
    const Expr s = to_expr(source, kind);
    const std::vector<ir::IterVar> axes = axes_of(axis);
    if (kind == "sum") {
      return te::sum(s, axes);
    }
    if (kind == "prod") {
      return te::prod(s, axes);
    }
    if (kind == "max") {
      return te::max_reduce(s, axes);
    }
    return te::min_reduce(s, axes);
  });
}

void define_tensors(py::module_& m) {
  py::class_<te::Tensor>(m, "Tensor",
                         "A tensor: a placeholder (an input) or the output of a compute. "
                         "T[i, j] reads an element inside a compute body.")
      .def_property_readonly("name", &te::Tensor::name, "Its name.")
      .def_property_readonly("shape", &te::Tensor::shape, "Its extents, outermost first.")
      .def_property_readonly(
          "dtype", [](const te::Tensor& t) { return t.dtype().to_string(); },
          "Its element type, e.g. 'float32'.")
      .def_property_readonly("ndim", &te::Tensor::ndim, "Its number of dimensions.")
      .def_property_readonly(
          "tag", [](const te::Tensor& t) { return t.op()->tag; },
          "What its operation is ('matmul', 'elemwise', ...; '' unknown).")
      .def("__getitem__",
           [](const te::Tensor& t, py::handle index) {
             std::vector<Expr> indices;
             if (PyTuple_Check(index.ptr())) {
               for (py::handle i : index) {
                 indices.push_back(to_expr(i, "index of " + t.name()));
               }
             } else {
               indices.push_back(to_expr(index, "index of " + t.name()));
             }
             return t(indices);
           })
      .def("__repr__", [](const te::Tensor& t) {
        return "<Tensor " + t.name() + ": " + t.dtype().to_string() + shape_text(t.shape()) + ">";
      });

  m.def("_placeholder",
        [](std::vector<int64_t> shape, const std::string& dtype, const std::string& name) {
          return te::placeholder(std::move(shape), ir::DataType::parse(dtype), name);
        });
  m.def("_reduce_axis", &te::reduce_axis);
  m.def("_compute",
        [](std::vector<int64_t> shape, const py::function& fcompute, const std::string& name,
           const std::string& tag, std::vector<std::string> axis_names) {
          return te::compute(
              std::move(shape),
              [&](const std::vector<ir::Var>& vars) {
                py::tuple args(vars.size());
                for (size_t i = 0; i < vars.size(); ++i) {
                  args[i] = py::cast(Expr(vars[i]));
                }
                return to_expr(fcompute(*args), "compute '" + name + "': fcompute returned");
              },
              name, tag, std::move(axis_names));
        });

  py::class_<te::Workload>(m, "Workload")
      .def(py::init<std::string, std::vector<te::Tensor>, std::vector<te::Tensor>,
                    const std::vector<te::Tensor>&>(),
           py::arg("name"), py::arg("inputs"), py::arg("outputs"),
           py::arg("constants") = std::vector<te::Tensor>{})
      .def_property_readonly("name", &te::Workload::name, "Its readable name.")
      .def_property_readonly("key", &te::Workload::key,
                             "The stable key records are stored under: the name and the hash of "
                             "the canonical text.")
      .def_property_readonly("canonical_text", &te::Workload::canonical_text,
                             "The text the key hashes: the compute, independent of names.")
      .def_property_readonly("flops", &te::Workload::flop_count,
                             "Floating-point operations of one run.")
      .def_property_readonly("inputs", &te::Workload::inputs, "The inputs, in order.")
      .def_property_readonly("outputs", &te::Workload::outputs, "The outputs, in order.")
      .def_property_readonly(
          "constants",
          [](const te::Workload& w) {
            std::vector<std::string> names;
            for (size_t i = 0; i < w.inputs().size(); ++i) {
              if (w.constant_inputs()[i]) {
                names.push_back(w.inputs()[i].name());
              }
            }
            return names;
          },
          "The names of the inputs that are constants (weights).")
      .def("__repr__", [](const te::Workload& w) { return "<Workload " + w.key() + ">"; });
  m.def("_make_workload", py::overload_cast<const std::string&>(&te::make_workload));
  m.def("_canonical_spec",
        [](const std::string& spec) { return te::parse_workload_spec(spec).to_string(); });
  m.def("_workload_names", &te::workload_names);
}

te::Conv2dParams conv_params(int64_t stride, int64_t padding, int64_t dilation, int64_t groups) {
  te::Conv2dParams p;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = padding;
  p.dilation_h = p.dilation_w = dilation;
  p.groups = groups;
  return p;
}

void define_operators(py::module_& m) {
  m.def("_matmul", &te::matmul);
  m.def("_batch_matmul", &te::batch_matmul);
  m.def("_dense", &te::dense);
  m.def("_bias_add", &te::bias_add);
  m.def("_relu", &te::relu);
  m.def("_gelu", &te::gelu);
  m.def("_add", &te::add);
  m.def("_multiply", &te::multiply);
  m.def("_transpose", &te::transpose);
  m.def("_pad", &te::pad);
  m.def("_softmax", &te::softmax);
  m.def("_layer_norm", &te::layer_norm);
  m.def("_conv2d",
        [](const te::Tensor& data, const te::Tensor& weight, int64_t stride, int64_t padding,
           int64_t dilation, int64_t groups, const std::string& layout, const std::string& name) {
          const te::Conv2dParams p = conv_params(stride, padding, dilation, groups);
          TT_USER_CHECK(layout == "NCHW" || layout == "NHWC")
              << "conv2d: layout must be NCHW or NHWC, got '" << layout << "'";
          return layout == "NCHW" ? te::conv2d_nchw(data, weight, p, name)
                                  : te::conv2d_nhwc(data, weight, p, name);
        });
  m.def("_conv2d_winograd", &te::conv2d_winograd_nchw);
  m.def("_depthwise_conv2d", [](const te::Tensor& data, const te::Tensor& weight, int64_t stride,
                                int64_t padding, int64_t dilation, const std::string& name) {
    return te::depthwise_conv2d_nchw(data, weight, conv_params(stride, padding, dilation, 1), name);
  });
  m.def("_pool2d", [](const te::Tensor& data, const std::string& kind, int64_t kernel,
                      int64_t stride, int64_t padding, const std::string& name) {
    TT_USER_CHECK(kind == "max" || kind == "avg")
        << "pool2d: kind must be max or avg, got '" << kind << "'";
    return te::pool2d_nchw(data, kind == "max" ? te::PoolKind::Max : te::PoolKind::Avg, kernel,
                           kernel, conv_params(stride, padding, 1, 1), name);
  });
}

}  // namespace

void define_te(py::module_& m) {
  define_expressions(m);
  define_tensors(m);
  define_operators(m);
}

}  // namespace tensortune::python
