// SPDX-License-Identifier: Apache-2.0
// GPU candidates: their CUDA C and launch shapes, NVRTC's cubin, and the blob that carries both.
#include "measure/gpu_image.h"

#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/support/error.h"
#include "tensortune/support/json.h"

#include <cstring>

namespace tensortune::measure::detail {
namespace {

constexpr char kImageMagic[4] = {'T', 'T', 'G', '1'};

}  // namespace

std::string GpuImage::encode() const {
  KernelSignature all;  // the buffers travel in the signature's JSON form
  all.name = "gpu";
  all.params = buffers;
  all.num_inputs = num_params;
  support::Json header = support::Json::object();
  header["buffers"] = all.to_json();
  support::Json list = support::Json::array();
  for (const GpuLaunch& k : kernels) {
    list.push_back(codegen::kernel_json(k));
  }
  header["kernels"] = std::move(list);
  std::string text = header.dump();
  std::string out(kImageMagic, sizeof(kImageMagic));
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  }
  return out + text + cubin;
}

GpuImage GpuImage::decode(const std::string& blob) {
  TT_USER_CHECK(is_gpu_image(blob))
      << "gpu image: not a GPU candidate (" << blob.size() << " bytes)";
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) {
    n |= static_cast<uint64_t>(static_cast<unsigned char>(blob[4 + i])) << (8 * i);
  }
  TT_USER_CHECK(n <= blob.size() - 12) << "gpu image: truncated header";
  support::Json header = support::Json::parse(blob.substr(12, n));
  GpuImage image;
  KernelSignature all = KernelSignature::from_json(header.at("buffers"));
  image.buffers = std::move(all.params);
  image.num_params = all.num_inputs;
  for (const support::Json& entry : header.at("kernels").as_array("gpu image field 'kernels'")) {
    GpuLaunch k = codegen::kernel_from_json(entry);
    for (int index : k.params) {
      TT_USER_CHECK(static_cast<size_t>(index) < image.buffers.size())
          << "gpu image: kernel '" << k.name << "' names buffer " << index << " of "
          << image.buffers.size();
    }
    image.kernels.push_back(std::move(k));
  }
  image.cubin = blob.substr(12 + n);
  return image;
}

bool is_gpu_image(const std::string& blob) {
  return blob.size() >= 12 && std::memcmp(blob.data(), kImageMagic, 4) == 0;
}

GpuSource generate_gpu(const ir::LoweredFunc& func, const target::Target& target) {
  codegen::CudaModule module = codegen::generate_cuda(func, target);
  GpuSource out;
  for (const ir::Buffer& b : module.buffers) {
    out.image.buffers.push_back(BufferSpec{b.name(), b.dtype(), b.shape()});
  }
  out.image.num_params = static_cast<size_t>(module.num_params);
  out.image.kernels = module.kernels;
  out.source = std::move(module.source);
  return out;
}

std::string compile_gpu(const std::string& source, const target::Target& target) {
  codegen::NvrtcOutput compiled = codegen::compile_cuda(source, target, true);
  TT_USER_CHECK(!compiled.cubin.empty()) << "nvrtc returned no cubin";
  return std::move(compiled.cubin);
}

}  // namespace tensortune::measure::detail
