// SPDX-License-Identifier: Apache-2.0
// Kernel parameter memory, random inputs, poisoned outputs, cache flushing and the output
// comparison (see kernel_buffers.h).
#include "tensortune/measure/kernel_buffers.h"

#include "tensortune/runtime/parallel.h"
#include "tensortune/support/error.h"
#include "tensortune/support/rng.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <type_traits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tensortune::measure {
namespace {

/// Calls fn(T{}) with the C++ element type of `dtype`; UserError for the types not filled yet.
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
  } else if (dtype == ir::DataType::boolean() ||
             dtype == ir::DataType(ir::DataType::Code::UInt, 8)) {
    fn(uint8_t{});  // bool: one byte, 0 or 1 (fill_random tells them apart)
  } else if (dtype == ir::DataType(ir::DataType::Code::Int, 8)) {
    fn(int8_t{});
  } else if (dtype == ir::DataType(ir::DataType::Code::Int, 16)) {
    fn(int16_t{});
  } else if (dtype == ir::DataType(ir::DataType::Code::UInt, 16)) {
    fn(uint16_t{});
  } else if (dtype == ir::DataType(ir::DataType::Code::UInt, 32)) {
    fn(uint32_t{});
  } else if (dtype == ir::DataType(ir::DataType::Code::UInt, 64)) {
    fn(uint64_t{});
  } else {
    throw UserError("tensor '" + name + "' has dtype " + dtype.to_string() +
                    ", which the measurer cannot fill yet (float32, float64, signed and unsigned "
                    "integers of 8 to 64 bits, bool)");
  }
}

/// Random inputs: floats of magnitude 0.1 to 1 and either sign, integers 1 to 4 (unsigned) or
/// -4 to 4 without 0 (signed), bools 0 or 1.
template <class T>
void fill_random(T* data, int64_t count, support::Rng& rng, bool is_bool) {
  for (int64_t i = 0; i < count; ++i) {
    if (is_bool) {
      data[i] = rng.uniform() < 0.5 ? 1 : 0;
    } else if constexpr (std::is_unsigned_v<T>) {
      data[i] = static_cast<T>(rng.uniform_int(1, 4));
    } else {
      T sign = rng.uniform() < 0.5 ? T(-1) : T(1);
      if constexpr (std::is_floating_point_v<T>) {
        data[i] = sign * static_cast<T>(0.1 + 0.9 * rng.uniform());
      } else {
        data[i] = sign * static_cast<T>(rng.uniform_int(1, 4));
      }
    }
  }
}

/// "C[3, 17]" for flat index `flat` of a row-major array of `shape`.
std::string element_name(const BufferSpec& buffer, int64_t flat) {
  std::vector<int64_t> index(buffer.shape.size());
  for (size_t d = buffer.shape.size(); d-- > 0;) {
    index[d] = flat % buffer.shape[d];
    flat /= buffer.shape[d];
  }
  std::ostringstream out;
  out << buffer.name << "[";
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
  if constexpr (sizeof(T) == 1) {  // int8, uint8 and bool print as numbers, not characters
    out << static_cast<int>(value);
  } else {
    out << value;
  }
  return out.str();
}

template <class T>
std::optional<std::string> compare(const BufferSpec& spec,
                                   const T* got,
                                   const T* expected,
                                   const Tolerance& tol) {
  int64_t n = spec.num_elements();
  int64_t count = 0;
  std::string first;
  for (int64_t i = 0; i < n; ++i) {
    double tolerance = 0;
    bool ok = false;
    if constexpr (std::is_floating_point_v<T>) {
      double g = static_cast<double>(got[i]);
      double e = static_cast<double>(expected[i]);
      tolerance = tol.rtol * (std::fabs(e) + tol.slack);
      ok = std::fabs(g - e) <= tolerance || (std::isnan(g) && std::isnan(e)) || g == e;
    } else {
      ok = got[i] == expected[i];
    }
    if (ok) {
      continue;
    }
    if (count++ == 0) {
      first = element_name(spec, i) + " = " + number_text(got[i]) + ", expected " +
              number_text(expected[i]);
      if (tolerance > 0) {
        first += " (tolerance " + number_text(tolerance) + ")";
      }
    }
  }
  if (count == 0) {
    return std::nullopt;
  }
  return first + "; " + std::to_string(count) + " of " + std::to_string(n) + " elements differ";
}

/// Parameter memory comes from the runtime's allocator, as kernels' scratch does: from 256 KiB on
/// it is backed by 2 MiB transparent huge pages where the kernel allows it (physically contiguous
/// memory maps to the caches the same way in every trial, so a kernel's time does not depend on
/// which 4 KiB pages it happened to get), and freed blocks are kept for the next trial.
std::shared_ptr<void> allocate(int64_t bytes, const std::string& name) {
  void* p = tt_try_alloc(bytes);
  TT_USER_CHECK(p != nullptr) << "cannot allocate " << bytes << " bytes for tensor '" << name
                              << "' (out of memory)";
  return std::shared_ptr<void>(p, tt_free);
}

}  // namespace

KernelBuffers::KernelBuffers(KernelSignature signature) : signature_(std::move(signature)) {
  std::vector<BufferSpec> all = signature_.params;
  all.insert(all.end(), signature_.prepacked.begin(), signature_.prepacked.end());
  for (const BufferSpec& param : all) {
    with_element_type(param.dtype, param.name, [](auto) {});
    int64_t bytes = std::max<int64_t>(1, param.num_bytes());
    storage_.push_back(allocate(bytes, param.name));
    std::memset(storage_.back().get(), 0, static_cast<size_t>(bytes));
    pointers_.push_back(storage_.back().get());
  }
}

void KernelBuffers::fill_inputs(uint64_t seed) {
  support::Rng rng(seed);
  for (size_t p = 0; p < signature_.num_inputs; ++p) {
    const BufferSpec& spec = signature_.params[p];
    with_element_type(spec.dtype, spec.name, [&](auto zero) {
      using T = decltype(zero);
      fill_random(static_cast<T*>(pointers_[p]), spec.num_elements(), rng, spec.dtype.is_bool());
    });
  }
}

void KernelBuffers::poison_outputs() {
  for (size_t p = signature_.num_inputs; p < signature_.params.size(); ++p) {
    const BufferSpec& spec = signature_.params[p];
    with_element_type(spec.dtype, spec.name, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_floating_point_v<T>) {
        std::fill_n(static_cast<T*>(pointers_[p]), spec.num_elements(),
                    std::numeric_limits<T>::quiet_NaN());
      } else {
        // 0xDE is neither 0 nor 1 for bool, and an unlikely integer.
        std::memset(pointers_[p], 0xDE, static_cast<size_t>(spec.num_bytes()));
      }
    });
  }
}

void KernelBuffers::copy_inputs_from(const KernelBuffers& other) {
  TT_CHECK(signature_.compatible_with(other.signature_)) << "kernels with different parameters";
  for (size_t p = 0; p < signature_.num_inputs; ++p) {
    std::memcpy(pointers_[p], other.pointers_[p],
                static_cast<size_t>(signature_.params[p].num_bytes()));
  }
}

std::string KernelBuffers::bytes(size_t index) const {
  return std::string(static_cast<const char*>(pointers_.at(index)),
                     static_cast<size_t>(signature_.params.at(index).num_bytes()));
}

std::vector<std::string> KernelBuffers::output_bytes() const {
  std::vector<std::string> out;
  for (size_t p = signature_.num_inputs; p < signature_.params.size(); ++p) {
    out.push_back(bytes(p));
  }
  return out;
}

void KernelBuffers::flush_caches() const {
  for (size_t p = 0; p < pointers_.size(); ++p) {
    if (p == 0 && signature_.num_inputs > 0) {
      // In a model the first input is the activation the previous kernel just wrote: its lines
      // are dirty, in the writer's caches or past them, not the clean copies in every cache that
      // the previous timed call's reads left. Each line is stored again with its own value. A
      // depthwise conv over a 4.8 MB activation ran 0.25 ms on clean input and 0.67 ms on input
      // just written (0.58 ms in the model).
      volatile char* data = static_cast<char*>(pointers_[p]);
      for (int64_t offset = 0; offset < signature_.params[p].num_bytes(); offset += 64) {
        data[offset] = data[offset];
      }
      continue;
    }
    if (p >= signature_.num_inputs && p < signature_.params.size()) {
      // The outputs stay: in a model they are arena memory used a few kernels ago, while the
      // weights (the other inputs, and their prepacked copies) come cold from memory.
      continue;
    }
    const char* data = static_cast<const char*>(pointers_[p]);
    size_t num_params = signature_.params.size();
    int64_t bytes = p < num_params ? signature_.params[p].num_bytes()
                                   : signature_.prepacked[p - num_params].num_bytes();
#if defined(__x86_64__) || defined(__i386__)
    for (int64_t offset = 0; offset < bytes; offset += 64) {
      _mm_clflush(data + offset);
    }
    _mm_mfence();
#else
    // No portable flush instruction: write a buffer larger than any last-level cache instead.
    static std::vector<char> scratch(size_t{256} << 20);
    for (size_t i = 0; i < scratch.size(); i += 64) {
      scratch[i] = static_cast<char>(scratch[i] + 1);
    }
    (void)data;
    (void)bytes;
#endif
  }
}

std::optional<std::string> compare_output(const KernelBuffers& got,
                                          size_t index,
                                          const std::string& expected,
                                          const Tolerance& tolerance) {
  const BufferSpec& spec = got.signature().params.at(index);
  TT_CHECK(static_cast<int64_t>(expected.size()) == spec.num_bytes())
      << "reference output '" << spec.name << "' has " << expected.size() << " bytes, expected "
      << spec.num_bytes();
  std::optional<std::string> result;
  with_element_type(spec.dtype, spec.name, [&](auto zero) {
    using T = decltype(zero);
    result = compare(spec, static_cast<const T*>(got.data(index)),
                     reinterpret_cast<const T*>(expected.data()), tolerance);
  });
  return result;
}

std::optional<std::string> compare_outputs(const KernelBuffers& got,
                                           const std::vector<std::string>& expected,
                                           const Tolerance& tolerance) {
  const KernelSignature& sig = got.signature();
  TT_CHECK(expected.size() == sig.params.size() - sig.num_inputs)
      << "the reference has " << expected.size() << " outputs, the kernel "
      << sig.params.size() - sig.num_inputs;
  std::string message;
  for (size_t o = 0; o < expected.size(); ++o) {
    std::optional<std::string> m = compare_output(got, sig.num_inputs + o, expected[o], tolerance);
    if (m) {
      message += (message.empty() ? "" : "\n") + *m;
    }
  }
  if (message.empty()) {
    return std::nullopt;
  }
  return message;
}

}  // namespace tensortune::measure
