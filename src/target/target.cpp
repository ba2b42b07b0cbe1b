// SPDX-License-Identifier: Apache-2.0
// Target strings: "native", "llvm [-mcpu=X] [-mattr=+a,-b] [-cores=N] [-vector-bits=N]" and
// "cuda -arch=sm_XY [-max-threads-per-block=N] [-max-shared-memory=N]". The canonical form lists
// options in a fixed order and leaves out defaults, so equal targets print equally.
#include "tensortune/target/target.h"

#include "tensortune/support/error.h"

#include <cctype>
#include <limits>
#include <set>
#include <sstream>
#include <string_view>

namespace tensortune::target {
namespace {

constexpr const char* kLlvmOptions = "-mcpu, -mattr, -cores, -vector-bits";
constexpr const char* kNativeOptions = "-mattr, -cores, -vector-bits";
constexpr const char* kCudaOptions = "-arch, -max-threads-per-block, -max-shared-memory";
constexpr int kMinCudaArch = 75;           // CUDA 13 supports sm_75 and newer only
constexpr int kMaxThreadsPerBlock = 1024;  // the architectural limit of every CUDA GPU

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) {
    words.push_back(word);
  }
  return words;
}

/// A non-negative decimal integer without sign or spaces, at most `max`.
int parse_int(const std::string& option, const std::string& value, int min, int max) {
  bool ok = !value.empty() && value.size() <= 10;
  long long n = 0;
  for (char c : value) {
    ok = ok && std::isdigit(static_cast<unsigned char>(c)) != 0;
    n = ok ? n * 10 + (c - '0') : 0;
  }
  TT_USER_CHECK(ok && n >= min && n <= max)
      << "target: option '" << option << "' expects an integer in " << min << ".." << max
      << ", got '" << value << "'";
  return static_cast<int>(n);
}

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
}

void check_mcpu(const std::string& value) {
  bool ok = !value.empty();
  for (char c : value) {
    ok = ok && is_name_char(c);
  }
  TT_USER_CHECK(ok) << "target: option '-mcpu' expects a CPU name such as 'znver4', got '" << value
                    << "'";
}

/// "+avx512f,-avx512vl": a comma list of feature names, each with a '+' or '-' sign.
void check_mattr(const std::string& value) {
  std::string_view rest = value;
  bool ok = !value.empty();
  while (ok && !rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    ok = item.size() >= 2 && (item[0] == '+' || item[0] == '-');
    for (size_t i = 1; ok && i < item.size(); ++i) {
      ok = is_name_char(item[i]);
    }
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    ok = ok && !(comma != std::string_view::npos && rest.empty());  // no trailing comma
  }
  TT_USER_CHECK(ok) << "target: option '-mattr' expects '+feature' or '-feature' items separated "
                       "by commas (e.g. '+avx512f,-avx512vl'), got '"
                    << value << "'";
}

/// The XY of "sm_XY" (an 'a' or 'f' suffix allowed, as in sm_90a); 0 for any other form.
int arch_number(const std::string& value) {
  std::string digits = value.size() > 3 ? value.substr(3) : "";
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    digits.pop_back();
  }
  bool ok =
      value.compare(0, 3, "sm_") == 0 && !digits.empty() && digits.size() <= 4 && digits[0] != '0';
  int number = 0;
  for (char c : digits) {
    ok = ok && std::isdigit(static_cast<unsigned char>(c)) != 0;
    number = ok ? number * 10 + (c - '0') : 0;
  }
  return ok ? number : 0;
}

/// "sm_XY" (optionally with an 'a' or 'f' suffix, as in sm_90a), XY >= 75.
void check_arch(const std::string& value) {
  TT_USER_CHECK(arch_number(value) >= kMinCudaArch)
      << "target: option '-arch' expects 'sm_XY' with XY >= " << kMinCudaArch
      << " (e.g. 'sm_80', 'sm_90a'), got '" << value << "'";
}

void check_vector_bits(int bits) {
  bool power_of_two = (bits & (bits - 1)) == 0;
  TT_USER_CHECK(bits == 0 || (bits >= 64 && power_of_two))
      << "target: option '-vector-bits' expects 0 (unknown) or a power of two >= 64, got " << bits;
}

void apply_llvm_option(Target& t, const std::string& key, const std::string& value, bool native) {
  if (key == "-mcpu" && !native) {
    check_mcpu(value);
    t.mcpu = value;
  } else if (key == "-mattr") {
    check_mattr(value);
    t.mattr = value;
  } else if (key == "-cores") {
    t.cores = parse_int(key, value, 0, 1 << 16);
  } else if (key == "-vector-bits") {
    t.vector_bits = parse_int(key, value, 0, 1 << 16);
    check_vector_bits(t.vector_bits);
  } else {
    throw UserError("target: unknown option '" + key + "' for kind '" +
                    (native ? "native" : "llvm") +
                    "' (accepted: " + (native ? kNativeOptions : kLlvmOptions) + ")");
  }
}

void apply_cuda_option(Target& t, const std::string& key, const std::string& value) {
  if (key == "-arch") {
    check_arch(value);
    t.arch = value;
  } else if (key == "-max-threads-per-block") {
    t.max_threads_per_block = parse_int(key, value, 1, kMaxThreadsPerBlock);
  } else if (key == "-max-shared-memory") {
    t.max_shared_memory_bytes = parse_int(key, value, 1, std::numeric_limits<int>::max());
  } else {
    throw UserError("target: unknown option '" + key +
                    "' for kind 'cuda' (accepted: " + kCudaOptions + ")");
  }
}

}  // namespace

Target Target::parse(const std::string& text) {
  std::vector<std::string> words = split_words(text);
  TT_USER_CHECK(!words.empty()) << "target: empty target string (accepted kinds: llvm, cuda, "
                                   "native)";
  const std::string& kind = words[0];
  TT_USER_CHECK(kind == "llvm" || kind == "cuda" || kind == "native")
      << "target: unknown kind '" << kind << "' in '" << text
      << "' (accepted kinds: llvm, cuda, native)";
  Target t;
  t.kind = kind == "cuda" ? TargetKind::Cuda : TargetKind::Llvm;
  std::set<std::string> seen;
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& word = words[i];
    size_t eq = word.find('=');
    TT_USER_CHECK(word.size() > 1 && word[0] == '-' && eq != std::string::npos &&
                  eq + 1 < word.size())
        << "target: option '" << word << "' is not of the form -name=value (accepted for '" << kind
        << "': "
        << (kind == "cuda"     ? kCudaOptions
            : kind == "native" ? kNativeOptions
                               : kLlvmOptions)
        << ")";
    std::string key = word.substr(0, eq);
    std::string value = word.substr(eq + 1);
    TT_USER_CHECK(seen.insert(key).second) << "target: option '" << key << "' given twice";
    if (t.kind == TargetKind::Cuda) {
      apply_cuda_option(t, key, value);
    } else {
      apply_llvm_option(t, key, value, kind == "native");
    }
  }
  TT_USER_CHECK(t.kind != TargetKind::Cuda || !t.arch.empty())
      << "target: kind 'cuda' requires -arch=sm_XY (e.g. 'cuda -arch=sm_80')";
  return t;
}

int Target::sm_version() const {
  return kind == TargetKind::Cuda ? arch_number(arch) : 0;
}

std::string Target::to_string() const {
  const Target defaults;
  std::string out;
  auto add = [&out](const char* key, const std::string& value) {
    out += std::string(" ") + key + "=" + value;
  };
  if (kind == TargetKind::Cuda) {
    out = "cuda";
    add("-arch", arch);
    if (max_threads_per_block != defaults.max_threads_per_block) {
      add("-max-threads-per-block", std::to_string(max_threads_per_block));
    }
    if (max_shared_memory_bytes != defaults.max_shared_memory_bytes) {
      add("-max-shared-memory", std::to_string(max_shared_memory_bytes));
    }
    return out;
  }
  out = "llvm";
  if (mcpu != defaults.mcpu) {
    add("-mcpu", mcpu);
  }
  if (!mattr.empty()) {
    add("-mattr", mattr);
  }
  if (cores != defaults.cores) {
    add("-cores", std::to_string(cores));
  }
  if (vector_bits != defaults.vector_bits) {
    add("-vector-bits", std::to_string(vector_bits));
  }
  return out;
}

}  // namespace tensortune::target
