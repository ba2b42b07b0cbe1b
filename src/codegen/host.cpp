// SPDX-License-Identifier: Apache-2.0
// The host as an LLVM target: one-time LLVM initialisation, "native" resolution (CPU name,
// features, vector width, cores), target machine creation, and the device fingerprint.
#include "tensortune/codegen/host.h"

#include "codegen/llvm/internal.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/runtime/cuda_driver.h"

#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

namespace tensortune::codegen {
namespace detail {
namespace {

/// The host's features as "+a,+b,-c", sorted so the string is deterministic.
std::string host_features() {
  std::vector<std::string> flags;
  for (const auto& entry : llvm::sys::getHostCPUFeatures()) {
    flags.push_back((entry.getValue() ? "+" : "-") + entry.getKey().str());
  }
  std::sort(flags.begin(), flags.end(),
            [](const std::string& a, const std::string& b) { return a.substr(1) < b.substr(1); });
  std::string joined;
  for (const std::string& f : flags) {
    joined += (joined.empty() ? "" : ",") + f;
  }
  return joined;
}

const llvm::Target& lookup_target(const std::string& triple) {
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, error);
  TT_CHECK(t != nullptr) << "codegen: no LLVM target for '" << triple << "': " << error;
  return *t;
}

/// UserError unless LLVM knows `cpu` and every feature of `features` ("+a,-b"): LLVM itself only
/// warns on stderr about an unknown one, and ignores it.
void check_subtarget(const std::string& triple,
                     const std::string& cpu,
                     const std::string& features) {
  const llvm::Target& t = lookup_target(triple);
  // Check on a generic subtarget: a subtarget of an unknown CPU warns on stderr.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(t.createMCSubtargetInfo(triple, "", ""));
  TT_CHECK(generic != nullptr) << "codegen: no subtarget info for '" << triple << "'";
  TT_USER_CHECK(generic->isCPUStringValid(cpu))
      << "codegen: LLVM does not know the CPU '" << cpu << "' (target option -mcpu)";
  std::set<std::string> known;
  for (const llvm::SubtargetFeatureKV& kv : generic->getAllProcessorFeatures())
    known.insert(kv.Key);
  std::istringstream items(features);
  for (std::string item; std::getline(items, item, ',');) {
    const std::string name = item.empty() ? item : item.substr(1);
    TT_USER_CHECK(name.empty() || known.count(name) != 0)
        << "codegen: LLVM does not know the CPU feature '" << name << "' (target option -mattr)";
  }
}

/// The widest vector register `cpu` + `features` has, asked from LLVM's subtarget tables.
int widest_vector_bits(const std::string& triple,
                       const std::string& cpu,
                       const std::string& features) {
  const llvm::Target& t = lookup_target(triple);
  std::unique_ptr<llvm::MCSubtargetInfo> sti(t.createMCSubtargetInfo(triple, cpu, features));
  if (llvm::Triple(triple).isX86()) {
    if (sti->checkFeatures("+avx512f")) {
      return 512;
    }
    if (sti->checkFeatures("+avx")) {
      return 256;
    }
  }
  return 128;
}

}  // namespace

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

LlvmTarget llvm_target(const target::Target& target) {
  TT_USER_CHECK(!target.is_gpu()) << "codegen: the LLVM CPU backend cannot build for a GPU target";
  target::Target resolved = resolve_host(target);
  LlvmTarget t;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = resolved.mcpu;
  t.features = resolved.mattr;
  t.vector_bits = resolved.vector_bits;
  return t;
}

std::unique_ptr<llvm::TargetMachine> create_target_machine(const LlvmTarget& t, bool pic) {
  init_llvm();
  const llvm::Target& target = lookup_target(t.triple);
  llvm::TargetOptions options;
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  std::optional<llvm::Reloc::Model> reloc;
  if (pic) {
    reloc = llvm::Reloc::PIC_;
  }
  std::unique_ptr<llvm::TargetMachine> tm(
      target.createTargetMachine(t.triple, t.cpu, t.features, options, reloc, std::nullopt,
                                 llvm::CodeGenOptLevel::Aggressive));
  TT_CHECK(tm != nullptr) << "codegen: LLVM could not create a target machine for " << t.cpu;
  return tm;
}

std::string error_message(llvm::Error err) {
  return llvm::toString(std::move(err));
}

}  // namespace detail

target::Target resolve_host(const target::Target& base) {
  detail::init_llvm();
  target::Target t = base;
  if (t.is_gpu()) {
    return t;
  }
  std::string triple = llvm::sys::getProcessTriple();
  if (t.mcpu.empty() || t.mcpu == "native") {
    t.mcpu = llvm::sys::getHostCPUName().str();
    // The host's own features first; explicit flags after them win (LLVM reads left to right).
    std::string host = detail::host_features();
    t.mattr = t.mattr.empty() ? host : host + "," + t.mattr;
  }
  detail::check_subtarget(triple, t.mcpu, t.mattr);
  if (t.vector_bits == 0) {
    t.vector_bits = detail::widest_vector_bits(triple, t.mcpu, t.mattr);
  }
  if (t.cores == 0) {
    unsigned n = std::thread::hardware_concurrency();
    t.cores = n == 0 ? 1 : static_cast<int>(n);
  }
  return t;
}

namespace {

/// The ISA features that change the code we generate (vector width, FMA, dot products, matrix
/// units). Other host features (crypto, bit tricks, microcode quirks) would make the fingerprint
/// differ between machines whose kernels behave the same.
const std::set<std::string>& features_that_matter() {
  static const std::set<std::string> names = {
      "sse4.2",     "avx",        "avx2",       "fma",         "f16c",       "avx512f",
      "avx512cd",   "avx512bw",   "avx512dq",   "avx512vl",    "avx512vnni", "avx512bf16",
      "avx512fp16", "avx512ifma", "avx512vbmi", "avx512vbmi2", "avxvnni",    "amx-tile",
      "amx-int8",   "amx-bf16",   "neon",       "sve",         "sve2",       "dotprod",
      "i8mm",       "bf16",       "fullfp16"};
  return names;
}

/// The first "model name" (x86) or "Processor"/"CPU part" (Arm) line of /proc/cpuinfo.
std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) {
      continue;
    }
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    if (key != "model name" && key != "Processor") {
      continue;
    }
    size_t begin = line.find_first_not_of(" \t", colon + 1);
    size_t end = line.find_last_not_of(" \t\r");
    if (begin != std::string::npos && end != std::string::npos && end >= begin) {
      return line.substr(begin, end - begin + 1);
    }
  }
  return "unknown";
}

}  // namespace

namespace {

/// Features LLVM may use in the code of a kernel: the vector ISAs above, and the scalar
/// extensions its instruction selection picks (bmi2's shlx, lzcnt, movbe, ...). System features
/// (mwaitx, pku, rdpru, wbnoinvd) never appear in a kernel, and a virtual machine often hides
/// them from a CPU model that has them: they must not make the host's own -mcpu look foreign.
bool used_by_kernels(const std::string& feature) {
  static const std::set<std::string> scalar = {
      "sse2", "sse3", "ssse3",      "sse4.1",      "sse4a",   "popcnt",          "lzcnt",
      "bmi",  "bmi2", "movbe",      "fma4",        "xop",     "avx512vpopcntdq", "avx512bitalg",
      "gfni", "vaes", "vpclmulqdq", "avxvnniint8", "avxifma", "amx-fp16"};
  return features_that_matter().count(feature) != 0 || scalar.count(feature) != 0;
}

}  // namespace

std::vector<std::string> target_features(const target::Target& target) {
  if (target.is_gpu())
    return {};
  const target::Target t = resolve_host(target);
  const std::string triple = llvm::sys::getProcessTriple();
  const llvm::Target& llvm_target = detail::lookup_target(triple);
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      llvm_target.createMCSubtargetInfo(triple, t.mcpu, t.mattr));
  TT_CHECK(sti != nullptr) << "codegen: no subtarget info for '" << t.mcpu << "'";
  std::vector<std::string> out;
  for (const llvm::SubtargetFeatureKV& kv : sti->getAllProcessorFeatures()) {
    if (sti->getFeatureBits().test(kv.Value))
      out.emplace_back(kv.Key);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> missing_host_features(const target::Target& target) {
  const auto host = llvm::sys::getHostCPUFeatures();
  std::vector<std::string> missing;
  for (const std::string& f : target_features(target)) {
    auto it = host.find(f);
    if (it != host.end() && !it->getValue() && used_by_kernels(f))
      missing.push_back(f);
  }
  return missing;
}

std::string device_fingerprint(const target::Target& target) {
  if (target.is_gpu()) {
    if (runtime::cuda_unavailable_reason().empty()) {
      try {
        runtime::CudaDevice device(0);
        const runtime::CudaDeviceInfo& info = device.info();
        return "gpu=" + info.name + "; cc=" + std::to_string(info.major) + "." +
               std::to_string(info.minor) + "; sms=" + std::to_string(info.multiprocessors);
      } catch (const runtime::CudaError&) {  // a device that fails to open: as without one
      }
    }
    return "gpu=cuda; arch=" + target.arch;
  }
  detail::init_llvm();
  std::vector<std::string> enabled;  // StringMap iterates in hash order: sort below
  for (const auto& entry : llvm::sys::getHostCPUFeatures()) {
    if (entry.getValue() && features_that_matter().count(entry.getKey().str()) != 0) {
      enabled.push_back(entry.getKey().str());
    }
  }
  std::sort(enabled.begin(), enabled.end());
  std::string features;
  for (const std::string& f : enabled) {
    features += (features.empty() ? "" : ",") + f;
  }
  unsigned cores = std::thread::hardware_concurrency();
  return "cpu=" + cpu_model_name() + "; mcpu=" + llvm::sys::getHostCPUName().str() +
         "; features=" + features + "; cores=" + std::to_string(cores == 0 ? 1 : cores);
}

}  // namespace tensortune::codegen
