// SPDX-License-Identifier: Apache-2.0
// Kernel parameter memory, random inputs and the output check (see buffers.h).
#include "buffers.h"

#include "tensortune/runtime/parallel.h"
#include "tensortune/support/error.h"
#include "tensortune/support/rng.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <type_traits>

namespace tensortune::cli {
namespace {

/// Calls fn(T{}) with the C++ element type of `dtype`; UserError for types the tools do not fill.
template <class Fn>
void with_element_type(ir::DataType dtype, const std::string& name, Fn&& fn) {
  if (dtype == ir::DataType::float32()) {
    fn(float{});
  } else if (dtype == ir::DataType::float64()) {
    fn(double{});
  } else if (dtype == ir::DataType::int32()) {
    fn(int32_t{});
  } else if (dtype == ir::DataType::int64()) {
    fn(int64_t{});
  } else {
    throw UserError("tensor '" + name + "' has dtype " + dtype.to_string() +
                    ", which the command line tools cannot fill yet (float32, float64, int32, "
                    "int64)");
  }
}

template <class T>
void fill_random(T* data, int64_t count, support::Rng& rng) {
  for (int64_t i = 0; i < count; ++i) {
    T sign = rng.uniform() < 0.5 ? T(-1) : T(1);
    if constexpr (std::is_floating_point_v<T>) {
      data[i] = sign * static_cast<T>(0.1 + 0.9 * rng.uniform());
    } else {
      data[i] = sign * static_cast<T>(rng.uniform_int(1, 4));
    }
  }
}

/// "C[3, 17]" for flat index `flat` of a row-major array of `shape`.
std::string element_name(const ir::Buffer& buffer, int64_t flat) {
  const std::vector<int64_t>& shape = buffer.shape();
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::ostringstream out;
  out << buffer.name() << "[";
  for (size_t d = 0; d < index.size(); ++d) {
    out << (d == 0 ? "" : ", ") << index[d];
  }
  out << "]";
  return out.str();
}

template <class T>
std::string number_text(T value) {
  std::ostringstream out;
  out.precision(9);
  out << value;
  return out.str();
}

struct Mismatch {
  int64_t count = 0;
  int64_t first = -1;
  std::string got, expected, tolerance;
};

template <class T>
Mismatch compare(const T* got, const T* expected, int64_t n, double slack, double rtol) {
  Mismatch m;
  for (int64_t i = 0; i < n; ++i) {
    double tolerance = 0;
    bool ok = got[i] == expected[i];
    if constexpr (std::is_floating_point_v<T>) {
      tolerance = rtol * (std::fabs(static_cast<double>(expected[i])) + slack);
      ok = std::fabs(static_cast<double>(got[i]) - static_cast<double>(expected[i])) <= tolerance;
    }
    if (ok) {
      continue;
    }
    if (m.count++ == 0) {
      m = Mismatch{1, i, number_text(got[i]), number_text(expected[i]), number_text(tolerance)};
    }
  }
  return m;
}

}  // namespace

KernelBuffers::KernelBuffers(const ir::LoweredFunc& func)
    : params_(func.params), num_inputs_(func.num_inputs) {
  for (const ir::Buffer& param : params_) {
    with_element_type(param.dtype(), param.name(), [](auto) {});
    int64_t bytes = std::max<int64_t>(1, param.num_elements() * param.dtype().bytes());
    storage_.emplace_back(tt_alloc(bytes), tt_free);
    std::memset(storage_.back().get(), 0, static_cast<size_t>(bytes));
    pointers_.push_back(storage_.back().get());
  }
}

void KernelBuffers::fill(size_t begin, size_t end, uint64_t seed) {
  support::Rng rng(seed);
  for (size_t p = begin; p < end; ++p) {
    with_element_type(params_[p].dtype(), params_[p].name(), [&](auto zero) {
      using T = decltype(zero);
      fill_random(static_cast<T*>(pointers_[p]), params_[p].num_elements(), rng);
    });
  }
}

void KernelBuffers::fill_inputs(uint64_t seed) {
  fill(0, num_inputs_, seed);
}

void KernelBuffers::fill_outputs(uint64_t seed) {
  fill(num_inputs_, params_.size(), seed);
}

void KernelBuffers::copy_inputs_from(const KernelBuffers& other) {
  TT_CHECK(other.params_.size() == params_.size() && other.num_inputs_ == num_inputs_)
      << "kernels with different parameter lists";
  for (size_t p = 0; p < num_inputs_; ++p) {
    TT_CHECK(params_[p].num_elements() == other.params_[p].num_elements() &&
             params_[p].dtype() == other.params_[p].dtype())
        << "parameter " << p << " differs";
    std::memcpy(pointers_[p], other.pointers_[p],
                static_cast<size_t>(params_[p].num_elements() * params_[p].dtype().bytes()));
  }
}

void check_outputs(const KernelBuffers& got,
                   const KernelBuffers& expected,
                   int64_t reduction_length,
                   double rtol) {
  TT_CHECK(got.params().size() == expected.params().size()) << "kernels differ in parameters";
  double slack = 0.1 * std::sqrt(static_cast<double>(std::max<int64_t>(1, reduction_length)));
  for (size_t p = got.num_inputs(); p < got.params().size(); ++p) {
    const ir::Buffer& buffer = expected.params()[p];
    TT_CHECK(got.params()[p].num_elements() == buffer.num_elements()) << "output sizes differ";
    Mismatch m;
    with_element_type(buffer.dtype(), buffer.name(), [&](auto zero) {
      using T = decltype(zero);
      m = compare(static_cast<const T*>(got.data(p)), static_cast<const T*>(expected.data(p)),
                  buffer.num_elements(), slack, rtol);
    });
    TT_USER_CHECK(m.count == 0) << "the schedule computes wrong results: first mismatch at "
                                << element_name(buffer, m.first) << ": got " << m.got
                                << ", expected " << m.expected << " (tolerance " << m.tolerance
                                << "); " << m.count << " of " << buffer.num_elements()
                                << " elements differ";
  }
}

}  // namespace tensortune::cli
