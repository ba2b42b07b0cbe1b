// SPDX-License-Identifier: Apache-2.0
// Winograd convolution F(m x m, 3 x 3) (Lavin & Gray), NCHW: the weights transformed into the
// Winograd domain (a stage of constants alone: the kernel's prepare function once scheduled at the
// root), the input tiles transformed (rows, then columns), alpha^2 batched GEMMs over the
// channels, and the inverse transform (columns, then rows). The transform matrices are constants
// folded in once the small loops are unrolled, and the terms of their zero entries vanish.
#include "te/operator_util.h"
#include "tensortune/ir/ops.h"
#include "tensortune/support/error.h"
#include "tensortune/te/compute.h"
#include "tensortune/te/operators.h"

#include <vector>

namespace tensortune::te {
namespace {

using Matrix = std::vector<std::vector<double>>;

constexpr int64_t kTileVector = 16;

/// The transform matrices of F(m, 3): B^T (alpha x alpha), G (alpha x 3), A^T (m x alpha).
struct Transforms {
  Matrix bt, g, at;
};

Transforms transforms(int64_t m) {
  if (m == 2) {
    return {{{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}},
            {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
            {{1, 1, 1, 0}, {0, 1, -1, -1}}};
  }
  const double s = 1.0 / 6, t = 1.0 / 12, u = 1.0 / 24;
  return {{{4, 0, -5, 0, 1, 0},
           {0, -4, -4, 1, 1, 0},
           {0, 4, -4, -1, 1, 0},
           {0, -2, -1, 2, 1, 0},
           {0, 2, -1, -2, 1, 0},
           {0, 4, 0, -5, 0, 1}},
          {{0.25, 0, 0}, {-s, -s, -s}, {-s, s, -s}, {u, t, s}, {u, -t, s}, {0, 0, 1}},
          {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}}};
}

/// M[row][col] as an expression of two index expressions: a chain of selects over the nonzero
/// entries, which the simplifier folds to a constant once both indices are constants.
ir::Expr entry(const Matrix& m, const ir::Expr& row, const ir::Expr& col, ir::DataType t) {
  ir::Expr out = ir::make_const(t, 0.0);
  for (size_t r = 0; r < m.size(); ++r) {
    for (size_t c = 0; c < m[r].size(); ++c) {
      if (m[r][c] != 0) {
        out =
            ir::select(row == ir::Expr(static_cast<int>(r)) && col == ir::Expr(static_cast<int>(c)),
                       ir::make_const(t, m[r][c]), out);
      }
    }
  }
  return out;
}

/// x * M[row][col], with the terms of zero entries left out once both indices are constants
/// (the small loops unrolled): select(M[row][col] != 0, x * M[row][col], -0). x * 0 would stay,
/// since it is NaN for an infinite x; a sum plus -0 is the sum, exactly, and folds away.
ir::Expr weighted(
    const ir::Expr& x, const Matrix& m, const ir::Expr& row, const ir::Expr& col, ir::DataType t) {
  ir::Expr nonzero;
  for (size_t r = 0; r < m.size(); ++r) {
    for (size_t c = 0; c < m[r].size(); ++c) {
      if (m[r][c] != 0) {
        ir::Expr here =
            row == ir::Expr(static_cast<int>(r)) && col == ir::Expr(static_cast<int>(c));
        nonzero = nonzero.defined() ? (nonzero || here) : here;
      }
    }
  }
  return ir::select(nonzero, x * entry(m, row, col, t), ir::make_const(t, -0.0));
}

}  // namespace

Tensor conv2d_winograd_nchw(
    const Tensor& data, const Tensor& weight, int64_t pad, int64_t tile, const std::string& name) {
  detail::check_ndim("conv2d_winograd_nchw", "data", data, 4);
  detail::check_ndim("conv2d_winograd_nchw", "weight", weight, 4);
  detail::check_same_dtype("conv2d_winograd_nchw", data, weight);
  detail::check_float("conv2d_winograd_nchw", data);
  TT_USER_CHECK(tile == 2 || tile == 4)
      << "conv2d_winograd_nchw: tile must be 2 or 4 (F(2x2,3x3) or F(4x4,3x3)), got " << tile;
  TT_USER_CHECK(pad >= 0) << "conv2d_winograd_nchw: negative padding " << pad;
  const auto& ds = data.shape();
  const auto& ws = weight.shape();
  const int64_t n = ds[0], c = ds[1], k = ws[0];
  TT_USER_CHECK(ws[1] == c && ws[2] == 3 && ws[3] == 3)
      << "conv2d_winograd_nchw: weight " << detail::shape_str(ws) << " does not match data "
      << detail::shape_str(ds) << " (expected [K, " << c << ", 3, 3])";
  const int64_t oh = ds[2] + 2 * pad - 2, ow = ds[3] + 2 * pad - 2;
  TT_USER_CHECK(oh > 0 && ow > 0) << "conv2d_winograd_nchw: data " << detail::shape_str(ds)
                                  << " is smaller than the 3x3 window with pad " << pad;
  const int64_t m = tile, alpha = tile + 2;
  const int64_t nh = (oh + m - 1) / m, nw = (ow + m - 1) / m, tiles = n * nh * nw;
  // The tile axis, which the transforms and the batched GEMM vectorize, padded to whole vectors
  // of 16: 56 x 56 makes 196 tiles, whose every vector length but 4 and 2 would leave a masked
  // tail in every loop.
  const int64_t padded_tiles = (tiles + kTileVector - 1) / kTileVector * kTileVector;
  const Transforms tr = transforms(m);
  const ir::DataType t = data.dtype();

  // Zero padding up to whole tiles: rows 0 .. nh*m + 1.
  Tensor padded = detail::pad_with(data, {0, 0, pad, pad},
                                   {0, 0, nh * m + 2 - ds[2] - pad, nw * m + 2 - ds[3] - pad},
                                   ir::make_const(t, 0.0), name + "_pad");
  ir::IterVar kh = reduce_axis(3, "r_kh"), kw = reduce_axis(3, "r_kw");
  Tensor kernel_pack =
      compute({alpha, alpha, k, c},
              [&](const std::vector<ir::Var>& v) {
                return sum(entry(tr.g, v[0], kh.var, t) * weight(v[2], v[3], kh.var, kw.var) *
                               entry(tr.g, v[1], kw.var, t),
                           {kh, kw});
              },
              name + "_kernel_pack", "winograd_kernel_pack", {"eps", "nu", "k", "c"});
  Tensor input_tile = compute(
      {c, padded_tiles, alpha, alpha},
      [&](const std::vector<ir::Var>& v) {
        // A padding tile repeats the last real one: computed like it, and never read back.
        ir::Expr p = padded_tiles == tiles ? ir::Expr(v[1])
                                           : ir::min(v[1], ir::Expr(static_cast<int>(tiles - 1)));
        ir::Expr b = p / static_cast<int>(nh * nw);
        ir::Expr y = (p / static_cast<int>(nw)) % static_cast<int>(nh);
        ir::Expr x = p % static_cast<int>(nw);
        return padded(b, v[0], y * static_cast<int>(m) + v[2], x * static_cast<int>(m) + v[3]);
      },
      name + "_input_tile", "injective", {"c", "p", "eps", "nu"});
  // The data transform B^T d B as two one-dimensional passes (alpha^3 terms each instead of
  // alpha^4): rows, then columns.
  ir::IterVar ra = reduce_axis(alpha, "r_a");
  Tensor data_rows = compute(
      {alpha, alpha, c, padded_tiles},
      [&](const std::vector<ir::Var>& v) {
        return sum(weighted(input_tile(v[2], v[3], ra.var, v[1]), tr.bt, v[0], ra.var, t), {ra});
      },
      name + "_data_rows", "winograd_data_pack", {"eps", "r_b", "c", "p"});
  ir::IterVar rb = reduce_axis(alpha, "r_b");
  Tensor data_pack = compute(
      {alpha, alpha, c, padded_tiles},
      [&](const std::vector<ir::Var>& v) {
        return sum(weighted(data_rows(v[0], rb.var, v[2], v[3]), tr.bt, v[1], rb.var, t), {rb});
      },
      name + "_data_pack", "winograd_data_pack", {"eps", "nu", "c", "p"});
  ir::IterVar rc = reduce_axis(c, "rc");
  Tensor bgemm = compute(
      {alpha, alpha, k, padded_tiles},
      [&](const std::vector<ir::Var>& v) {
        return sum(kernel_pack(v[0], v[1], v[2], rc.var) * data_pack(v[0], v[1], rc.var, v[3]),
                   {rc});
      },
      name + "_bgemm", "winograd_bgemm", {"eps", "nu", "k", "p"});
  // The inverse transform A^T M A, columns then rows.
  ir::IterVar sb = reduce_axis(alpha, "s_b");
  Tensor inverse_cols =
      compute({alpha, m, k, padded_tiles},
              [&](const std::vector<ir::Var>& v) {
                return sum(weighted(bgemm(v[0], sb.var, v[2], v[3]), tr.at, v[1], sb.var, t), {sb});
              },
              name + "_inverse_cols", "winograd_inverse", {"s_a", "vw", "k", "p"});
  ir::IterVar sa = reduce_axis(alpha, "s_a");
  // Tiles innermost, as in every stage before it: the transform rule's vector over them then
  // stores whole vectors (a [k, p, vh, vw] layout made each lane a store m * m apart).
  Tensor inverse = compute(
      {k, m, m, padded_tiles},
      [&](const std::vector<ir::Var>& v) {
        return sum(weighted(inverse_cols(sa.var, v[2], v[0], v[3]), tr.at, v[1], sa.var, t), {sa});
      },
      name + "_inverse", "winograd_inverse", {"k", "vh", "vw", "p"});
  return compute({n, k, oh, ow},
                 [&](const std::vector<ir::Var>& v) {
                   ir::Expr p = v[0] * static_cast<int>(nh * nw) +
                                (v[2] / static_cast<int>(m)) * static_cast<int>(nw) +
                                v[3] / static_cast<int>(m);
                   return inverse(v[1], v[2] % static_cast<int>(m), v[3] % static_cast<int>(m), p);
                 },
                 name, "conv2d_winograd", {"n", "f", "y", "x"});
}

}  // namespace tensortune::te
