// SPDX-License-Identifier: Apache-2.0
// Dense linear algebra and element-wise operators: matmul, batch_matmul, dense, bias_add, relu,
// gelu, add, multiply, transpose, pad.
#include "tensortune/te/operators.h"

#include "te/operator_util.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"

#include <cmath>
#include <sstream>

namespace tensortune::te {
namespace detail {

std::string shape_str(const std::vector<int64_t>& shape) {
  std::ostringstream os;
  os << "[";
  for (size_t d = 0; d < shape.size(); ++d) {
    os << (d ? ", " : "") << shape[d];
  }
  os << "]";
  return os.str();
}

void check_ndim(const char* op, const char* what, const Tensor& t, size_t n) {
  TT_USER_CHECK(t.defined()) << op << ": " << what << " is undefined";
  TT_USER_CHECK(t.ndim() == n) << op << ": " << what << " '" << t.name() << "' must have " << n
                               << " dimensions, got " << shape_str(t.shape());
}

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  TT_USER_CHECK(a.dtype() == b.dtype())
      << op << ": element types differ ('" << a.name() << "' is " << a.dtype().to_string() << ", '"
      << b.name() << "' is " << b.dtype().to_string() << ")";
}

void check_float(const char* op, const Tensor& t) {
  TT_USER_CHECK(t.dtype().is_float())
      << op << ": needs a float tensor, '" << t.name() << "' is " << t.dtype().to_string();
}

Tensor pad_with(const Tensor& x,
                const std::vector<int64_t>& before,
                const std::vector<int64_t>& after,
                const ir::Expr& value,
                const std::string& name) {
  const std::vector<int64_t>& in = x.shape();
  TT_USER_CHECK(before.size() == in.size() && after.size() == in.size())
      << "pad: '" << x.name() << "' has " << in.size() << " dimensions but the padding has "
      << before.size() << " (before) and " << after.size() << " (after)";
  std::vector<int64_t> shape(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    TT_USER_CHECK(before[d] >= 0 && after[d] >= 0)
        << "pad: negative padding " << before[d] << "/" << after[d] << " in dimension " << d;
    shape[d] = in[d] + before[d] + after[d];
  }
  return compute(
      shape,
      [&](const std::vector<ir::Var>& axes) {
        ir::Expr inside;
        std::vector<ir::Expr> index;
        for (size_t d = 0; d < in.size(); ++d) {
          if (before[d] == 0 && after[d] == 0) {
            index.push_back(axes[d]);
            continue;
          }
          ir::Expr i =
              before[d] == 0 ? ir::Expr(axes[d]) : axes[d] - ir::Expr(static_cast<int>(before[d]));
          ir::Expr ok = before[d] == 0  ? i < static_cast<int>(in[d])
                        : after[d] == 0 ? i >= 0
                                        : (i >= 0 && i < static_cast<int>(in[d]));
          inside = inside.defined() ? (inside && ok) : ok;
          ir::Expr last(static_cast<int>(in[d] - 1));
          index.push_back(before[d] == 0  ? ir::min(i, last)
                          : after[d] == 0 ? ir::max(i, 0)
                                          : ir::min(ir::max(i, 0), last));
        }
        ir::Expr read = x(index);
        return inside.defined() ? ir::select(inside, read, value) : read;
      },
      name, "injective");
}

}  // namespace detail

using detail::check_float;
using detail::check_ndim;
using detail::check_same_dtype;
using detail::shape_str;

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_b, const std::string& name) {
  check_ndim("matmul", "A", a, 2);
  check_ndim("matmul", "B", b, 2);
  check_same_dtype("matmul", a, b);
  int64_t m = a.shape()[0];
  int64_t k = a.shape()[1];
  int64_t n = transpose_b ? b.shape()[0] : b.shape()[1];
  int64_t kb = transpose_b ? b.shape()[1] : b.shape()[0];
  TT_USER_CHECK(k == kb) << "matmul: reduction dims differ: A is " << shape_str(a.shape())
                         << ", B is " << shape_str(b.shape())
                         << (transpose_b ? " (transposed)" : "");
  ir::IterVar rk = reduce_axis(k, "k");
  return compute(
      {m, n},
      [&](const std::vector<ir::Var>& ax) {
        ir::Expr rhs = transpose_b ? b(ax[1], rk.var) : b(rk.var, ax[1]);
        return sum(a(ax[0], rk.var) * rhs, {rk});
      },
      name, "matmul");
}

Tensor batch_matmul(const Tensor& a, const Tensor& b, bool transpose_b, const std::string& name) {
  check_ndim("batch_matmul", "A", a, 3);
  check_ndim("batch_matmul", "B", b, 3);
  check_same_dtype("batch_matmul", a, b);
  int64_t batch = a.shape()[0];
  int64_t m = a.shape()[1];
  int64_t k = a.shape()[2];
  int64_t n = transpose_b ? b.shape()[1] : b.shape()[2];
  int64_t kb = transpose_b ? b.shape()[2] : b.shape()[1];
  TT_USER_CHECK(batch == b.shape()[0] && k == kb)
      << "batch_matmul: shapes do not match: A is " << shape_str(a.shape()) << ", B is "
      << shape_str(b.shape()) << (transpose_b ? " (transposed)" : "");
  ir::IterVar rk = reduce_axis(k, "k");
  return compute({batch, m, n},
                 [&](const std::vector<ir::Var>& ax) {
                   ir::Expr rhs = transpose_b ? b(ax[0], ax[2], rk.var) : b(ax[0], rk.var, ax[2]);
                   return sum(a(ax[0], ax[1], rk.var) * rhs, {rk});
                 },
                 name, "batch_matmul", {"b", "i", "j"});
}

Tensor dense(const Tensor& data, const Tensor& weight, const std::string& name) {
  check_ndim("dense", "data", data, 2);
  check_ndim("dense", "weight", weight, 2);
  check_same_dtype("dense", data, weight);
  TT_USER_CHECK(data.shape()[1] == weight.shape()[1])
      << "dense: reduction dims differ: data is " << shape_str(data.shape()) << ", weight is "
      << shape_str(weight.shape()) << " (expected [N, " << data.shape()[1] << "])";
  ir::IterVar rk = reduce_axis(data.shape()[1], "k");
  return compute(
      {data.shape()[0], weight.shape()[0]},
      [&](const std::vector<ir::Var>& ax) {
        return sum(data(ax[0], rk.var) * weight(ax[1], rk.var), {rk});
      },
      name, "dense");
}

Tensor bias_add(const Tensor& x, const Tensor& bias, int axis, const std::string& name) {
  check_ndim("bias_add", "bias", bias, 1);
  check_same_dtype("bias_add", x, bias);
  int nd = static_cast<int>(x.ndim());
  TT_USER_CHECK(axis >= -nd && axis < nd)
      << "bias_add: axis " << axis << " out of range for " << shape_str(x.shape());
  auto ax = static_cast<size_t>(axis < 0 ? axis + nd : axis);
  TT_USER_CHECK(bias.shape()[0] == x.shape()[ax])
      << "bias_add: bias " << shape_str(bias.shape()) << " does not match dimension " << ax
      << " of " << shape_str(x.shape());
  return compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        return x(std::vector<ir::Expr>(v.begin(), v.end())) + bias(v[ax]);
      },
      name, "broadcast");
}

Tensor relu(const Tensor& x, const std::string& name) {
  return compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        return ir::max(x(std::vector<ir::Expr>(v.begin(), v.end())),
                       ir::make_const(x.dtype(), 0.0));
      },
      name, "elemwise");
}

Tensor gelu(const Tensor& x, const std::string& name) {
  check_float("gelu", x);
  ir::DataType t = x.dtype();
  return compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr e = x(std::vector<ir::Expr>(v.begin(), v.end()));
        ir::Expr scaled = e * ir::make_const(t, 1.0 / std::sqrt(2.0));
        return e * ir::make_const(t, 0.5) * (ir::make_const(t, 1.0) + ir::erf(scaled));
      },
      name, "elemwise");
}

namespace {

/// a (op) b where b's shape equals a's or is a trailing suffix of it (broadcast).
template <class Fn>
Tensor binary(const char* op, const Tensor& a, const Tensor& b, const std::string& name, Fn fn) {
  TT_USER_CHECK(a.defined() && b.defined()) << op << ": undefined operand";
  check_same_dtype(op, a, b);
  size_t na = a.ndim();
  size_t nb = b.ndim();
  bool suffix = nb <= na;
  for (size_t d = 0; suffix && d < nb; ++d) {
    suffix = a.shape()[na - nb + d] == b.shape()[d];
  }
  TT_USER_CHECK(suffix) << op << ": shapes " << shape_str(a.shape()) << " and "
                        << shape_str(b.shape())
                        << " are neither equal nor is the second a trailing part of the first";
  return compute(
      a.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> ia(v.begin(), v.end());
        std::vector<ir::Expr> ib(v.begin() + static_cast<std::ptrdiff_t>(na - nb), v.end());
        return fn(a(ia), b(ib));
      },
      name, na == nb ? "elemwise" : "broadcast");
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const std::string& name) {
  return binary("add", a, b, name, [](const ir::Expr& x, const ir::Expr& y) { return x + y; });
}

Tensor multiply(const Tensor& a, const Tensor& b, const std::string& name) {
  return binary("multiply", a, b, name, [](const ir::Expr& x, const ir::Expr& y) { return x * y; });
}

Tensor transpose(const Tensor& x, const std::vector<int>& perm, const std::string& name) {
  size_t nd = x.ndim();
  TT_USER_CHECK(perm.size() == nd)
      << "transpose: permutation has " << perm.size() << " entries for " << shape_str(x.shape());
  std::vector<bool> used(nd, false);
  std::vector<int64_t> shape(nd);
  for (size_t d = 0; d < nd; ++d) {
    int p = perm[d];
    TT_USER_CHECK(p >= 0 && static_cast<size_t>(p) < nd && !used[static_cast<size_t>(p)])
        << "transpose: entry " << p << " makes the permutation invalid for "
        << shape_str(x.shape());
    used[static_cast<size_t>(p)] = true;
    shape[d] = x.shape()[static_cast<size_t>(p)];
  }
  return compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> index(nd);
        for (size_t d = 0; d < nd; ++d) {
          index[static_cast<size_t>(perm[d])] = v[d];
        }
        return x(index);
      },
      name, "injective");
}

Tensor pad(const Tensor& x,
           const std::vector<int64_t>& before,
           const std::vector<int64_t>& after,
           double value,
           const std::string& name) {
  TT_USER_CHECK(x.defined()) << "pad: undefined tensor";
  return detail::pad_with(x, before, after, ir::make_const(x.dtype(), value), name);
}

}  // namespace tensortune::te
