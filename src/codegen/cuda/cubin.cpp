// SPDX-License-Identifier: Apache-2.0
// Each kernel's registers and stack frame as a cubin records them. NVRTC on a machine with a CUDA
// driver serves a repeated compile from the driver's compute cache without running ptxas, so its
// log then lacks ptxas's report; the cubin's .nv.info section holds the same two figures
// (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE, per function symbol) and is always there.
#include "tensortune/codegen/cuda_codegen.h"

#include <cstring>
#include <map>
#include <optional>
#include <set>

namespace tensortune::codegen {
namespace {

/// A cubin is a 64-bit little-endian ELF file; every read is checked against its size.
class Elf {
 public:
  explicit Elf(const std::string& bytes) : b_(bytes) {}

  template <typename T>
  std::optional<T> at(uint64_t offset) const {
    if (offset > b_.size() || b_.size() - offset < sizeof(T))
      return std::nullopt;
    T value;
    std::memcpy(&value, b_.data() + offset, sizeof(T));
    return value;
  }

  /// Where section `s` lies (sh_offset, sh_size) and the section it links to (sh_link).
  struct Section {
    uint64_t offset = 0, size = 0;
    uint32_t link = 0;
  };
  std::optional<Section> section(uint64_t s) const {
    const std::optional<uint64_t> offset = at<uint64_t>(header(s) + 24);
    const std::optional<uint64_t> size = at<uint64_t>(header(s) + 32);
    const std::optional<uint32_t> link = at<uint32_t>(header(s) + 40);
    if (!offset || !size || !link)
      return std::nullopt;
    return Section{*offset, *size, *link};
  }
  /// True when all of `s` lies inside the file.
  bool inside(const Section& s) const {
    return s.offset <= b_.size() && s.size <= b_.size() - s.offset;
  }

  /// The NUL-terminated string at `offset` of the section at `section`, or nullopt.
  std::optional<std::string> string_at(uint64_t section_index, uint64_t offset) const {
    const std::optional<Section> s = section(section_index);
    if (!s || offset >= s->size || !inside(*s))
      return std::nullopt;
    const char* begin = b_.data() + s->offset + offset;
    const void* nul = std::memchr(begin, '\0', s->size - offset);
    if (nul == nullptr)
      return std::nullopt;
    return std::string(begin, static_cast<const char*>(nul));
  }

  uint64_t header(uint64_t section) const { return shoff_ + section * kHeaderBytes; }

  bool open() {
    static const char kMagic[] = {'\x7f', 'E', 'L', 'F', 2, 1};  // ELFCLASS64, little-endian
    if (b_.size() < 64 || std::memcmp(b_.data(), kMagic, sizeof kMagic) != 0)
      return false;
    shoff_ = at<uint64_t>(0x28).value_or(0);
    sections_ = at<uint16_t>(0x3c).value_or(0);
    names_ = at<uint16_t>(0x3e).value_or(0);
    return at<uint16_t>(0x3a) == kHeaderBytes && names_ < sections_ &&
           at<uint32_t>(header(sections_ - 1)).has_value();
  }

  uint64_t sections() const { return sections_; }
  std::optional<std::string> section_name(uint64_t s) const {
    const std::optional<uint32_t> name = at<uint32_t>(header(s));
    return name ? string_at(names_, *name) : std::nullopt;
  }

 private:
  static constexpr uint16_t kHeaderBytes = 64;
  const std::string& b_;
  uint64_t shoff_ = 0;
  uint64_t sections_ = 0;
  uint64_t names_ = 0;
};

constexpr uint8_t kFormatSizedValue = 0x04;  // EIFMT_SVAL: a 16-bit size, then that many bytes
constexpr uint8_t kFormatHalfValue = 0x03;   // EIFMT_HVAL: a 16-bit value
constexpr uint8_t kFormatByteValue = 0x02;   // EIFMT_BVAL: an 8-bit value
constexpr uint8_t kRegisterCount = 0x2f;     // EIATTR_REGCOUNT {symbol, registers}
constexpr uint8_t kFrameSize = 0x11;         // EIATTR_FRAME_SIZE {symbol, bytes}
constexpr uint64_t kSymbolBytes = 24;        // sizeof(Elf64_Sym)

}  // namespace

std::vector<KernelResources> cubin_resources(const std::string& cubin) {
  Elf elf(cubin);
  if (!elf.open())
    return {};
  // The entry functions each have a ".nv.info.<name>" section; ".nv.info" itself holds the
  // per-symbol attributes of every function, entry or not.
  std::set<std::string> entries;
  std::optional<uint64_t> info;
  for (uint64_t s = 0; s < elf.sections(); ++s) {
    const std::optional<std::string> name = elf.section_name(s);
    if (!name)
      return {};
    if (*name == ".nv.info")
      info = s;
    else if (name->rfind(".nv.info.", 0) == 0)
      entries.insert(name->substr(9));
  }
  if (!info)
    return {};
  const std::optional<Elf::Section> attributes = elf.section(*info);  // links the symbols
  if (!attributes || attributes->link >= elf.sections() || !elf.inside(*attributes))
    return {};
  const std::optional<Elf::Section> symbols = elf.section(attributes->link);
  std::vector<KernelResources> out;
  std::map<uint32_t, size_t> of_symbol;
  const uint64_t end = attributes->offset + attributes->size;
  for (uint64_t p = attributes->offset; p + 2 <= end;) {
    const uint8_t format = elf.at<uint8_t>(p).value_or(0);
    const uint8_t attribute = elf.at<uint8_t>(p + 1).value_or(0);
    p += 2;
    if (format == kFormatHalfValue) {
      p += 2;
      continue;
    }
    if (format == kFormatByteValue) {
      p += 1;
      continue;
    }
    if (format != kFormatSizedValue)
      continue;  // EIFMT_NVAL: no value
    const uint16_t bytes = elf.at<uint16_t>(p).value_or(0);
    p += 2;
    const uint64_t value_at = p;
    p += bytes;
    if ((attribute != kRegisterCount && attribute != kFrameSize) || bytes != 8 || !symbols)
      continue;
    const std::optional<uint32_t> symbol = elf.at<uint32_t>(value_at);
    const std::optional<uint32_t> value = elf.at<uint32_t>(value_at + 4);
    if (!symbol || !value || (uint64_t{*symbol} + 1) * kSymbolBytes > symbols->size)
      continue;
    const std::optional<uint32_t> name_at =
        elf.at<uint32_t>(symbols->offset + *symbol * kSymbolBytes);
    const std::optional<std::string> name =
        name_at ? elf.string_at(symbols->link, *name_at) : std::nullopt;
    if (!name || entries.count(*name) == 0)
      continue;
    auto [it, added] = of_symbol.emplace(*symbol, out.size());
    if (added) {
      KernelResources k{*name};
      k.spill_store_bytes = k.spill_load_bytes = -1;  // ptxas's alone; the cubin keeps no count
      out.push_back(std::move(k));
    }
    (attribute == kRegisterCount ? out[it->second].registers : out[it->second].stack_bytes) =
        *value;
  }
  return out;
}

}  // namespace tensortune::codegen
