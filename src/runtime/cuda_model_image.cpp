// SPDX-License-Identifier: Apache-2.0
// The GPU model image: its text form and the checks of its launches and buffers.
#include "tensortune/runtime/cuda_model.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
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

}  // namespace tensortune::runtime
