// SPDX-License-Identifier: Apache-2.0
// Tests of the runtime's parallel-for and aligned allocation.
#include "tensortune/runtime/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace {

struct SumClosure {
  std::atomic<int64_t> sum{0};
  std::vector<std::atomic<int>>* visits = nullptr;
};

int32_t sum_body(int32_t i, void* closure) {
  auto* c = static_cast<SumClosure*>(closure);
  c->sum.fetch_add(i, std::memory_order_relaxed);
  (*c->visits)[static_cast<size_t>(i)].fetch_add(1, std::memory_order_relaxed);
  return 0;
}

/// Runs the sum body over [0, n) and checks the total and that each index ran exactly once.
void check_sum(int32_t n) {
  std::vector<std::atomic<int>> visits(static_cast<size_t>(n));
  SumClosure c;
  c.visits = &visits;
  ASSERT_EQ(tt_parallel_for(n, sum_body, &c), 0);
  EXPECT_EQ(c.sum.load(), static_cast<int64_t>(n) * (n - 1) / 2) << "n = " << n;
  for (int32_t i = 0; i < n; ++i) {
    ASSERT_EQ(visits[static_cast<size_t>(i)].load(), 1) << "index " << i << " of " << n;
  }
}

/// Restores the thread count a test changed.
class ThreadCountGuard {
 public:
  ThreadCountGuard() : saved_(tt_get_num_threads()) {}
  ~ThreadCountGuard() { tt_set_num_threads(saved_); }
  ThreadCountGuard(const ThreadCountGuard&) = delete;
  ThreadCountGuard& operator=(const ThreadCountGuard&) = delete;

 private:
  int32_t saved_;
};

TEST(ParallelFor, SumsEveryIndexExactlyOnce) {
  ThreadCountGuard guard;
  tt_set_num_threads(4);  // more threads than cores (on CI): workers sleep without spinning
  for (int32_t n : {1, 2, 3, 5, 7, 64, 1000, 100003}) {
    check_sum(n);
  }
}

TEST(ParallelFor, RunsManyLoopsInARow) {
  ThreadCountGuard guard;
  tt_set_num_threads(3);
  std::vector<std::atomic<int>> visits(97);
  SumClosure c;
  c.visits = &visits;
  for (int rep = 0; rep < 2000; ++rep) {
    ASSERT_EQ(tt_parallel_for(97, sum_body, &c), 0);
  }
  EXPECT_EQ(c.sum.load(), int64_t{2000} * 97 * 96 / 2);
  for (auto& v : visits) {
    EXPECT_EQ(v.load(), 2000);
  }
}

TEST(ParallelFor, LoopsAfterPausesLongerThanTheSpinRun) {
  // Workers spin about 100 microseconds after a loop, then sleep: loops separated by pauses of
  // 0, 50 us and 2 ms find them spinning or asleep, and every one runs every index once.
  ThreadCountGuard guard;
  tt_set_num_threads(0);
  for (int pause_us : {0, 50, 2000, 0, 2000}) {
    for (int rep = 0; rep < 5; ++rep) {
      std::this_thread::sleep_for(std::chrono::microseconds(pause_us));
      check_sum(1 + 37 * rep);
    }
  }
}

TEST(ParallelFor, ZeroOrNegativeExtentRunsNothing) {
  std::vector<std::atomic<int>> visits(1);
  SumClosure c;
  c.visits = &visits;
  EXPECT_EQ(tt_parallel_for(0, sum_body, &c), 0);
  EXPECT_EQ(tt_parallel_for(-5, sum_body, &c), 0);
  EXPECT_EQ(visits[0].load(), 0);
}

struct NestedClosure {
  std::vector<std::atomic<int>>* cells;
  int32_t inner_n;
  std::atomic<int> inner_status{0};
};

struct InnerClosure {
  NestedClosure* outer;
  int32_t row;
};

int32_t inner_body(int32_t j, void* closure) {
  auto* c = static_cast<InnerClosure*>(closure);
  size_t cell = static_cast<size_t>(c->row * c->outer->inner_n + j);
  (*c->outer->cells)[cell].fetch_add(1, std::memory_order_relaxed);
  return 0;
}

int32_t outer_body(int32_t i, void* closure) {
  auto* c = static_cast<NestedClosure*>(closure);
  InnerClosure inner{c, i};
  int32_t status = tt_parallel_for(c->inner_n, inner_body, &inner);
  if (status != 0) {
    c->inner_status.store(status);
  }
  return status;
}

TEST(ParallelFor, NestedCallsRunAndCoverEveryCell) {
  ThreadCountGuard guard;
  tt_set_num_threads(4);
  const int32_t rows = 13;
  const int32_t cols = 29;
  std::vector<std::atomic<int>> cells(static_cast<size_t>(rows * cols));
  NestedClosure c{&cells, cols};
  ASSERT_EQ(tt_parallel_for(rows, outer_body, &c), 0);
  EXPECT_EQ(c.inner_status.load(), 0);
  for (size_t k = 0; k < cells.size(); ++k) {
    EXPECT_EQ(cells[k].load(), 1) << "cell " << k;
  }
}

struct FailClosure {
  int32_t fail_a;
  int32_t fail_b;
};

int32_t failing_body(int32_t i, void* closure) {
  auto* c = static_cast<FailClosure*>(closure);
  if (i == c->fail_a || i == c->fail_b) {
    return 100 + i;
  }
  return 0;
}

TEST(ParallelFor, ReturnsTheResultOfTheLowestFailingIndex) {
  ThreadCountGuard guard;
  for (int32_t threads : {1, 2, 4}) {
    tt_set_num_threads(threads);
    FailClosure both{37, 900};
    EXPECT_EQ(tt_parallel_for(1000, failing_body, &both), 137) << threads << " threads";
    FailClosure late{999, 999};
    EXPECT_EQ(tt_parallel_for(1000, failing_body, &late), 1099) << threads << " threads";
    FailClosure none{-1, -1};
    EXPECT_EQ(tt_parallel_for(1000, failing_body, &none), 0) << threads << " threads";
  }
}

TEST(ParallelFor, ThreadCountCanChangeBetweenLoops) {
  ThreadCountGuard guard;
  for (int32_t threads : {1, 3, 2, 8, 1, 5}) {
    tt_set_num_threads(threads);
    EXPECT_EQ(tt_get_num_threads(), threads);
    check_sum(4099);
  }
  tt_set_num_threads(0);
  unsigned hw = std::thread::hardware_concurrency();
  EXPECT_EQ(tt_get_num_threads(), hw == 0 ? 1 : static_cast<int32_t>(hw));
}

int32_t plain_sum_body(int32_t i, void* closure) {
  auto* c = static_cast<SumClosure*>(closure);
  c->sum.fetch_add(i, std::memory_order_relaxed);
  return 0;
}

// Loops started from several outside threads at once: each must complete with its own result.
TEST(ParallelFor, ConcurrentOutsideCallersAllComplete) {
  ThreadCountGuard guard;
  tt_set_num_threads(2);
  std::vector<SumClosure> sums(4);
  std::vector<std::thread> callers;
  for (size_t t = 0; t < sums.size(); ++t) {
    callers.emplace_back([&sums, t] {
      for (int rep = 0; rep < 200; ++rep) {
        tt_parallel_for(100, plain_sum_body, &sums[t]);
      }
    });
  }
  for (std::thread& t : callers) {
    t.join();
  }
  for (const SumClosure& s : sums) {
    EXPECT_EQ(s.sum.load(), int64_t{200} * 100 * 99 / 2);
  }
}

TEST(ParallelWake, GathersEveryThreadOfThePool) {
  ThreadCountGuard guard;
  tt_set_num_threads(1);
  EXPECT_EQ(tt_parallel_wake(), 1);
  tt_set_num_threads(2);
  // A worker asleep takes a futex wake-up to arrive; on a loaded host the 5 ms gathering may
  // end first, so each attempt gets at most the pool's size and a later one all of it.
  int32_t arrived = 0;
  for (int attempt = 0; attempt < 20 && arrived != 2; ++attempt) {
    arrived = tt_parallel_wake();
    EXPECT_GE(arrived, 1);
    EXPECT_LE(arrived, 2);
  }
  EXPECT_EQ(arrived, 2);
}

TEST(ParallelWake, InsideAParallelLoopItIsOnlyTheCallingThread) {
  ThreadCountGuard guard;
  tt_set_num_threads(2);
  std::atomic<int32_t> inner{0};
  tt_parallel_for(
      2,
      [](int32_t, void* closure) -> int32_t {
        static_cast<std::atomic<int32_t>*>(closure)->fetch_add(tt_parallel_wake());
        return 0;
      },
      &inner);
  EXPECT_EQ(inner.load(), 2);
}

TEST(Alloc, ReturnsWritable64ByteAlignedMemory) {
  for (int64_t bytes : {int64_t{1}, int64_t{63}, int64_t{64}, int64_t{1000}, int64_t{1} << 22}) {
    void* p = tt_alloc(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes << " bytes";
    std::memset(p, 0xab, static_cast<size_t>(bytes));
    EXPECT_EQ(static_cast<unsigned char*>(p)[bytes - 1], 0xab);
    tt_free(p);
  }
  EXPECT_EQ(tt_alloc(0), nullptr);
  tt_free(nullptr);
}

TEST(Alloc, LargeBlocksAreReusedForTheSameSizeFromAnyThread) {
  // A kernel's scratch comes back to it on its next call instead of being mapped anew.
  void* a = tt_alloc(int64_t{3} << 20);
  std::memset(a, 1, size_t{3} << 20);
  tt_free(a);
  void* b = tt_alloc(int64_t{3} << 20);
  EXPECT_EQ(a, b);
  void* c = tt_alloc(int64_t{3} << 20);  // the cached block is in use: a new one
  EXPECT_NE(c, b);
  void* d = tt_alloc((int64_t{3} << 20) + 4096);  // another size: never the cached block
  EXPECT_NE(d, b);
  EXPECT_NE(d, c);
  tt_free(b);
  tt_free(c);
  tt_free(d);
  // Concurrent allocations and frees of a few sizes: every block is private while it is held.
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &errors] {
      for (int n = 0; n < 200; ++n) {
        const int64_t bytes = (int64_t{64} << 10) * (1 + (n + t) % 3);
        auto* p = static_cast<unsigned char*>(tt_alloc(bytes));
        std::memset(p, t + 1, static_cast<size_t>(bytes));
        std::this_thread::yield();  // another holder of the block would overwrite it meanwhile
        errors += p[0] != t + 1 || p[bytes - 1] != t + 1 ? 1 : 0;
        tt_free(p);
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  EXPECT_EQ(errors.load(), 0);
}

TEST(Alloc, CachedBlocksStartOnAPageAndLargeOnesOnAHugePage) {
  // Where a kernel's scratch lies within a page (4K aliasing, cache sets) must not depend on the
  // state of the heap: the same kernel would run at another speed in another process.
  for (int64_t bytes : {int64_t{64} << 10, (int64_t{100} << 10) + 3, int64_t{200} << 10}) {
    void* p = tt_alloc(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u) << bytes << " bytes";
    std::memset(p, 1, static_cast<size_t>(bytes));
    tt_free(p);
  }
  for (int64_t bytes : {int64_t{256} << 10, (int64_t{5} << 20) + 100}) {
    void* p = tt_alloc(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (uintptr_t{2} << 20), 0u) << bytes << " bytes";
    std::memset(p, 1, static_cast<size_t>(bytes));
    tt_free(p);
  }
}

TEST(AllocDeathTest, AbortsWithAMessageOnNegativeSize) {
  EXPECT_DEATH(tt_alloc(-8), "tt_alloc of -8 bytes");
}

}  // namespace
