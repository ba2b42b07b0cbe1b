// SPDX-License-Identifier: Apache-2.0
// The runtime's thread pool: persistent workers that split a parallel loop into a few contiguous
// chunks per thread, claimed in order by the workers and the calling thread. Between loops a
// worker spins briefly (TT_THREAD_SPIN_US, default 100 microseconds) watching for the next one,
// then sleeps on a condition variable; the caller spins as briefly for the last chunks. A model's
// kernels run back to back, so their workers are awake when the next loop starts instead of
// paying a futex wake-up (tens of microseconds) per loop; a pool left idle costs nothing.
// Self-contained (std only) so libtt_runtime.a can be linked into exported shared libraries.
#include "tensortune/runtime/parallel.h"

#include "runtime/internal.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tensortune::runtime {
namespace {

/// How long a thread spins waiting for work or for the last chunks before it sleeps:
/// TT_THREAD_SPIN_US microseconds (0 = never spin), default 100.
std::chrono::microseconds spin_time() {
  static const std::chrono::microseconds time = [] {
    const char* env = std::getenv("TT_THREAD_SPIN_US");
    if (env == nullptr || *env == '\0') {
      return std::chrono::microseconds(100);
    }
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (*end != '\0' || v < 0) {
      std::fprintf(stderr,
                   "tensortune runtime: ignoring TT_THREAD_SPIN_US='%s' (not a count of "
                   "microseconds)\n",
                   env);
      return std::chrono::microseconds(100);
    }
    return std::chrono::microseconds(std::min<long>(v, 1000000));
  }();
  return time;
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

/// Spins until `ready()` or `budget` has passed; returns ready()'s last value.
template <class Ready>
bool spin_until(std::chrono::microseconds budget, Ready ready) {
  if (budget.count() == 0) {
    return ready();
  }
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) {
        return true;
      }
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return ready();
    }
  }
}

/// Chunks per thread: a few, so that when one core runs slower (a noisy neighbour on a shared
/// host) the other threads take over its remaining chunks.
constexpr int32_t kChunksPerThread = 4;

/// True on pool workers and on a caller thread while it runs a parallel loop: a nested
/// tt_parallel_for then runs serially instead of waiting for busy workers.
thread_local bool t_in_parallel_region = false;

/// The hardware's threads, read once (glibc reads a /sys file each time it is asked).
int32_t hardware_threads() {
  static const int32_t threads = [] {
    unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int32_t>(std::min<unsigned>(n, 1024));
  }();
  return threads;
}

/// The first failing iteration of a range and its result; {end, 0} when all succeeded.
struct ChunkResult {
  int32_t index;
  int32_t status;
};

/// Runs body over [begin, end) in order, stopping at the first failure.
ChunkResult run_range(tt_parallel_body body, void* closure, int32_t begin, int32_t end) {
  for (int32_t i = begin; i < end; ++i) {
    int32_t status = body(i, closure);
    if (status != 0) {
      return {i, status};
    }
  }
  return {end, 0};
}

/// One parallel loop in flight; lives on the caller's stack until every chunk is done.
struct Job {
  tt_parallel_body body = nullptr;
  void* closure = nullptr;
  int32_t n = 0;
  int32_t chunks = 0;
  int32_t next_chunk = 0;               // guarded by the pool mutex
  std::atomic<int32_t> done_chunks{0};  // written under the pool mutex, spun on without it
  int32_t failed_index = std::numeric_limits<int32_t>::max();
  int32_t failed_status = 0;

  int32_t chunk_begin(int32_t c) const {
    return static_cast<int32_t>(static_cast<int64_t>(n) * c / chunks);
  }
};

class ThreadPool {
 public:
  ThreadPool() : num_threads_(hardware_threads()) {}
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      generation_.fetch_add(1, std::memory_order_release);
    }
    work_cv_.notify_all();
    for (std::thread& t : workers_) {
      t.join();
    }
  }

  void set_num_threads(int32_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    num_threads_ = n <= 0 ? hardware_threads() : std::min<int32_t>(n, 1024);
  }

  int32_t num_threads() {
    std::lock_guard<std::mutex> lock(mutex_);
    return num_threads_;
  }

  int32_t run(int32_t n, tt_parallel_body body, void* closure) {
    // One loop at a time: a second outside caller waits for the pool (its kernel is timed alone).
    std::lock_guard<std::mutex> run_lock(run_mutex_);
    Job job;
    job.body = body;
    job.closure = closure;
    job.n = n;
    std::unique_lock<std::mutex> lock(mutex_);
    job.chunks = std::min(n, num_threads_ * kChunksPerThread);
    while (static_cast<int32_t>(workers_.size()) < std::min(job.chunks, num_threads_) - 1) {
      workers_.emplace_back([this] { worker_loop(); });
    }
    job_ = &job;
    generation_.fetch_add(1, std::memory_order_release);
    lock.unlock();
    work_cv_.notify_all();
    t_in_parallel_region = true;
    lock.lock();
    while (job.next_chunk < job.chunks) {
      run_claimed_chunk(job, lock);
    }
    if (job.done_chunks.load(std::memory_order_acquire) != job.chunks) {
      lock.unlock();
      spin_until(spin_budget(),
                 [&job] { return job.done_chunks.load(std::memory_order_acquire) == job.chunks; });
      lock.lock();
      done_cv_.wait(lock, [&job] { return job.done_chunks == job.chunks; });
    }
    job_ = nullptr;
    t_in_parallel_region = false;
    return job.failed_status;
  }

 private:
  /// How long to spin (mutex_ held): spin_time(), but never with more threads than the hardware
  /// has, where a spinning thread would hold a core another one needs.
  std::chrono::microseconds spin_budget() const {
    return num_threads_ <= hardware_threads() ? spin_time() : std::chrono::microseconds(0);
  }

  /// Claims the next chunk of `job`, runs it unlocked, records its result. `lock` holds mutex_.
  void run_claimed_chunk(Job& job, std::unique_lock<std::mutex>& lock) {
    int32_t c = job.next_chunk++;
    int32_t begin = job.chunk_begin(c);
    int32_t end = job.chunk_begin(c + 1);
    lock.unlock();
    ChunkResult r = run_range(job.body, job.closure, begin, end);
    lock.lock();
    if (r.status != 0 && r.index < job.failed_index) {
      job.failed_index = r.index;
      job.failed_status = r.status;
    }
    if (job.done_chunks.fetch_add(1, std::memory_order_acq_rel) + 1 == job.chunks) {
      done_cv_.notify_all();
    }
  }

  void worker_loop() {
    t_in_parallel_region = true;
    std::unique_lock<std::mutex> lock(mutex_);
    auto has_work = [this] {
      return stop_ || (job_ != nullptr && job_->next_chunk < job_->chunks);
    };
    for (;;) {
      if (!has_work()) {
        // Watch for the next loop a little while before sleeping (the caller publishes a loop by
        // bumping generation_ under the mutex).
        const uint64_t seen = generation_.load(std::memory_order_relaxed);
        const std::chrono::microseconds budget = spin_budget();
        lock.unlock();
        const bool published = spin_until(
            budget, [this, seen] { return generation_.load(std::memory_order_acquire) != seen; });
        lock.lock();
        if (published) {
          continue;  // its chunks may all be claimed already: then watch for the one after
        }
        work_cv_.wait(lock, has_work);
      }
      if (stop_) {
        return;
      }
      run_claimed_chunk(*job_, lock);
    }
  }

  std::mutex run_mutex_;
  std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::vector<std::thread> workers_;
  Job* job_ = nullptr;
  /// Bumped (under mutex_) whenever a loop is published or the pool stops.
  std::atomic<uint64_t> generation_{0};
  int32_t num_threads_;
  bool stop_ = false;
};

/// Created on first use (no static constructor); joined at exit or when a library is unloaded.
ThreadPool& pool() {
  // Statics are destroyed in the reverse order of their creation: the block cache, created
  // first, outlives the workers, which free scratch blocks until they are joined.
  ensure_block_cache();
  static ThreadPool instance;
  return instance;
}

}  // namespace
}  // namespace tensortune::runtime

extern "C" {

int32_t tt_parallel_for(int32_t n, tt_parallel_body body, void* closure) {
  using tensortune::runtime::t_in_parallel_region;
  if (n <= 0) {
    return 0;
  }
  if (n == 1 || t_in_parallel_region) {
    return tensortune::runtime::run_range(body, closure, 0, n).status;
  }
  tensortune::runtime::ThreadPool& p = tensortune::runtime::pool();
  if (p.num_threads() == 1) {
    return tensortune::runtime::run_range(body, closure, 0, n).status;
  }
  return p.run(n, body, closure);
}

int32_t tt_parallel_wake(void) {
  using tensortune::runtime::pool;
  const int32_t n = pool().num_threads();
  if (n <= 1 || tensortune::runtime::t_in_parallel_region) {
    return 1;
  }
  // One iteration per thread, each waiting for all the others: the caller, busy in its own,
  // cannot claim a second one, so every worker must come and take one.
  struct Gathering {
    std::atomic<int32_t> arrived{0};
    int32_t threads = 0;
    std::chrono::steady_clock::time_point deadline;
  } gathering;
  gathering.threads = n;
  gathering.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(5);
  tt_parallel_for(
      n,
      [](int32_t, void* closure) -> int32_t {
        auto* g = static_cast<Gathering*>(closure);
        g->arrived.fetch_add(1, std::memory_order_acq_rel);
        while (g->arrived.load(std::memory_order_acquire) < g->threads &&
               std::chrono::steady_clock::now() < g->deadline) {
          tensortune::runtime::cpu_relax();
        }
        return 0;
      },
      &gathering);
  return gathering.arrived.load(std::memory_order_acquire);
}

void tt_set_num_threads(int32_t n) {
  tensortune::runtime::pool().set_num_threads(n);
}

int32_t tt_get_num_threads(void) {
  return tensortune::runtime::pool().num_threads();
}

}  // extern "C"
