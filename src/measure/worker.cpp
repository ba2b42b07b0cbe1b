// SPDX-License-Identifier: Apache-2.0
// The worker process's side of the protocol: builds bitcode into object code (CUDA C into a
// cubin), keeps reference outputs, and loads, checks and times candidates. Everything a candidate
// does wrong becomes a reply, except what kills the process, which the parent reads from the exit
// status.
#include "tensortune/measure/worker.h"

#include "measure/gpu_image.h"
#include "measure/gpu_worker.h"
#include "measure/protocol.h"
#include "measure/worker_reply.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/measure/kernel_buffers.h"
#include "tensortune/measure/measure_result.h"
#include "tensortune/measure/timing.h"
#include "tensortune/runtime/parallel.h"
#include "tensortune/support/error.h"
#include "tensortune/support/file.h"
#include "tensortune/support/log.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace tensortune::measure {
namespace {

using detail::check_outputs;
using detail::failure;
using detail::find_reference;
using detail::Message;
using detail::missing_reference_reply;
using detail::result_reply;
using detail::StoredReference;
using detail::timed_by_single_call;

/// Exits when the parent goes away (the socket may stay open while a kernel spins for ever).
void watch_parent(pid_t parent) {
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (::getppid() != parent) {
        std::_Exit(0);
      }
    }
  }).detach();
}

Message handle_build(const Message& request) {
  Message reply;
  reply.header = support::Json::object();
  double start = now_seconds();
  try {
    TT_USER_CHECK(request.blobs.size() == 1) << "build: expected one bitcode or CUDA C blob";
    target::Target target = target::Target::parse(request.header.at("target").as_string());
    if (request.header.contains("cuda")) {  // CUDA C to a cubin with NVRTC
      reply.blobs.push_back(detail::compile_gpu(request.blobs[0], target));
    } else {
      reply.blobs.push_back(codegen::compile_bitcode(request.blobs[0], target));
    }
    reply.header["ok"] = true;
  } catch (const std::exception& e) {
    reply.blobs.clear();
    reply.header["ok"] = false;
    reply.header["message"] = e.what();
  }
  reply.header["seconds"] = now_seconds() - start;
  return reply;
}

/// Times the loaded kernel after its check run; RuntimeError when a timed call fails.
void time_kernel(const codegen::Artifact& kernel,
                 const KernelBuffers& buffers,
                 double warmup_seconds,
                 const TimingOptions& options,
                 MeasureResult* result) {
  int32_t failed = 0;
  void* const* args = buffers.pointers();
  auto call = [&] {
    int32_t rc = kernel.function()(args);
    failed = failed != 0 ? failed : rc;
  };
  double start = now_seconds();
  TimingResult timed = time_calls(call, warmup_seconds, options, [&] { buffers.flush_caches(); });
  result->run_seconds = now_seconds() - start;
  if (failed != 0) {
    result->status = MeasureStatus::RuntimeError;
    result->message = "the kernel returned status " + std::to_string(failed) + " during timing";
    return;
  }
  result->repeats = std::move(timed.repeats);
  result->number = timed.number;
  result->median_seconds = timed.median_seconds;
}

Message handle_run(const Message& request, const std::map<uint64_t, StoredReference>& references) {
  const support::Json& h = request.header;
  KernelSignature signature = KernelSignature::from_json(h.at("signature"));
  const StoredReference* reference = nullptr;
  if (!find_reference(h, references, &reference)) {
    return missing_reference_reply();
  }
  codegen::Artifact kernel;
  try {
    TT_USER_CHECK(request.blobs.size() == 1) << "run: expected one object blob";
    kernel = codegen::load_object(request.blobs[0], signature.name, !signature.prepacked.empty());
  } catch (const std::exception& e) {
    return result_reply(
        failure(MeasureStatus::CompileError, std::string("loading failed: ") + e.what()));
  }
  double verify_start = now_seconds();
  KernelBuffers buffers(signature);
  buffers.fill_inputs(static_cast<uint64_t>(h.at("seed").as_int()));
  buffers.poison_outputs();
  if (int32_t prepared = kernel.prepare(buffers.pointers()); prepared != 0) {
    return result_reply(
        failure(MeasureStatus::RuntimeError,
                "the kernel's prepare function returned status " + std::to_string(prepared)));
  }
  double call_start = now_seconds();
  int32_t rc = kernel.function()(buffers.pointers());
  double warmup_seconds = now_seconds() - call_start;
  if (rc != 0) {
    return result_reply(
        failure(MeasureStatus::RuntimeError, "the kernel returned status " + std::to_string(rc)));
  }
  std::vector<std::string> outputs;
  MeasureResult result = check_outputs(buffers, reference, h, verify_start, &outputs);
  if (result.ok() && h.contains("timing")) {
    const TimingOptions timing = TimingOptions::from_json(h.at("timing"));
    int32_t again_rc = 0;
    auto again = [&] {
      double start = now_seconds();
      again_rc = kernel.function()(buffers.pointers());
      return now_seconds() - start;
    };
    if (!timed_by_single_call(&warmup_seconds, timing, again, &result)) {
      time_kernel(kernel, buffers, warmup_seconds, timing, &result);
    } else if (again_rc != 0) {
      result =
          failure(MeasureStatus::RuntimeError,
                  "the kernel returned status " + std::to_string(again_rc) + " on its second call");
    }
  }
  return result_reply(result, std::move(outputs));
}

// AddressSanitizer reserves terabytes of shadow and allocator address space at start, which an
// absolute RLIMIT_AS refuses: a sanitizer build's worker counts its limit on top of what is
// mapped when the limit is set, so that a runaway allocation still fails as in a plain build.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

/// The process's mapped address space in bytes (/proc/self/statm); 0 when unreadable.
rlim_t mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  rlim_t pages = 0;
  if (!(statm >> pages)) {
    return 0;
  }
  return pages * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE));
}

void apply_memory_limit(int64_t mb) {
  if (mb <= 0) {
    return;
  }
  const rlim_t base = kAddressSanitizer ? mapped_bytes() : 0;
  if (kAddressSanitizer && base == 0) {
    return;  // no baseline: a limit would be below the sanitizer's own reservations
  }
  rlimit limit{};
  limit.rlim_cur = base + (static_cast<rlim_t>(mb) << 20);
  limit.rlim_max = limit.rlim_cur;
  if (::setrlimit(RLIMIT_AS, &limit) != 0) {
    std::cerr << "tensortune-worker: cannot limit memory to " << mb
              << " MiB: " << std::strerror(errno) << "\n";
  }
}

}  // namespace

int worker_main(int argc, char** argv) {
  // A terminal's Ctrl-C (or kill -TERM to the job's process group) reaches the workers too; the
  // tuner stops after its batch by itself, so a worker must finish the candidate it is on. Killed
  // here, a good candidate was stored as a failure and never measured again. A worker whose
  // parent is gone exits by itself (watch_parent); the measurer stops a runaway with SIGKILL.
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
  int fd = -1;
  int64_t memory_mb = 0;
  int threads = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    int64_t value = std::atoll(argv[i + 1]);
    if (flag == "--fd") {
      fd = static_cast<int>(value);
    } else if (flag == "--memory-limit-mb") {
      memory_mb = value;
    } else if (flag == "--threads") {
      threads = static_cast<int>(value);
    }
  }
  if (fd < 0) {
    std::cerr << "tensortune-worker: serves tensortune's measurer; it is started by it with "
                 "--fd N\n";
    return 2;
  }
  watch_parent(::getppid());
  apply_memory_limit(memory_mb);
  tt_set_num_threads(threads);
  Message hello;
  hello.header = support::Json::object();
  hello.header["ready"] = true;
  if (!detail::write_message(fd, hello)) {
    return 1;
  }
  std::map<uint64_t, StoredReference> references;
  detail::GpuWorker gpu;
  for (;;) {
    Message request;
    if (detail::read_message(fd, -1, &request) != detail::ReadStatus::Ok) {
      return 0;
    }
    const std::string& op = request.header.at("op").as_string();
    Message reply;
    if (op == "build") {
      reply = handle_build(request);
    } else if (op == "reference") {
      StoredReference& ref = references[static_cast<uint64_t>(request.header.at("id").as_int())];
      ref.outputs = std::move(request.blobs);
      ref.tolerance = Tolerance::from_json(request.header.at("tolerance"));
      reply.header = support::Json::object();
      reply.header["ok"] = true;
    } else if (op == "run") {
      try {
        reply = request.header.contains("gpu") ? gpu.run(request, references)
                                               : handle_run(request, references);
      } catch (const std::exception& e) {
        reply = result_reply(failure(MeasureStatus::RuntimeError, e.what()));
      }
    } else {
      std::cerr << "tensortune-worker: unknown request '" << op << "'\n";
      return 1;
    }
    if (!detail::write_message(fd, reply) || gpu.context_lost()) {
      return 0;  // a lost CUDA context cannot be recovered in this process
    }
  }
}

namespace {

bool is_executable(const std::string& path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string find_worker(const std::string& explicit_path) {
  std::vector<std::string> tried;
  auto consider = [&](const std::string& path) {
    tried.push_back(path);
    return is_executable(path);
  };
  if (!explicit_path.empty()) {
    TT_USER_CHECK(consider(explicit_path))
        << "measure: the worker '" << explicit_path << "' is not an executable file";
    return explicit_path;
  }
  const char* env = std::getenv("TT_WORKER");
  if (env != nullptr && *env != '\0') {
    TT_USER_CHECK(consider(env)) << "measure: TT_WORKER='" << env << "' is not an executable file";
    return env;
  }
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    dir = dir.substr(0, dir.rfind('/') + 1);
    if (consider(dir + "tensortune-worker")) {
      return dir + "tensortune-worker";
    }
  }
  // A program linked with an installed libtensortune.so (LIBDIR/..): PREFIX/bin.
  if (const std::string lib = support::loaded_binary_dir(); !lib.empty()) {
    if (consider(lib + "/../bin/tensortune-worker")) {
      return lib + "/../bin/tensortune-worker";
    }
  }
#ifdef TT_WORKER_BUILD_PATH
  if (consider(TT_WORKER_BUILD_PATH)) {
    return TT_WORKER_BUILD_PATH;
  }
#endif
  std::string list;
  for (const std::string& t : tried) {
    list += (list.empty() ? "" : ", ") + t;
  }
  throw UserError("measure: the worker executable 'tensortune-worker' was not found (tried " +
                  list + "); build it, or set TT_WORKER to its path");
}

}  // namespace tensortune::measure
