// SPDX-License-Identifier: Apache-2.0
// tt_alloc / tt_free: the scratch buffers of generated kernels. A kernel allocates the same
// buffers on every call; glibc serves large ones with mmap (or trims the heap top) and returns
// them to the system on free, so every call page-faulted its scratch in again: the default
// Winograd schedule ran 37-41 ms in process against 14-17 ms with glibc told to keep its memory.
// Large blocks are therefore kept on free and handed out again for the same size (up to a cap),
// the way TVM's workspace pool and PyTorch's caching allocator do. Small blocks go to malloc.
// Self-contained (std only), like the rest of the runtime.
#include "tensortune/runtime/parallel.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tensortune::runtime {
namespace {

constexpr int64_t kAlign = 64;
/// Blocks from this size on are cached (below it, malloc's own bins keep them warm).
constexpr int64_t kCachedFrom = int64_t{64} << 10;
/// Most bytes kept free in the cache; a free beyond it returns the block to the system.
constexpr int64_t kMaxCachedBytes = int64_t{1} << 30;

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
  void note_allocated(void* p, int64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    size_of_[p] = bytes;
  }
  /// Keeps `p` for reuse; false when it is not a cached-size block or the cache is full (the
  /// caller frees it).
  bool give_back(void* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = size_of_.find(p);
    if (it == size_of_.end()) {
      return false;
    }
    const int64_t bytes = it->second;
    if (cached_bytes_ + bytes > kMaxCachedBytes) {
      size_of_.erase(it);
      return false;
    }
    free_[bytes].push_back(p);
    cached_bytes_ += bytes;
    return true;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<void*, int64_t> size_of_;            ///< every live or cached large block
  std::unordered_map<int64_t, std::vector<void*>> free_;  ///< cached blocks by size
  int64_t cached_bytes_ = 0;
};

/// Never destroyed: kernels may free scratch from pool threads while the process exits.
BlockCache& cache() {
  static BlockCache* c = new BlockCache();
  return *c;
}

}  // namespace
}  // namespace tensortune::runtime

extern "C" {

void* tt_alloc(int64_t bytes) {
  if (bytes < 0) {
    std::fprintf(stderr, "tensortune: tt_alloc of %lld bytes\n", static_cast<long long>(bytes));
    std::abort();
  }
  if (bytes == 0) {
    return nullptr;
  }
  using tensortune::runtime::kAlign;
  const int64_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  const bool cached = rounded >= tensortune::runtime::kCachedFrom;
  if (cached) {
    if (void* p = tensortune::runtime::cache().take(rounded)) {
      return p;
    }
  }
  void* p = std::aligned_alloc(kAlign, static_cast<size_t>(rounded));
  if (p == nullptr) {
    std::fprintf(stderr, "tensortune: tt_alloc: out of memory allocating %lld bytes\n",
                 static_cast<long long>(bytes));
    std::abort();
  }
  if (cached) {
    tensortune::runtime::cache().note_allocated(p, rounded);
  }
  return p;
}

void tt_free(void* ptr) {
  if (ptr != nullptr && !tensortune::runtime::cache().give_back(ptr)) {
    std::free(ptr);
  }
}

}  // extern "C"
