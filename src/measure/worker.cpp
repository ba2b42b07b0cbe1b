// SPDX-License-Identifier: Apache-2.0
// The worker process's side of the protocol: builds bitcode into object code, keeps reference
// outputs, and loads, checks and times candidates. Everything a candidate does wrong becomes a
// reply, except what kills the process, which the parent reads from the exit status.
#include "tensortune/measure/worker.h"

#include "measure/protocol.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/measure/kernel_buffers.h"
#include "tensortune/measure/measure_result.h"
#include "tensortune/measure/timing.h"
#include "tensortune/runtime/parallel.h"
#include "tensortune/support/error.h"
#include "tensortune/support/log.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace tensortune::measure {
namespace {

using detail::Message;

struct StoredReference {
  std::vector<std::string> outputs;
  Tolerance tolerance;
};

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
    TT_USER_CHECK(request.blobs.size() == 1) << "build: expected one bitcode blob";
    target::Target target = target::Target::parse(request.header.at("target").as_string());
    reply.blobs.push_back(codegen::compile_bitcode(request.blobs[0], target));
    reply.header["ok"] = true;
  } catch (const std::exception& e) {
    reply.blobs.clear();
    reply.header["ok"] = false;
    reply.header["message"] = e.what();
  }
  reply.header["seconds"] = now_seconds() - start;
  return reply;
}

Message status_reply(MeasureStatus status, const std::string& message) {
  Message reply;
  reply.header = support::Json::object();
  reply.header["status"] = status_name(status);
  reply.header["message"] = message;
  return reply;
}

/// Times the loaded kernel after its check run; RuntimeError when a timed call fails.
Message time_kernel(const codegen::Artifact& kernel,
                    const KernelBuffers& buffers,
                    double warmup_seconds,
                    const TimingOptions& options,
                    Message reply) {
  int32_t failed = 0;
  void* const* args = buffers.pointers();
  auto call = [&] {
    int32_t rc = kernel.function()(args);
    failed = failed != 0 ? failed : rc;
  };
  double start = now_seconds();
  TimingResult timed = time_calls(call, warmup_seconds, options, [&] { buffers.flush_caches(); });
  reply.header["run_seconds"] = now_seconds() - start;
  if (failed != 0) {
    reply.header["status"] = status_name(MeasureStatus::RuntimeError);
    reply.header["message"] = "the kernel returned status " + std::to_string(failed) +
                              " during timing";
    return reply;
  }
  support::Json repeats = support::Json::array();
  for (double r : timed.repeats) {
    repeats.push_back(r);
  }
  reply.header["repeats"] = std::move(repeats);
  reply.header["number"] = timed.number;
  reply.header["median_seconds"] = timed.median_seconds;
  return reply;
}

TimingOptions timing_from_json(const support::Json& json) {
  TimingOptions t;
  t.repeat = static_cast<int>(json.at("repeat").as_int());
  t.min_repeat_ms = json.at("min_repeat_ms").as_double();
  t.max_number = json.at("max_number").as_int();
  t.cache_flush = json.at("cache_flush").as_bool();
  return t;
}

Message handle_run(const Message& request, const std::map<uint64_t, StoredReference>& references) {
  const support::Json& h = request.header;
  KernelSignature signature = KernelSignature::from_json(h.at("signature"));
  const StoredReference* reference = nullptr;
  if (h.contains("reference")) {
    auto it = references.find(static_cast<uint64_t>(h.at("reference").as_int()));
    if (it == references.end()) {
      Message reply;
      reply.header = support::Json::object();
      reply.header["missing_reference"] = true;
      return reply;
    }
    reference = &it->second;
  }
  codegen::Artifact kernel;
  try {
    TT_USER_CHECK(request.blobs.size() == 1) << "run: expected one object blob";
    kernel = codegen::load_object(request.blobs[0], signature.name);
  } catch (const std::exception& e) {
    return status_reply(MeasureStatus::CompileError, std::string("loading failed: ") + e.what());
  }
  double verify_start = now_seconds();
  KernelBuffers buffers(signature);
  buffers.fill_inputs(static_cast<uint64_t>(h.at("seed").as_int()));
  buffers.poison_outputs();
  double call_start = now_seconds();
  int32_t rc = kernel.function()(buffers.pointers());
  double warmup_seconds = now_seconds() - call_start;
  if (rc != 0) {
    return status_reply(MeasureStatus::RuntimeError,
                        "the kernel returned status " + std::to_string(rc));
  }
  Message reply = status_reply(MeasureStatus::Ok, "");
  if (reference != nullptr) {
    std::optional<std::string> diff =
        compare_outputs(buffers, reference->outputs, reference->tolerance);
    if (diff) {
      reply = status_reply(MeasureStatus::WrongResult, "wrong result: " + *diff);
    }
  }
  reply.header["verify_seconds"] = now_seconds() - verify_start;
  if (h.contains("return_outputs") && h.at("return_outputs").as_bool()) {
    for (size_t p = signature.num_inputs; p < signature.params.size(); ++p) {
      reply.blobs.push_back(buffers.bytes(p));
    }
  }
  if (reply.header.at("status").as_string() != status_name(MeasureStatus::Ok) ||
      !h.contains("timing")) {
    return reply;
  }
  return time_kernel(kernel, buffers, warmup_seconds, timing_from_json(h.at("timing")),
                     std::move(reply));
}

void apply_memory_limit(int64_t mb) {
  if (mb <= 0) {
    return;
  }
  rlimit limit{};
  limit.rlim_cur = static_cast<rlim_t>(mb) << 20;
  limit.rlim_max = static_cast<rlim_t>(mb) << 20;
  if (::setrlimit(RLIMIT_AS, &limit) != 0) {
    std::cerr << "tensortune-worker: cannot limit memory to " << mb << " MiB: "
              << std::strerror(errno) << "\n";
  }
}

}  // namespace

int worker_main(int argc, char** argv) {
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
        reply = handle_run(request, references);
      } catch (const std::exception& e) {
        reply = status_reply(MeasureStatus::RuntimeError, e.what());
      }
    } else {
      std::cerr << "tensortune-worker: unknown request '" << op << "'\n";
      return 1;
    }
    if (!detail::write_message(fd, reply)) {
      return 0;
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
    TT_USER_CHECK(consider(env)) << "measure: TT_WORKER='" << env
                                 << "' is not an executable file";
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
