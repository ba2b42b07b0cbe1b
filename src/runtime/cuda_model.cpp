// SPDX-License-Identifier: Apache-2.0
// The runtime that runs a GPU model image through CudaDevice (one stream, one arena, the
// launches one by one or as one CUDA graph), and its C entry points.
#include "tensortune/runtime/cuda_model.h"

#include "tensortune/runtime/cuda_driver.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace tensortune::runtime {

struct CudaModel::Impl {
  CudaModelImage image;
  CudaDevice device;
  std::vector<uint64_t> functions;  // per launch
  uint64_t arena = 0, weights = 0;
  std::vector<uint64_t> inputs, outputs;  // the model's own device buffers
  int64_t device_bytes = 0;
  /// The launches on the model's own buffers as one CUDA graph (0: none), and whether runs use
  /// it (choice.graph) and why.
  uint64_t graph = 0;
  CudaModel::LaunchChoice choice;

  Impl(CudaModelImage i, int ordinal) : image(std::move(i)), device(ordinal) {}

  uint64_t allocate(int64_t bytes) {
    // cuMemAlloc refuses 0 bytes; 256 keeps every buffer on its own aligned block.
    const auto size = static_cast<size_t>(std::max<int64_t>(bytes, 256));
    device_bytes += static_cast<int64_t>(size);
    return device.alloc(size);
  }

  /// Every launch (or call `only_call`'s), on `in` and `out`: the whole model on its own
  /// buffers runs as the captured graph when that was chosen.
  void launch_all(const uint64_t* in, const uint64_t* out, int32_t only_call = -1) {
    if (choice.graph && only_call < 0 && std::equal(inputs.begin(), inputs.end(), in) &&
        std::equal(outputs.begin(), outputs.end(), out)) {
      device.launch_graph(graph);
      return;
    }
    launch_each(in, out, only_call);
  }

  void launch_each(const uint64_t* in, const uint64_t* out, int32_t only_call = -1) {
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

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// TT_CUDA_GRAPH: "0"/"off" never, "1"/"on" always (where the driver has graphs), else (unset,
/// "auto") the faster of the two.
CudaModel::LaunchMode launch_mode_from_environment() {
  const char* value = std::getenv("TT_CUDA_GRAPH");
  const std::string mode = value == nullptr ? "" : value;
  if (mode == "0" || mode == "off")
    return CudaModel::LaunchMode::Each;
  if (mode == "1" || mode == "on")
    return CudaModel::LaunchMode::Graph;
  return CudaModel::LaunchMode::Auto;
}

}  // namespace

void CudaModel::choose_launches(LaunchMode mode) {
  Impl& d = *impl_;
  d.choice = LaunchChoice{};
  if (mode == LaunchMode::Each)
    return;
  if (!d.device.supports_graphs()) {
    d.choice.note = "the CUDA driver has no graphs";
    return;
  }
  if (d.graph == 0) {
    // The model's own inputs hold zeros first, so that a kernel indexing by them (a gather)
    // stays in bounds while the launches are timed below.
    for (size_t i = 0; i < d.inputs.size(); ++i) {
      const std::vector<char> zeros(static_cast<size_t>(d.image.input_bytes[i]), 0);
      d.device.copy_to_device(d.inputs[i], zeros.data(), zeros.size());
    }
    try {
      d.graph = d.device.capture_graph([&] { d.launch_each(d.inputs.data(), d.outputs.data()); });
    } catch (const CudaError& e) {
      if (!e.leaves_context_usable())
        throw;
      d.choice.note = std::string("capturing the launches failed: ") + e.what();
      return;
    }
  }
  if (mode == LaunchMode::Auto) {
    // Alternating rounds after a warm-up of each, so a change of the clock hits both alike.
    constexpr int kRounds = 7;
    constexpr int kRunsPerRound = 3;
    d.launch_each(d.inputs.data(), d.outputs.data());
    d.device.launch_graph(d.graph);
    d.device.synchronize();
    std::vector<double> each, graph;
    for (int r = 0; r < kRounds; ++r) {
      each.push_back(d.device.time_events(
          kRunsPerRound, [&] { d.launch_each(d.inputs.data(), d.outputs.data()); }));
      graph.push_back(d.device.time_events(kRunsPerRound, [&] { d.device.launch_graph(d.graph); }));
    }
    d.choice.each_seconds = median_of(each);
    d.choice.graph_seconds = median_of(graph);
    d.choice.graph = d.choice.graph_seconds < d.choice.each_seconds;
    d.choice.note = d.choice.graph ? "the graph ran faster" : "the launches one by one ran faster";
  } else {
    d.choice.graph = true;
    d.choice.note = "asked for";
  }
}

CudaModel::LaunchChoice CudaModel::launch_choice() const {
  return impl_->choice;
}

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
  choose_launches(launch_mode_from_environment());
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
          d.device.time_events(1, [&] { d.launch_each(d.inputs.data(), d.outputs.data(), c); }));
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

int32_t tt_cuda_model_launches(void* model,
                               int32_t mode,
                               double* each_seconds,
                               double* graph_seconds) {
  using tensortune::runtime::CudaModel;
  CudaModel::LaunchChoice choice;
  const int32_t rc = guarded(model, [&](CudaModel& m) {
    if (mode > 2)
      throw std::runtime_error("cuda model: launch mode " + std::to_string(mode) +
                               " (0 one by one, 1 a CUDA graph, 2 the faster)");
    if (mode >= 0)
      m.choose_launches(mode == 0   ? CudaModel::LaunchMode::Each
                        : mode == 1 ? CudaModel::LaunchMode::Graph
                                    : CudaModel::LaunchMode::Auto);
    choice = m.launch_choice();
  });
  if (rc != 0)
    return -1;
  if (each_seconds != nullptr)
    *each_seconds = choice.each_seconds;
  if (graph_seconds != nullptr)
    *graph_seconds = choice.graph_seconds;
  return choice.graph ? 1 : 0;
}

const char* tt_cuda_model_error(void* model) {
  auto* h = static_cast<Handle*>(model);
  return h == nullptr ? "no model" : h->error.c_str();
}

void tt_cuda_model_close(void* model) {
  delete static_cast<Handle*>(model);
}

}  // extern "C"
