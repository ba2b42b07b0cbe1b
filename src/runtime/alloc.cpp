// SPDX-License-Identifier: Apache-2.0
// tt_alloc / tt_free: the scratch buffers of generated kernels. A kernel allocates the same
// buffers on every call; glibc serves large ones with mmap (or trims the heap top) and returns
// them to the system on free, so every call page-faulted its scratch in again: the default
// Winograd schedule ran 37-41 ms in process against 14-17 ms with glibc told to keep its memory.
// Large blocks are therefore kept on free and handed out again for the same size (up to a cap),
// the way TVM's workspace pool and PyTorch's caching allocator do. Small blocks go to malloc.
// Cached blocks start on a page and blocks from 256 KiB on are backed by 2 MiB transparent huge
// pages where the kernel allows it (as the measurer's parameter buffers are): where a block
// lies in a page and which physical pages it gets decide which cache sets it maps to, and
// these must not depend on the state of the heap, or a kernel's time changes from one process
// to the next (a tuned matmul packing B into a 512 KiB block: 5.7 ms in the tuner's worker,
// 6.4-7.1 ms in other processes).
// Self-contained (std and POSIX only), like the rest of the runtime.
#include "runtime/internal.h"
#include "tensortune/runtime/parallel.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sys/mman.h>
#include <unordered_map>
#include <vector>

namespace tensortune::runtime {
namespace {

constexpr int64_t kAlign = 64;
/// Alignment of cached blocks.
constexpr int64_t kPage = 4096;
/// Blocks from this size on are cached (below it, malloc's own bins keep them warm).
constexpr int64_t kCachedFrom = int64_t{64} << 10;
/// Blocks from this size on are mapped on their own, 2 MiB aligned, with huge pages advised.
constexpr int64_t kHugeFrom = int64_t{256} << 10;
constexpr int64_t kHugePage = int64_t{2} << 20;
/// Most bytes kept free in the cache; a free beyond it returns the block to the system.
constexpr int64_t kMaxCachedBytes = int64_t{1} << 30;

/// A cached-size block: its size, and for a mapped one the mapping to unmap.
struct Block {
  int64_t bytes = 0;
  void* mapping = nullptr;
  size_t length = 0;
};

/// A new block of `bytes` (a multiple of kPage): mapped and 2 MiB aligned from kHugeFrom on
/// (malloc when mapping fails), else page-aligned from malloc.
Block new_block(int64_t bytes, void** start) {
  Block block{bytes, nullptr, 0};
  if (bytes >= kHugeFrom) {
    // Whole huge pages, and one more to align the start on a huge-page boundary.
    const auto whole = static_cast<size_t>((bytes + kHugePage - 1) / kHugePage * kHugePage);
    const size_t length = whole + static_cast<size_t>(kHugePage);
    void* raw = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw != MAP_FAILED) {
      const auto address = reinterpret_cast<uintptr_t>(raw);
      const auto huge = static_cast<uintptr_t>(kHugePage);
      *start = reinterpret_cast<void*>((address + huge - 1) & ~(huge - 1));
#ifdef MADV_HUGEPAGE
      ::madvise(*start, whole, MADV_HUGEPAGE);  // the last page too, though partly unused
#endif
      block.mapping = raw;
      block.length = length;
      return block;
    }
  }
  *start = std::aligned_alloc(static_cast<size_t>(kPage), static_cast<size_t>(bytes));
  return block;
}

void release(void* start, const Block& block) {
  if (block.mapping != nullptr) {
    ::munmap(block.mapping, block.length);
  } else {
    std::free(start);
  }
}

class BlockCache {
 public:
  void* take(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(bytes);
    if (it == free_.end() || it->second.empty()) {
      return nullptr;
    }
    void* p = it->second.back();
    it->second.pop_back();
    cached_bytes_ -= bytes;
    return p;
  }
  void note_allocated(void* p, const Block& block) {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks_[p] = block;
  }
  /// Keeps `p` for reuse or releases it when the cache is full; false when `p` is not a
  /// cached-size block (the caller frees it).
  bool give_back(void* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(p);
    if (it == blocks_.end()) {
      return false;
    }
    const int64_t bytes = it->second.bytes;
    if (closed_ || cached_bytes_ + bytes > kMaxCachedBytes) {
      release(p, it->second);
      blocks_.erase(it);
      return true;
    }
    free_[bytes].push_back(p);
    cached_bytes_ += bytes;
    return true;
  }
  /// Releases every kept block, and from now on every block given back; true when no block is
  /// in use, so that no tt_free will ask the cache about one again.
  bool close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    for (const auto& kept : free_) {
      for (void* p : kept.second) {
        auto it = blocks_.find(p);
        release(p, it->second);
        blocks_.erase(it);
      }
    }
    free_.clear();
    cached_bytes_ = 0;
    return blocks_.empty();
  }

 private:
  std::mutex mutex_;
  std::unordered_map<void*, Block> blocks_;               ///< every live or cached large block
  std::unordered_map<int64_t, std::vector<void*>> free_;  ///< cached blocks by size
  int64_t cached_bytes_ = 0;
  bool closed_ = false;
};

/// The cache while it exists, else null (then blocks come from malloc, uncached). A plain atomic
/// pointer: it stays readable after static destruction, when the cache is gone.
std::atomic<BlockCache*> g_cache{nullptr};

/// Creates the cache, and tears it down with the rest of this copy of the runtime: when the
/// process exits, or when dlclose unloads an exported library that links the runtime, whose kept
/// blocks (up to kMaxCachedBytes) would otherwise stay allocated with nothing pointing at them.
/// The thread pool is created after the cache (pool() calls ensure_block_cache() first), so it
/// is destroyed, and its workers joined, before this runs. A block still in use keeps the cache
/// alive, since its tt_free needs it.
struct CacheOwner {
  CacheOwner() { g_cache.store(new BlockCache(), std::memory_order_release); }
  CacheOwner(const CacheOwner&) = delete;
  CacheOwner& operator=(const CacheOwner&) = delete;
  ~CacheOwner() {
    BlockCache* c = g_cache.load(std::memory_order_acquire);
    if (c->close()) {
      g_cache.store(nullptr, std::memory_order_release);
      delete c;
    }
  }
};

BlockCache* cache() {
  static CacheOwner owner;
  return g_cache.load(std::memory_order_acquire);
}

}  // namespace

void ensure_block_cache() {
  cache();
}

}  // namespace tensortune::runtime

extern "C" {

void* tt_alloc(int64_t bytes) {
  void* p = tt_try_alloc(bytes);
  if (p == nullptr && bytes > 0) {
    std::fprintf(stderr, "tensortune: tt_alloc: out of memory allocating %lld bytes\n",
                 static_cast<long long>(bytes));
    std::abort();
  }
  return p;
}

void* tt_try_alloc(int64_t bytes) {
  if (bytes < 0) {
    std::fprintf(stderr, "tensortune: tt_alloc of %lld bytes\n", static_cast<long long>(bytes));
    std::abort();
  }
  if (bytes == 0) {
    return nullptr;
  }
  using tensortune::runtime::kAlign;
  using tensortune::runtime::kPage;
  const int64_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  tensortune::runtime::BlockCache* cache =
      rounded >= tensortune::runtime::kCachedFrom ? tensortune::runtime::cache() : nullptr;
  const bool cached = cache != nullptr;
  const int64_t size = cached ? (bytes + kPage - 1) / kPage * kPage : rounded;
  if (cached) {
    if (void* p = cache->take(size)) {
      return p;
    }
  }
  void* p = nullptr;
  tensortune::runtime::Block block;
  if (cached) {
    block = tensortune::runtime::new_block(size, &p);
  } else {
    p = std::aligned_alloc(static_cast<size_t>(kAlign), static_cast<size_t>(size));
  }
  if (p == nullptr) {
    return nullptr;
  }
  if (cached) {
    cache->note_allocated(p, block);
  }
  return p;
}

void tt_free(void* ptr) {
  if (ptr == nullptr) {
    return;
  }
  tensortune::runtime::BlockCache* cache = tensortune::runtime::cache();
  if (cache == nullptr || !cache->give_back(ptr)) {
    std::free(ptr);
  }
}

}  // extern "C"
