// SPDX-License-Identifier: Apache-2.0
// Random inputs, tolerances, closeness checks and host buffers for tests (the interpreter itself
// is in reference_eval.cpp).
#include "common/reference.h"

#include "tensortune/support/error.h"
#include "tensortune/support/rng.h"

#include <cmath>
#include <cstring>
#include <sstream>

namespace tensortune::testing {
namespace {

void check_supported(ir::DataType t) {
  TT_CHECK(t.is_scalar() && (t.is_float() || t.is_int()) && (t.bits() == 32 || t.bits() == 64))
      << "unsupported element type " << t.to_string();
}

double element_as_double(const void* data, ir::DataType t, size_t i) {
  const auto* bytes = static_cast<const unsigned char*>(data) + i * static_cast<size_t>(t.bytes());
  if (t.is_float() && t.bits() == 32) {
    float v;
    std::memcpy(&v, bytes, sizeof v);
    return v;
  }
  if (t.is_float()) {
    double v;
    std::memcpy(&v, bytes, sizeof v);
    return v;
  }
  if (t.bits() == 32) {
    int32_t v;
    std::memcpy(&v, bytes, sizeof v);
    return v;
  }
  int64_t v;
  std::memcpy(&v, bytes, sizeof v);
  return static_cast<double>(v);
}

}  // namespace

void fill_random(void* data, ir::DataType dtype, size_t n, uint64_t seed) {
  check_supported(dtype);
  support::Rng rng(seed);
  auto* bytes = static_cast<unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    bool negative = rng.uniform_int(0, 1) == 1;
    unsigned char* at = bytes + i * static_cast<size_t>(dtype.bytes());
    if (dtype.is_float()) {
      double magnitude = 0.1 + 0.9 * rng.uniform();
      double v = negative ? -magnitude : magnitude;
      if (dtype.bits() == 32) {
        auto f = static_cast<float>(v);
        std::memcpy(at, &f, sizeof f);
      } else {
        std::memcpy(at, &v, sizeof v);
      }
    } else {
      int64_t v = rng.uniform_int(1, 9) * (negative ? -1 : 1);
      if (dtype.bits() == 32) {
        auto x = static_cast<int32_t>(v);
        std::memcpy(at, &x, sizeof x);
      } else {
        std::memcpy(at, &v, sizeof v);
      }
    }
  }
}

Tolerance tolerance_for(const te::Workload& workload, ir::DataType dtype) {
  if (!dtype.is_float()) {
    return {0, 0};
  }
  double reduction = 0;
  for (const te::OperationRef& op : workload.ops()) {
    double extent = op->reduce_axes().empty() ? 0 : 1;
    for (const ir::IterVar& axis : op->reduce_axes()) {
      extent *= static_cast<double>(axis.extent);
    }
    reduction += extent;
  }
  return {1e-4, 1e-4 * std::max(1.0, std::sqrt(reduction))};
}

bool all_close(const void* actual,
               const void* expected,
               ir::DataType dtype,
               size_t n,
               const Tolerance& tol,
               std::string* mismatch) {
  check_supported(dtype);
  size_t bad = 0;
  size_t first = n;
  for (size_t i = 0; i < n; ++i) {
    double a = element_as_double(actual, dtype, i);
    double e = element_as_double(expected, dtype, i);
    bool ok =
        (std::isnan(a) && std::isnan(e)) || std::fabs(a - e) <= tol.atol + tol.rtol * std::fabs(e);
    if (!ok) {
      first = bad == 0 ? i : first;
      ++bad;
    }
  }
  if (bad != 0 && mismatch != nullptr) {
    std::ostringstream os;
    os.precision(9);
    os << bad << " of " << n << " elements differ; first at flat index " << first << ": got "
       << element_as_double(actual, dtype, first) << ", expected "
       << element_as_double(expected, dtype, first) << " (rtol " << tol.rtol << ", atol "
       << tol.atol << ")";
    *mismatch = os.str();
  }
  return bad == 0;
}

::testing::AssertionResult close(
    const void* actual, const void* expected, ir::DataType dtype, size_t n, const Tolerance& tol) {
  std::string message;
  if (all_close(actual, expected, dtype, n, tol, &message)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << message;
}

HostBuffers::HostBuffers(const te::Workload& workload) {
  auto add = [this](const te::Tensor& t) {
    check_supported(t.dtype());
    auto n = static_cast<size_t>(t.buffer().num_elements());
    size_t words = (n * static_cast<size_t>(t.dtype().bytes()) + 7) / 8;
    storage_.emplace_back(std::max<size_t>(words, 1), 0);
    dtypes_.push_back(t.dtype());
    counts_.push_back(n);
  };
  for (const te::Tensor& t : workload.inputs()) {
    add(t);
  }
  num_inputs_ = storage_.size();
  for (const te::Tensor& t : workload.outputs()) {
    add(t);
  }
}

void HostBuffers::fill_inputs(uint64_t seed) {
  for (size_t k = 0; k < num_inputs_; ++k) {
    fill_random(data(k), dtypes_[k], counts_[k], seed + k);
  }
}

std::vector<void*> HostBuffers::args() {
  std::vector<void*> out;
  for (auto& words : storage_) {
    out.push_back(words.data());
  }
  return out;
}

::testing::AssertionResult outputs_match_reference(const te::Workload& workload,
                                                   const HostBuffers& actual) {
  HostBuffers expected(workload);
  for (size_t k = 0; k < actual.num_inputs(); ++k) {
    size_t bytes = actual.num_elements(k) * static_cast<size_t>(actual.dtype(k).bytes());
    std::memcpy(expected.data(k), actual.data(k), bytes);
  }
  reference_run(workload, expected.args());
  for (size_t k = actual.num_inputs(); k < actual.size(); ++k) {
    ir::DataType t = actual.dtype(k);
    std::string message;
    if (!all_close(actual.data(k), expected.data(k), t, actual.num_elements(k),
                   tolerance_for(workload, t), &message)) {
      return ::testing::AssertionFailure()
             << "output '" << workload.outputs()[k - actual.num_inputs()].name() << "' of "
             << workload.name() << ": " << message;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tensortune::testing
