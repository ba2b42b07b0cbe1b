// SPDX-License-Identifier: Apache-2.0
// The oneDNN baselines of bench/vs_vendor (oneDNN 2.x API: operation descriptors, then primitive
// descriptors): matmul / sgemm variants, op-by-op and fused epilogues, convolution layouts.
#include "vs_vendor_dnnl.h"

#include <memory>
#include <unordered_map>
#include <utility>

namespace tensortune::bench {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr memory::data_type kF32 = memory::data_type::f32;

/// The primitives of one variant, run in order on one stream.
struct Steps {
  dnnl::stream stream;
  std::vector<std::pair<dnnl::primitive, std::unordered_map<int, memory>>> list;

  void add(dnnl::primitive p, std::unordered_map<int, memory> args) {
    list.emplace_back(std::move(p), std::move(args));
  }
  void operator()() {
    for (auto& [primitive, args] : list) {
      primitive.execute(stream, args);
    }
    stream.wait();
  }
};

memory wrap(const memory::desc& md, const dnnl::engine& engine, const float* data) {
  // oneDNN takes a mutable handle; inputs are only read.
  return memory(md, engine,
                const_cast<float*>(data));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
}

/// `user` copied into `md` once, now (a weight reorder, not timed); `user` itself when equal.
memory reordered(memory user,
                 const memory::desc& md,
                 const dnnl::engine& engine,
                 dnnl::stream stream) {
  if (user.get_desc() == md) {
    return user;
  }
  memory out(md, engine);
  dnnl::reorder(user, out).execute(stream, user, out);
  stream.wait();
  return out;
}

dnnl::algorithm eltwise_algorithm(Epilogue e) {
  return e == Epilogue::Relu ? dnnl::algorithm::eltwise_relu : dnnl::algorithm::eltwise_gelu_erf;
}

std::string epilogue_name(Epilogue e) {
  switch (e) {
    case Epilogue::None:
      return "";
    case Epilogue::Relu:
      return "relu";
    case Epilogue::Gelu:
      return "gelu";
  }
  return "";
}

/// Appends the op-by-op tail: out += bias (a binary add broadcasting `bias_md`), then the eltwise
/// epilogue, both in place on `out`. Returns the implementations used.
std::string add_tail(Steps& steps,
                     const memory& out,
                     const float* bias,
                     const memory::desc& bias_md,
                     Epilogue epilogue,
                     const dnnl::engine& engine) {
  std::string impl;
  if (bias != nullptr) {
    dnnl::binary::primitive_desc pd(
        dnnl::binary::desc(dnnl::algorithm::binary_add, out.get_desc(), bias_md, out.get_desc()),
        engine);
    steps.add(dnnl::binary(pd), {{DNNL_ARG_SRC_0, out},
                                 {DNNL_ARG_SRC_1, wrap(bias_md, engine, bias)},
                                 {DNNL_ARG_DST, out}});
    impl += std::string(" + ") + pd.impl_info_str();
  }
  if (epilogue != Epilogue::None) {
    dnnl::eltwise_forward::primitive_desc pd(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, eltwise_algorithm(epilogue),
                                    out.get_desc(), 0.F, 0.F),
        engine);
    steps.add(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, out}, {DNNL_ARG_DST, out}});
    impl += std::string(" + ") + pd.impl_info_str();
  }
  return impl;
}

}  // namespace

Dnnl::Dnnl() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}

Variant Dnnl::matmul_variant(const GemmProblem& p, bool packed_b, bool fused) {
  const memory::desc a_md({p.m, p.k}, kF32, Tag::ab);
  const memory::desc out_md({p.m, p.n}, kF32, Tag::ab);
  const memory::desc b_user_md({p.k, p.n}, kF32, p.b_transposed ? Tag::ba : Tag::ab);
  const memory::desc bias_md({1, p.n}, kF32, Tag::ab);
  const memory::desc b_md = packed_b ? memory::desc({p.k, p.n}, kF32, Tag::any) : b_user_md;
  const bool fused_bias = fused && p.bias != nullptr;
  dnnl::primitive_attr attr;
  if (fused && p.epilogue != Epilogue::None) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.F, eltwise_algorithm(p.epilogue), 0.F, 0.F);
    attr.set_post_ops(ops);
  }
  const dnnl::matmul::desc desc = fused_bias ? dnnl::matmul::desc(a_md, b_md, bias_md, out_md)
                                             : dnnl::matmul::desc(a_md, b_md, out_md);
  const dnnl::matmul::primitive_desc pd(desc, attr, engine_);
  const memory b = reordered(wrap(b_user_md, engine_, p.b), pd.weights_desc(), engine_, stream_);
  const memory out(out_md, engine_, p.out);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, wrap(a_md, engine_, p.a)}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, out}};
  if (fused_bias) {
    args.emplace(DNNL_ARG_BIAS, wrap(bias_md, engine_, p.bias));
  }
  auto steps = std::make_shared<Steps>(Steps{stream_, {}});
  steps->add(dnnl::matmul(pd), std::move(args));
  Variant v;
  v.impl = pd.impl_info_str();
  v.name = packed_b ? "matmul(packed B)" : "matmul";
  if (fused) {
    v.name += " fused post-ops";
    v.primary = false;
  } else {
    v.impl += add_tail(*steps, out, p.bias, bias_md, p.epilogue, engine_);
    v.name += p.bias != nullptr ? "+add" : "";
    v.name += p.epilogue != Epilogue::None ? "+" + epilogue_name(p.epilogue) : "";
  }
  v.run = [steps] {
    (*steps)();
  };
  return v;
}

std::vector<Variant> Dnnl::gemm(const GemmProblem& p) {
  std::vector<Variant> out = {matmul_variant(p, false, false), matmul_variant(p, true, false)};
  if (p.bias != nullptr || p.epilogue != Epilogue::None) {
    out.push_back(matmul_variant(p, true, true));
    return out;
  }
  Variant sgemm;
  sgemm.name = "sgemm";
  sgemm.impl = "dnnl_sgemm";
  sgemm.run = [p] {
    dnnl::sgemm('N', p.b_transposed ? 'T' : 'N', p.m, p.n, p.k, 1.F, p.a, p.k, p.b,
                p.b_transposed ? p.k : p.n, 0.F, p.out, p.n);
  };
  out.push_back(std::move(sgemm));
  return out;
}

Variant Dnnl::conv_variant(const ConvProblem& p, bool preferred_layout, dnnl::algorithm algorithm) {
  const int64_t oh = (p.h + 2 * p.pad - p.r) / p.stride + 1;
  const int64_t ow = (p.w + 2 * p.pad - p.s) / p.stride + 1;
  const memory::desc src_user({p.n, p.c, p.h, p.w}, kF32, Tag::nchw);
  const memory::desc dst_user({p.n, p.k, oh, ow}, kF32, Tag::nchw);
  const memory::desc w_user =
      p.groups > 1
          ? memory::desc({p.groups, p.k / p.groups, p.c / p.groups, p.r, p.s}, kF32, Tag::goihw)
          : memory::desc({p.k, p.c, p.r, p.s}, kF32, Tag::oihw);
  const memory::desc any_src({p.n, p.c, p.h, p.w}, kF32, Tag::any);
  const memory::desc any_dst({p.n, p.k, oh, ow}, kF32, Tag::any);
  const memory::desc any_w(w_user.dims(), kF32, Tag::any);
  const memory::dims strides = {p.stride, p.stride};
  const memory::dims padding = {p.pad, p.pad};
  const dnnl::convolution_forward::primitive_desc pd(
      dnnl::convolution_forward::desc(
          dnnl::prop_kind::forward_inference, algorithm, preferred_layout ? any_src : src_user,
          any_w, preferred_layout ? any_dst : dst_user, strides, padding, padding),
      engine_);
  const memory weights =
      reordered(wrap(w_user, engine_, p.weight), pd.weights_desc(), engine_, stream_);
  auto steps = std::make_shared<Steps>(Steps{stream_, {}});
  Variant v;
  const memory src_plain = wrap(src_user, engine_, p.data);
  const memory dst_plain(dst_user, engine_, p.out);
  memory src = src_plain;
  if (pd.src_desc() != src_user) {
    src = memory(pd.src_desc(), engine_);
    steps->add(dnnl::reorder(src_plain, src), {{DNNL_ARG_FROM, src_plain}, {DNNL_ARG_TO, src}});
    v.impl += "reorder + ";
  }
  const memory dst = pd.dst_desc() == dst_user ? dst_plain : memory(pd.dst_desc(), engine_);
  steps->add(dnnl::convolution_forward(pd),
             {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
  v.impl += pd.impl_info_str();
  v.impl += add_tail(*steps, dst, p.bias, memory::desc({1, p.k, 1, 1}, kF32, Tag::nchw), p.epilogue,
                     engine_);
  if (pd.dst_desc() != dst_user) {
    steps->add(dnnl::reorder(dst, dst_plain), {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, dst_plain}});
    v.impl += " + reorder";
  }
  v.name = std::string(preferred_layout ? "preferred layout+reorders" : "nchw") +
           (algorithm == dnnl::algorithm::convolution_auto ? " (auto)" : "");
  v.name += p.bias != nullptr ? "+add" : "";
  v.name += p.epilogue != Epilogue::None ? "+" + epilogue_name(p.epilogue) : "";
  v.run = [steps] {
    (*steps)();
  };
  return v;
}

std::vector<Variant> Dnnl::conv(const ConvProblem& p) {
  std::vector<Variant> out = {conv_variant(p, true, dnnl::algorithm::convolution_direct)};
  Variant automatic = conv_variant(p, true, dnnl::algorithm::convolution_auto);
  if (automatic.impl != out.front().impl) {
    out.push_back(std::move(automatic));
  }
  out.push_back(conv_variant(p, false, dnnl::algorithm::convolution_direct));
  return out;
}

}  // namespace tensortune::bench
