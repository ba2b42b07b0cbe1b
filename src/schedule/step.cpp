// SPDX-License-Identifier: Apache-2.0
// Steps as values: their kind word, a readable line, equality, and memory scope
// names.
#include "tensortune/schedule/step.h"

#include "annotation_names.h"
#include "tensortune/support/error.h"

#include <sstream>
#include <tuple>
#include <type_traits>

namespace tensortune::schedule {
namespace {

// Field-wise equality, one overload per step kind (a new kind without one fails
// to compile).
bool fields_equal(const Split& a, const Split& b) {
  return std::tie(a.stage, a.axis, a.factor, a.nparts) ==
         std::tie(b.stage, b.axis, b.factor, b.nparts);
}
bool fields_equal(const Fuse& a, const Fuse& b) {
  return std::tie(a.stage, a.axes) == std::tie(b.stage, b.axes);
}
bool fields_equal(const Reorder& a, const Reorder& b) {
  return std::tie(a.stage, a.order) == std::tie(b.stage, b.order);
}
bool fields_equal(const Tile& a, const Tile& b) {
  return std::tie(a.stage, a.x, a.y, a.x_factor, a.y_factor) ==
         std::tie(b.stage, b.x, b.y, b.x_factor, b.y_factor);
}
bool fields_equal(const Annotate& a, const Annotate& b) {
  return std::tie(a.stage, a.axis, a.kind) == std::tie(b.stage, b.axis, b.kind);
}
bool fields_equal(const PragmaUnroll& a, const PragmaUnroll& b) {
  return std::tie(a.stage, a.axis, a.max_step) == std::tie(b.stage, b.axis, b.max_step);
}
bool fields_equal(const ComputeAt& a, const ComputeAt& b) {
  return std::tie(a.stage, a.target_stage, a.target_axis) ==
         std::tie(b.stage, b.target_stage, b.target_axis);
}
bool fields_equal(const ComputeInline& a, const ComputeInline& b) {
  return a.stage == b.stage;
}
bool fields_equal(const ComputeRoot& a, const ComputeRoot& b) {
  return a.stage == b.stage;
}
bool fields_equal(const CacheWrite& a, const CacheWrite& b) {
  return std::tie(a.stage, a.scope, a.blocks) == std::tie(b.stage, b.scope, b.blocks);
}
bool fields_equal(const CacheRead& a, const CacheRead& b) {
  return std::tie(a.stage, a.scope, a.readers, a.blocks, a.row_pad, a.stages) ==
         std::tie(b.stage, b.scope, b.readers, b.blocks, b.row_pad, b.stages);
}

const char* kind_word(const Split& /*step*/) {
  return "split";
}
const char* kind_word(const Fuse& /*step*/) {
  return "fuse";
}
const char* kind_word(const Reorder& /*step*/) {
  return "reorder";
}
const char* kind_word(const Tile& /*step*/) {
  return "tile";
}
const char* kind_word(const Annotate& s) {
  return annotation_name(s.kind);
}
const char* kind_word(const PragmaUnroll& /*step*/) {
  return "pragma_unroll";
}
const char* kind_word(const ComputeAt& /*step*/) {
  return "compute_at";
}
const char* kind_word(const ComputeInline& /*step*/) {
  return "compute_inline";
}
const char* kind_word(const ComputeRoot& /*step*/) {
  return "compute_root";
}
const char* kind_word(const CacheWrite& /*step*/) {
  return "cache_write";
}
const char* kind_word(const CacheRead& /*step*/) {
  return "cache_read";
}

std::string list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : ", ") + names[i];
  }
  return out;
}

void describe(std::ostream& os, const Split& s) {
  os << "split " << s.stage << "." << s.axis;
  if (s.nparts) {
    os << " into " << s.factor << " parts";
  } else {
    os << " by " << s.factor;
  }
}
void describe(std::ostream& os, const Fuse& s) {
  os << "fuse " << s.stage << ": " << list(s.axes);
}
void describe(std::ostream& os, const Reorder& s) {
  os << "reorder " << s.stage << ": " << list(s.order);
}
void describe(std::ostream& os, const Tile& s) {
  os << "tile " << s.stage << "." << s.x << " " << s.stage << "." << s.y << " by " << s.x_factor
     << "x" << s.y_factor;
}
void describe(std::ostream& os, const Annotate& s) {
  if (ir::is_gpu_kind(s.kind)) {
    os << "bind " << s.stage << "." << s.axis << " to " << annotation_name(s.kind);
    return;
  }
  os << annotation_name(s.kind) << " " << s.stage << "." << s.axis;
}
void describe(std::ostream& os, const PragmaUnroll& s) {
  os << "pragma_unroll " << s.stage << "." << s.axis << " max_step " << s.max_step;
}
void describe(std::ostream& os, const ComputeAt& s) {
  os << "compute_at " << s.stage << " " << s.target_stage << "." << s.target_axis;
}
void describe(std::ostream& os, const ComputeInline& s) {
  os << "compute_inline " << s.stage;
}
void describe(std::ostream& os, const ComputeRoot& s) {
  os << "compute_root " << s.stage;
}
void describe_blocks(std::ostream& os, const std::vector<LayoutBlock>& blocks) {
  for (const LayoutBlock& b : blocks) {
    os << " block " << b.dim << "/" << b.factor << (b.outer_first ? " outer_first" : "")
       << (b.pad ? " padded" : "");
  }
}
void describe(std::ostream& os, const CacheWrite& s) {
  os << "cache_write " << s.stage << " " << scope_name(s.scope);
  describe_blocks(os, s.blocks);
}
void describe(std::ostream& os, const CacheRead& s) {
  os << "cache_read " << s.stage << " " << scope_name(s.scope);
  describe_blocks(os, s.blocks);
  if (s.row_pad != 0) {
    os << " row_pad " << s.row_pad;
  }
  if (s.stages != 0) {
    os << " stages " << s.stages;
  }
  if (!s.readers.empty()) {
    os << " for " << list(s.readers);
  }
}

}  // namespace

const char* step_kind(const Step& step) {
  return std::visit([](const auto& s) { return kind_word(s); }, step);
}

std::string to_string(const Step& step) {
  std::ostringstream os;
  std::visit([&](const auto& s) { describe(os, s); }, step);
  return os.str();
}

bool operator==(const Step& a, const Step& b) {
  if (a.index() != b.index()) {
    return false;
  }
  return std::visit(
      [&](const auto& x) { return fields_equal(x, std::get<std::decay_t<decltype(x)>>(b)); }, a);
}

const char* scope_name(ir::MemoryScope scope) {
  switch (scope) {
    case ir::MemoryScope::Global:
      return "global";
    case ir::MemoryScope::Local:
      return "local";
    case ir::MemoryScope::Shared:
      return "shared";
  }
  TT_CHECK(false) << "bad memory scope " << static_cast<int>(scope);
  return "";
}

ir::MemoryScope parse_scope(const std::string& text) {
  for (auto scope : {ir::MemoryScope::Local, ir::MemoryScope::Shared, ir::MemoryScope::Global}) {
    if (text == scope_name(scope)) {
      return scope;
    }
  }
  TT_USER_CHECK(false) << "unknown memory scope '" << text
                       << "' (expected local, shared or global)";
  return ir::MemoryScope::Global;
}

std::string fused_axis_name(const std::vector<std::string>& axes) {
  std::string name;
  for (size_t n = 0; n < axes.size(); ++n) {
    name += (n == 0 ? "" : "@") + axes[n];
  }
  return name;
}

}  // namespace tensortune::schedule
