// SPDX-License-Identifier: Apache-2.0
// The GPU model image (text form, checks) and the runtime that runs it through CudaDevice.
#include "tensortune/runtime/cuda_model.h"

#include "tensortune/runtime/cuda_driver.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace tensortune::runtime {
namespace {

constexpr const char* kMagic = "tensortune-cuda-model";
constexpr int kVersion = 1;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("cuda model image: " + what);
}

char kind_letter(CudaModelImage::Arg::Kind k) {
  switch (k) {
    case CudaModelImage::Arg::Kind::Input:
      return 'i';
    case CudaModelImage::Arg::Kind::Output:
      return 'o';
    case CudaModelImage::Arg::Kind::Arena:
      return 'a';
    case CudaModelImage::Arg::Kind::Weight:
      return 'w';
  }
  return '?';
}

/// Reads whitespace-separated tokens and raw byte runs from the image text.
class Reader {
 public:
  explicit Reader(const std::string& text) : text_(text) {}

  std::string word(const char* what) {
    skip_space();
    size_t start = at_;
    while (at_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[at_])))
      ++at_;
    if (start == at_)
      fail(std::string("missing ") + what);
    return text_.substr(start, at_ - start);
  }

  int64_t integer(const char* what, int64_t lo = 0, int64_t hi = INT64_MAX) {
    return to_integer(word(what), what, lo, hi);
  }

  static int64_t to_integer(const std::string& s, const char* what, int64_t lo, int64_t hi) {
    // At most 19 digits and not above INT64_MAX's, so stoll cannot throw out_of_range.
    if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos ||
        (s.size() == 19 && s > "9223372036854775807"))
      fail(std::string(what) + " '" + s.substr(0, 40) + "' is not a non-negative 64-bit integer");
    int64_t v = std::stoll(s);
    if (v < lo || v > hi)
      fail(std::string(what) + " " + s + " is out of range [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "]");
    return v;
  }

  void expect(const char* keyword) {
    std::string w = word(keyword);
    if (w != keyword)
      fail(std::string("expected '") + keyword + "', found '" + w.substr(0, 40) + "'");
  }

  /// `bytes` raw bytes after exactly one newline, then a newline.
  std::string block(int64_t bytes, const std::string& name) {
    if (at_ >= text_.size() || text_[at_] != '\n')
      fail("module " + name + ": its text does not start on a new line");
    ++at_;
    if (static_cast<uint64_t>(bytes) > text_.size() - at_)
      fail("module " + name + " claims " + std::to_string(bytes) + " bytes, " +
           std::to_string(text_.size() - at_) + " are left");
    std::string out = text_.substr(at_, static_cast<size_t>(bytes));
    at_ += static_cast<size_t>(bytes);
    if (at_ >= text_.size() || text_[at_] != '\n')
      fail("module " + name + ": its text does not end with a new line");
    return out;
  }

  bool at_end() {
    skip_space();
    return at_ == text_.size();
  }

 private:
  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_])))
      ++at_;
  }
  const std::string& text_;
  size_t at_ = 0;
};

constexpr int64_t kMaxCount = 1 << 24;

CudaModelImage::Arg parse_arg(const std::string& token) {
  CudaModelImage::Arg a;
  if (token.size() < 4)
    fail("malformed launch argument '" + token + "'");
  switch (token[0]) {
    case 'i':
      a.kind = CudaModelImage::Arg::Kind::Input;
      break;
    case 'o':
      a.kind = CudaModelImage::Arg::Kind::Output;
      break;
    case 'a':
      a.kind = CudaModelImage::Arg::Kind::Arena;
      break;
    case 'w':
      a.kind = CudaModelImage::Arg::Kind::Weight;
      break;
    default:
      fail("launch argument '" + token.substr(0, 40) + "' is not i, o, a or w");
  }
  const size_t colon = token.find(':');
  if (colon == std::string::npos)
    fail("launch argument '" + token.substr(0, 40) + "' has no ':BYTES'");
  a.index = Reader::to_integer(token.substr(1, colon - 1), "argument index", 0, INT64_MAX);
  a.bytes = Reader::to_integer(token.substr(colon + 1), "argument bytes", 0, INT64_MAX);
  return a;
}

}  // namespace

std::string CudaModelImage::serialize() const {
  std::ostringstream os;
  os << kMagic << " " << kVersion << "\n"
     << "arena " << arena_bytes << "\nweights " << weight_bytes << "\n";
  for (const auto* list : {&input_bytes, &output_bytes}) {
    os << (list == &input_bytes ? "inputs " : "outputs ") << list->size();
    for (int64_t b : *list)
      os << " " << b;
    os << "\n";
  }
  os << "calls " << num_calls << "\n";
  for (const Module& m : modules) {
    os << "module " << (m.is_ptx ? "ptx " : "cuda ") << m.text.size() << " " << m.name << "\n"
       << m.text << "\n";
    if (!m.cubin.empty())
      os << "cubin " << m.cubin.size() << " " << m.cubin_arch << "\n" << m.cubin << "\n";
  }
  for (const Launch& l : launches) {
    os << "launch " << l.call << " " << l.module << " " << l.kernel;
    for (int64_t v : l.grid)
      os << " " << v;
    for (int64_t v : l.block)
      os << " " << v;
    os << " " << l.shared_bytes << " " << l.args.size();
    for (const Arg& a : l.args)
      os << " " << kind_letter(a.kind) << a.index << ":" << a.bytes;
    os << "\n";
  }
  os << "end\n";
  return os.str();
}

CudaModelImage CudaModelImage::parse(const std::string& text) {
  Reader r(text);
  CudaModelImage image;
  if (r.word("header") != kMagic)
    fail(std::string("not a model image (it does not start with '") + kMagic + "')");
  const int64_t version = r.integer("version");
  if (version != kVersion)
    fail("version " + std::to_string(version) + " (this runtime reads " + std::to_string(kVersion) +
         ")");
  r.expect("arena");
  image.arena_bytes = r.integer("arena bytes");
  r.expect("weights");
  image.weight_bytes = r.integer("weight bytes");
  for (auto* list : {&image.input_bytes, &image.output_bytes}) {
    r.expect(list == &image.input_bytes ? "inputs" : "outputs");
    const int64_t n = r.integer("tensor count", 0, kMaxCount);
    for (int64_t i = 0; i < n; ++i)
      list->push_back(r.integer("tensor bytes"));
  }
  r.expect("calls");
  image.num_calls = static_cast<int32_t>(r.integer("call count", 0, kMaxCount));
  for (;;) {
    const std::string w = r.word("'module', 'launch' or 'end'");
    if (w == "end")
      break;
    if (w == "module") {
      Module m;
      const std::string kind = r.word("module kind");
      if (kind != "ptx" && kind != "cuda")
        fail("module kind '" + kind.substr(0, 40) + "' (ptx or cuda)");
      m.is_ptx = kind == "ptx";
      const int64_t bytes = r.integer("module bytes");
      m.name = r.word("module name");
      m.text = r.block(bytes, m.name);
      image.modules.push_back(std::move(m));
    } else if (w == "cubin") {
      if (image.modules.empty())
        fail("a cubin before any module");
      Module& m = image.modules.back();
      const int64_t bytes = r.integer("cubin bytes");
      m.cubin_arch = r.word("cubin arch");
      m.cubin = r.block(bytes, m.name + "'s cubin");
    } else if (w == "launch") {
      Launch l;
      l.call = static_cast<int32_t>(r.integer("launch call", 0, kMaxCount));
      l.module = static_cast<int32_t>(r.integer("launch module", 0, kMaxCount));
      l.kernel = r.word("kernel name");
      for (int64_t& v : l.grid)
        v = r.integer("grid extent", 1, std::numeric_limits<int32_t>::max());
      for (int64_t& v : l.block)
        v = r.integer("block extent", 1, 1024);
      l.shared_bytes = r.integer("shared bytes", 0, int64_t{1} << 30);
      const int64_t nargs = r.integer("argument count", 0, 4096);
      for (int64_t i = 0; i < nargs; ++i)
        l.args.push_back(parse_arg(r.word("launch argument")));
      image.launches.push_back(std::move(l));
    } else {
      fail("unknown line '" + w.substr(0, 40) + "'");
    }
  }
  if (!r.at_end())
    fail("text after 'end'");
  image.validate();
  return image;
}

void CudaModelImage::validate() const {
  for (size_t i = 0; i < launches.size(); ++i) {
    const Launch& l = launches[i];
    const std::string where = "launch " + std::to_string(i) + " (" + l.kernel + ")";
    if (l.module < 0 || static_cast<size_t>(l.module) >= modules.size())
      fail(where + " names module " + std::to_string(l.module) + " of " +
           std::to_string(modules.size()));
    if (l.call < 0 || l.call >= num_calls)
      fail(where + " belongs to call " + std::to_string(l.call) + " of " +
           std::to_string(num_calls));
    if (i > 0 && l.call < launches[i - 1].call)
      fail(where + " is out of call order");
    for (int d = 0; d < 3; ++d) {
      if (l.grid[d] < 1 || l.block[d] < 1)
        fail(where + " has an empty grid or block");
    }
    for (const Arg& a : l.args) {
      const bool tensor = a.kind == Arg::Kind::Input || a.kind == Arg::Kind::Output;
      const std::vector<int64_t>& tensors = a.kind == Arg::Kind::Input ? input_bytes : output_bytes;
      int64_t size = 0;
      if (tensor) {
        if (a.index < 0 || static_cast<size_t>(a.index) >= tensors.size())
          fail(where + " passes " + kind_letter(a.kind) + std::to_string(a.index) + " of " +
               std::to_string(tensors.size()));
        size = tensors[static_cast<size_t>(a.index)];
      } else {
        const int64_t limit = a.kind == Arg::Kind::Arena ? arena_bytes : weight_bytes;
        if (a.index < 0 || a.index > limit)
          fail(where + " passes offset " + std::to_string(a.index) + " past the " +
               (a.kind == Arg::Kind::Arena ? "arena" : "weights"));
        size = limit - a.index;
        // The kernels use float4/float2 accesses where they prove 16-byte alignment from the
        // buffer's start: every buffer must start 16-byte aligned (cuMemAlloc gives 256).
        if (a.index % 16 != 0)
          fail(where + " passes offset " + std::to_string(a.index) + ", not 16-byte aligned");
      }
      if (a.bytes < 0 || a.bytes > size)
        fail(where + " passes a buffer of " + std::to_string(a.bytes) + " bytes where " +
             std::to_string(size) + " are");
    }
  }
}

struct CudaModel::Impl {
  CudaModelImage image;
  CudaDevice device;
  std::vector<uint64_t> functions;  // per launch
  uint64_t arena = 0, weights = 0;
  std::vector<uint64_t> inputs, outputs;  // the model's own device buffers
  int64_t device_bytes = 0;

  Impl(CudaModelImage i, int ordinal) : image(std::move(i)), device(ordinal) {}

  uint64_t allocate(int64_t bytes) {
    // cuMemAlloc refuses 0 bytes; 256 keeps every buffer on its own aligned block.
    const auto size = static_cast<size_t>(std::max<int64_t>(bytes, 256));
    device_bytes += static_cast<int64_t>(size);
    return device.alloc(size);
  }

  void launch_all(const uint64_t* in, const uint64_t* out, int32_t only_call = -1) {
    for (size_t i = 0; i < image.launches.size(); ++i) {
      const CudaModelImage::Launch& l = image.launches[i];
      if (only_call >= 0 && l.call != only_call)
        continue;
      std::vector<uint64_t> args;
      args.reserve(l.args.size());
      for (const CudaModelImage::Arg& a : l.args) {
        switch (a.kind) {
          case CudaModelImage::Arg::Kind::Input:
            args.push_back(in[a.index]);
            break;
          case CudaModelImage::Arg::Kind::Output:
            args.push_back(out[a.index]);
            break;
          case CudaModelImage::Arg::Kind::Arena:
            args.push_back(arena + static_cast<uint64_t>(a.index));
            break;
          case CudaModelImage::Arg::Kind::Weight:
            args.push_back(weights + static_cast<uint64_t>(a.index));
            break;
        }
      }
      device.launch(functions[i], l.grid, l.block, l.shared_bytes, args);
    }
  }
};

CudaModel::CudaModel(CudaModelImage image, const void* weights, int device) {
  image.validate();
  for (const CudaModelImage::Module& m : image.modules) {
    if (!m.is_ptx)
      throw std::runtime_error(
          "cuda model: kernel " + m.name +
          " is CUDA C, not PTX: the model was compiled where NVRTC was missing; compile it again "
          "where NVRTC is installed");
  }
  impl_ = std::make_unique<Impl>(std::move(image), device);
  Impl& d = *impl_;
  std::vector<int> modules;
  const std::string arch = d.device.info().arch();
  for (const CudaModelImage::Module& m : d.image.modules) {
    // The cubin of this device's architecture skips the driver's PTX JIT; the PTX serves
    // every other architecture, and this one too should the driver refuse the cubin.
    int module = -1;
    if (!m.cubin.empty() && m.cubin_arch == arch) {
      try {
        module = d.device.load_module(m.cubin);
      } catch (const CudaError& e) {
        if (!e.leaves_context_usable())
          throw;
      }
    }
    modules.push_back(module >= 0 ? module : d.device.load_module(m.text));
  }
  for (const CudaModelImage::Launch& l : d.image.launches)
    d.functions.push_back(d.device.function(modules[static_cast<size_t>(l.module)], l.kernel));
  d.arena = d.allocate(d.image.arena_bytes);
  d.weights = d.allocate(d.image.weight_bytes);
  if (d.image.weight_bytes > 0) {
    if (weights == nullptr)
      throw std::runtime_error("cuda model: no weights given (the model needs " +
                               std::to_string(d.image.weight_bytes) + " bytes)");
    d.device.copy_to_device(d.weights, weights, static_cast<size_t>(d.image.weight_bytes));
  }
  for (int64_t b : d.image.input_bytes)
    d.inputs.push_back(d.allocate(b));
  for (int64_t b : d.image.output_bytes)
    d.outputs.push_back(d.allocate(b));
}

CudaModel::~CudaModel() {
  if (!impl_)
    return;
  Impl& d = *impl_;
  try {
    for (uint64_t p : d.inputs)
      d.device.free(p);
    for (uint64_t p : d.outputs)
      d.device.free(p);
    d.device.free(d.arena);
    d.device.free(d.weights);
  } catch (const std::exception&) {
    // A lost context frees everything with it.
  }
}

const CudaModelImage& CudaModel::image() const {
  return impl_->image;
}

void CudaModel::run_host(const void* const* inputs, void* const* outputs) {
  Impl& d = *impl_;
  for (size_t i = 0; i < d.inputs.size(); ++i)
    d.device.copy_to_device(d.inputs[i], inputs[i], static_cast<size_t>(d.image.input_bytes[i]));
  d.launch_all(d.inputs.data(), d.outputs.data());
  for (size_t i = 0; i < d.outputs.size(); ++i)
    d.device.copy_to_host(outputs[i], d.outputs[i], static_cast<size_t>(d.image.output_bytes[i]));
  d.device.synchronize();
}

void CudaModel::run_device(const uint64_t* inputs, const uint64_t* outputs) {
  impl_->launch_all(inputs, outputs);
  impl_->device.synchronize();
}

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

void CudaModel::time(int runs,
                     double* host_to_host,
                     double* device_resident,
                     double* call_seconds) {
  if (runs < 1)
    throw std::runtime_error("cuda model: runs must be positive, not " + std::to_string(runs));
  Impl& d = *impl_;
  std::vector<std::vector<char>> in, out;
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  for (int64_t b : d.image.input_bytes) {
    in.emplace_back(static_cast<size_t>(b));
    in_ptrs.push_back(in.back().data());
  }
  for (int64_t b : d.image.output_bytes) {
    out.emplace_back(static_cast<size_t>(b));
    out_ptrs.push_back(out.back().data());
  }
  // The inputs the caller's last run left stay on the device; host-to-host runs copy zeros.
  run_device(d.inputs.data(), d.outputs.data());  // warm-up
  std::vector<double> h2h, resident;
  std::vector<std::vector<double>> calls(static_cast<size_t>(d.image.num_calls));
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    run_host(in_ptrs.data(), out_ptrs.data());
    h2h.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    resident.push_back(
        d.device.time_events(1, [&] { d.launch_all(d.inputs.data(), d.outputs.data()); }));
    // Each call's own launches, only when asked for: num_calls more event pairs per round.
    for (int32_t c = 0; call_seconds != nullptr && c < d.image.num_calls; ++c) {
      calls[static_cast<size_t>(c)].push_back(
          d.device.time_events(1, [&] { d.launch_all(d.inputs.data(), d.outputs.data(), c); }));
    }
  }
  if (host_to_host != nullptr)
    *host_to_host = median_of(h2h);
  if (device_resident != nullptr)
    *device_resident = median_of(resident);
  if (call_seconds != nullptr) {
    for (size_t c = 0; c < calls.size(); ++c)
      call_seconds[c] = median_of(calls[c]);
  }
}

int64_t CudaModel::device_bytes() const {
  return impl_->device_bytes;
}

}  // namespace tensortune::runtime

namespace {

struct Handle {
  std::unique_ptr<tensortune::runtime::CudaModel> model;
  std::string error;
};

void copy_message(const std::string& message, char* out, int64_t bytes) {
  if (out == nullptr || bytes <= 0)
    return;
  const size_t n = std::min(message.size(), static_cast<size_t>(bytes - 1));
  std::memcpy(out, message.data(), n);
  out[n] = '\0';
}

/// Runs `body` on an open handle; 0, or 1 with the exception's message kept for
/// tt_cuda_model_error.
template <class F>
int32_t guarded(void* model, F body) {
  auto* h = static_cast<Handle*>(model);
  if (h == nullptr)
    return 1;
  try {
    body(*h->model);
    h->error.clear();
    return 0;
  } catch (const std::exception& e) {
    h->error = e.what();
  } catch (...) {
    h->error = "unknown error";
  }
  return 1;
}

}  // namespace

extern "C" {

void* tt_cuda_model_open(const char* image,
                         int64_t image_bytes,
                         const void* weights,
                         int32_t device,
                         char* error,
                         int64_t error_bytes) {
  try {
    if (image == nullptr || image_bytes <= 0)
      throw std::runtime_error("cuda model: no image");
    auto h = std::make_unique<Handle>();
    h->model = std::make_unique<tensortune::runtime::CudaModel>(
        tensortune::runtime::CudaModelImage::parse(
            std::string(image, static_cast<size_t>(image_bytes))),
        weights, device);
    return h.release();
  } catch (const std::exception& e) {
    copy_message(e.what(), error, error_bytes);
  } catch (...) {
    copy_message("unknown error", error, error_bytes);
  }
  return nullptr;
}

int32_t tt_cuda_model_run(void* model, const void* const* inputs, void* const* outputs) {
  return guarded(model, [&](tensortune::runtime::CudaModel& m) { m.run_host(inputs, outputs); });
}

int32_t tt_cuda_model_run_device(void* model, const uint64_t* inputs, const uint64_t* outputs) {
  return guarded(model, [&](tensortune::runtime::CudaModel& m) { m.run_device(inputs, outputs); });
}

int32_t tt_cuda_model_time(void* model,
                           int32_t runs,
                           double* host_to_host,
                           double* device_resident,
                           double* call_seconds) {
  return guarded(model, [&](tensortune::runtime::CudaModel& m) {
    m.time(runs, host_to_host, device_resident, call_seconds);
  });
}

int64_t tt_cuda_model_device_bytes(void* model) {
  auto* h = static_cast<Handle*>(model);
  return h == nullptr ? -1 : h->model->device_bytes();
}

const char* tt_cuda_model_error(void* model) {
  auto* h = static_cast<Handle*>(model);
  return h == nullptr ? "no model" : h->error.c_str();
}

void tt_cuda_model_close(void* model) {
  delete static_cast<Handle*>(model);
}

}  // extern "C"
