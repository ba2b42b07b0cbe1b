// SPDX-License-Identifier: Apache-2.0
// The header dict of a .npy file (private to src/graph): a Python dict literal such as
// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tensortune::graph {

/// The fields of a .npy header dict.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

/// Parses the header text (the bytes between the length field and the data, trailing spaces and
/// '\n' included) with any spacing and key order; UserError naming `what` when it is malformed:
/// a missing, duplicate or unknown key, a non-string descr, a shape that is not a tuple of
/// non-negative integers, a fortran_order that is not True or False.
NpyHeader parse_npy_header(const std::string& text, const std::string& what);

}  // namespace tensortune::graph
