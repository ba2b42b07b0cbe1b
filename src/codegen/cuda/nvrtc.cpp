// SPDX-License-Identifier: Apache-2.0
// CUDA C -> PTX / cubin with NVRTC, loaded at run time (dlopen) so that tensortune builds and
// starts without CUDA. The few NVRTC types are declared here from nvrtc.h (CUDA 13).
#include "tensortune/codegen/cuda_codegen.h"
#include "tensortune/support/error.h"

#include <array>
#include <cctype>
#include <cstddef>
#include <dlfcn.h>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace tensortune::codegen {
namespace {

// nvrtcResult is a C enum (int-sized); nvrtcProgram an opaque pointer.
using NvrtcResult = int;
constexpr NvrtcResult kNvrtcSuccess = 0;
constexpr NvrtcResult kNvrtcErrorCompilation = 6;
constexpr NvrtcResult kNvrtcErrorBuiltinOperationFailure = 7;
struct NvrtcProgramOpaque;
using NvrtcProgram = NvrtcProgramOpaque*;

using CreateProgramFn = NvrtcResult (*)(
    NvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
using CompileProgramFn = NvrtcResult (*)(NvrtcProgram, int, const char* const*);
using GetSizeFn = NvrtcResult (*)(NvrtcProgram, size_t*);
using GetDataFn = NvrtcResult (*)(NvrtcProgram, char*);
using DestroyProgramFn = NvrtcResult (*)(NvrtcProgram*);
using GetErrorStringFn = const char* (*)(NvrtcResult);
using VersionFn = NvrtcResult (*)(int*, int*);

/// The loaded library: every entry point, or `error` saying why it could not be loaded.
struct Nvrtc {
  std::string error;
  void* handle = nullptr;
  CreateProgramFn create_program = nullptr;
  CompileProgramFn compile_program = nullptr;
  GetSizeFn get_ptx_size = nullptr;
  GetDataFn get_ptx = nullptr;
  GetSizeFn get_cubin_size = nullptr;
  GetDataFn get_cubin = nullptr;
  GetSizeFn get_log_size = nullptr;
  GetDataFn get_log = nullptr;
  DestroyProgramFn destroy_program = nullptr;
  GetErrorStringFn get_error_string = nullptr;
  VersionFn version = nullptr;
};

template <class Fn>
void resolve(void* handle, const char* symbol, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (fn == nullptr) {
    missing += missing.empty() ? symbol : std::string(", ") + symbol;
  }
}

bool is_directory(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool is_file(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

/// NVRTC opens libnvrtc-builtins by bare name, which fails when the CUDA library folder is not on
/// the loader path. Loading it first from libnvrtc's own folder lets that lookup find it by soname.
void preload_builtins(const Nvrtc& lib) {
  Dl_info where{};
  if (dladdr(reinterpret_cast<void*>(lib.version), &where) == 0 || where.dli_fname == nullptr) {
    return;
  }
  std::string path = where.dli_fname;
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) {
    return;
  }
  int major = 0;
  int minor = 0;
  if (lib.version(&major, &minor) != kNvrtcSuccess) {
    return;
  }
  std::string builtins = path.substr(0, slash + 1) + "libnvrtc-builtins.so." +
                         std::to_string(major) + "." + std::to_string(minor);
  if (is_file(builtins)) {
    // Kept open for the life of the process, like libnvrtc itself.
    dlopen(builtins.c_str(), RTLD_NOW | RTLD_GLOBAL);
  }
}

Nvrtc load_nvrtc() {
  Nvrtc lib;
  const std::array<const char*, 3> candidates = {
      "libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.13", "libnvrtc.so"};
  std::string tried;
  for (const char* name : candidates) {
    lib.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib.handle != nullptr) {
      break;
    }
    const char* why = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(why != nullptr ? why : name);
  }
  if (lib.handle == nullptr) {
    lib.error = tried;
    return lib;
  }
  std::string missing;
  resolve(lib.handle, "nvrtcCreateProgram", lib.create_program, missing);
  resolve(lib.handle, "nvrtcCompileProgram", lib.compile_program, missing);
  resolve(lib.handle, "nvrtcGetPTXSize", lib.get_ptx_size, missing);
  resolve(lib.handle, "nvrtcGetPTX", lib.get_ptx, missing);
  resolve(lib.handle, "nvrtcGetCUBINSize", lib.get_cubin_size, missing);
  resolve(lib.handle, "nvrtcGetCUBIN", lib.get_cubin, missing);
  resolve(lib.handle, "nvrtcGetProgramLogSize", lib.get_log_size, missing);
  resolve(lib.handle, "nvrtcGetProgramLog", lib.get_log, missing);
  resolve(lib.handle, "nvrtcDestroyProgram", lib.destroy_program, missing);
  resolve(lib.handle, "nvrtcGetErrorString", lib.get_error_string, missing);
  resolve(lib.handle, "nvrtcVersion", lib.version, missing);
  if (!missing.empty()) {
    lib.error = "the loaded libnvrtc lacks " + missing;
    return lib;
  }
  preload_builtins(lib);
  return lib;
}

/// Loaded once, on first use; C++11 makes the initialization thread-safe.
const Nvrtc& nvrtc() {
  static const Nvrtc lib = load_nvrtc();
  return lib;
}

/// The number of an "sm_90" / "sm_90a" arch ("90" / "90a"); UserError when it is malformed.
std::string arch_suffix(const std::string& arch) {
  std::string number = arch.compare(0, 3, "sm_") == 0 ? arch.substr(3) : "";
  size_t digits = 0;
  while (digits < number.size() && std::isdigit(static_cast<unsigned char>(number[digits])) != 0) {
    ++digits;
  }
  std::string variant = number.substr(digits);
  TT_USER_CHECK(digits >= 2 && digits <= 3 && (variant.empty() || variant == "a" || variant == "f"))
      << "nvrtc: malformed arch '" << arch << "' (expected sm_<major><minor>, e.g. sm_90)";
  return number;
}

/// Destroys the program on every path out of compile_cuda.
struct ProgramGuard {
  const Nvrtc& lib;
  NvrtcProgram program = nullptr;
  ProgramGuard(const ProgramGuard&) = delete;
  ProgramGuard& operator=(const ProgramGuard&) = delete;
  ~ProgramGuard() {
    if (program != nullptr) {
      lib.destroy_program(&program);
    }
  }
};

/// Reads one of the program's outputs (PTX, cubin, log) through its size and data functions.
std::string read_output(NvrtcProgram program,
                        GetSizeFn size_fn,
                        GetDataFn data_fn,
                        bool nul_terminated) {
  size_t size = 0;
  if (size_fn(program, &size) != kNvrtcSuccess || size == 0) {
    return {};
  }
  std::string out(size, '\0');
  if (data_fn(program, out.data()) != kNvrtcSuccess) {
    return {};
  }
  size_t end = nul_terminated ? out.find('\0') : std::string::npos;
  if (end != std::string::npos) {
    out.resize(end);
  }
  return out;
}

std::vector<std::string> compile_options(const std::string& arch_flag) {
  std::vector<std::string> options = {arch_flag, "--std=c++17"};
  for (const char* folder : {"/usr/local/cuda/include", "/usr/local/cuda/include/cccl"}) {
    if (is_directory(folder)) {
      options.push_back(std::string("--include-path=") + folder);
    }
  }
  return options;
}

}  // namespace

std::vector<KernelResources> parse_ptxas_report(const std::string& log) {
  // "ptxas info    : Compiling entry function 'k' for 'sm_90'"
  // "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
  // "ptxas info    : Used 48 registers, used 0 barriers"
  const auto number_before = [](const std::string& line, const std::string& what) -> int64_t {
    const size_t at = line.find(what);
    if (at == std::string::npos || at == 0) {
      return -1;
    }
    size_t begin = at - 1;
    while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') {
      --begin;
    }
    const std::string digits = line.substr(begin, at - 1 - begin);
    return digits.empty() || digits.size() > 12 ? -1 : std::stoll(digits);
  };
  const auto number_after = [](const std::string& line, const std::string& what) -> int64_t {
    const size_t at = line.find(what);
    if (at == std::string::npos) {
      return -1;
    }
    size_t end = at + what.size();
    while (end < line.size() && line[end] >= '0' && line[end] <= '9') {
      ++end;
    }
    const std::string digits = line.substr(at + what.size(), end - at - what.size());
    return digits.empty() || digits.size() > 12 ? -1 : std::stoll(digits);
  };
  std::vector<KernelResources> out;
  size_t begin = 0;
  while (begin < log.size()) {
    size_t end = log.find('\n', begin);
    end = end == std::string::npos ? log.size() : end;
    const std::string line = log.substr(begin, end - begin);
    begin = end + 1;
    if (line.rfind("ptxas", 0) != 0) {
      continue;
    }
    const std::string entry = "Compiling entry function '";
    if (const size_t at = line.find(entry); at != std::string::npos) {
      const size_t name_end = line.find('\'', at + entry.size());
      if (name_end != std::string::npos) {
        out.push_back(
            KernelResources{line.substr(at + entry.size(), name_end - at - entry.size())});
      }
      continue;
    }
    if (out.empty()) {
      continue;
    }
    KernelResources& k = out.back();
    if (const int64_t stack = number_before(line, "bytes stack frame"); stack >= 0) {
      k.stack_bytes = stack;
    }
    if (const int64_t stores = number_before(line, "bytes spill stores"); stores >= 0) {
      k.spill_store_bytes = stores;
    }
    if (const int64_t loads = number_before(line, "bytes spill loads"); loads >= 0) {
      k.spill_load_bytes = loads;
    }
    if (const int64_t registers = number_after(line, "Used "); registers >= 0) {
      k.registers = registers;
    }
  }
  return out;
}

bool nvrtc_available(std::string* why) {
  const Nvrtc& lib = nvrtc();
  if (why != nullptr) {
    *why = lib.error;
  }
  return lib.error.empty();
}

NvrtcOutput compile_cuda(const std::string& source, const target::Target& target, bool want_cubin) {
  const std::string suffix = arch_suffix(target.arch);
  const Nvrtc& lib = nvrtc();
  TT_USER_CHECK(lib.error.empty()) << "nvrtc: not available: " << lib.error;

  ProgramGuard guard{lib};
  NvrtcResult created =
      lib.create_program(&guard.program, source.c_str(), "kernel.cu", 0, nullptr, nullptr);
  TT_USER_CHECK(created == kNvrtcSuccess)
      << "nvrtc: cannot create a program: " << lib.get_error_string(created);

  std::vector<std::string> options =
      compile_options((want_cubin ? "-arch=sm_" : "-arch=compute_") + suffix);
  if (want_cubin) {
    options.emplace_back("--ptxas-options=-v");  // registers and spills, into the log
  }
  std::vector<const char*> argv;
  argv.reserve(options.size());
  for (const std::string& option : options) {
    argv.push_back(option.c_str());
  }
  NvrtcResult compiled =
      lib.compile_program(guard.program, static_cast<int>(argv.size()), argv.data());
  NvrtcOutput out;
  out.log = read_output(guard.program, lib.get_log_size, lib.get_log, true);
  if (compiled != kNvrtcSuccess) {
    std::string head = "nvrtc: compile failed for " + target.arch;
    if (compiled != kNvrtcErrorCompilation) {
      head += std::string(" (") + lib.get_error_string(compiled) + ")";
    }
    if (compiled == kNvrtcErrorBuiltinOperationFailure) {
      head +=
          " (libnvrtc-builtins could not be loaded: put the CUDA library folder on the "
          "loader path, as scripts/setup.sh does)";
    }
    throw UserError(head + ":\n" + out.log);
  }
  out.ptx = read_output(guard.program, lib.get_ptx_size, lib.get_ptx, true);
  if (want_cubin) {
    out.cubin = read_output(guard.program, lib.get_cubin_size, lib.get_cubin, false);
    TT_USER_CHECK(!out.cubin.empty()) << "nvrtc: no cubin produced for " << target.arch;
    out.resources = parse_ptxas_report(out.log);
    if (out.resources.empty()) {  // a compile the CUDA compute cache served: ptxas did not run
      out.resources = cubin_resources(out.cubin);
    }
  } else {
    TT_USER_CHECK(!out.ptx.empty()) << "nvrtc: no ptx produced for " << target.arch;
  }
  return out;
}

}  // namespace tensortune::codegen
