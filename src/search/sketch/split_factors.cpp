// SPDX-License-Identifier: Apache-2.0
// Split-knob choices: ordered factorizations of an axis extent (Ansor, OSDI'20, section 5:
// "SplitFactorizationMemo"), extended with the factorizations of the extent rounded up to a
// multiple of 16 and 64, so a prime or awkward extent (257, 513, 1000) still gets vector-friendly
// tiles with a guarded tail instead of only the trivial ones.
#include "search/sketch/split_factors.h"

#include "tensortune/support/error.h"

#include <algorithm>
#include <set>

namespace tensortune::search::detail {
namespace {

using Tuple = std::vector<int64_t>;

/// Appends every tuple of divisors (from `divisors`, ascending) whose product divides `remaining`.
void factorize(const std::vector<int64_t>& divisors,
               int64_t remaining,
               int level,
               int levels,
               int64_t max_innermost,
               Tuple& prefix,
               std::set<Tuple>& out) {
  if (level == levels) {
    out.insert(prefix);
    return;
  }
  for (int64_t f : divisors) {
    if (f > remaining || (level + 1 == levels && f > max_innermost)) {
      break;
    }
    if (remaining % f != 0) {
      continue;
    }
    prefix.push_back(f);
    factorize(divisors, remaining / f, level + 1, levels, max_innermost, prefix, out);
    prefix.pop_back();
  }
}

std::set<Tuple> factorizations(int64_t n, int levels, int64_t max_innermost) {
  std::vector<int64_t> divisors;
  for (int64_t f = 1; f * f <= n; ++f) {
    if (n % f == 0) {
      divisors.push_back(f);
      if (f * f != n) {
        divisors.push_back(n / f);
      }
    }
  }
  std::sort(divisors.begin(), divisors.end());
  std::set<Tuple> out;
  Tuple prefix;
  factorize(divisors, n, 0, levels, max_innermost, prefix, out);
  return out;
}

/// At most `m` elements of `items`, evenly spaced, the first always kept.
std::vector<Tuple> thin(const std::vector<Tuple>& items, size_t m) {
  if (items.size() <= m) {
    return items;
  }
  std::vector<Tuple> kept;
  for (size_t k = 0; k < m; ++k) {
    kept.push_back(items[k * items.size() / m]);
  }
  return kept;
}

int64_t round_up(int64_t n, int64_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

}  // namespace

std::vector<int64_t> prime_factors(int64_t n) {
  TT_CHECK(n >= 1) << "prime_factors of " << n;
  std::vector<int64_t> out;
  for (int64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      out.push_back(p);
      n /= p;
    }
  }
  if (n > 1) {
    out.push_back(n);
  }
  return out;
}

std::vector<std::vector<int64_t>> split_choices(int64_t extent,
                                                int inner_levels,
                                                int64_t max_innermost,
                                                int64_t lanes) {
  TT_CHECK(extent >= 1 && inner_levels >= 0)
      << "split_choices(" << extent << ", " << inner_levels << ")";
  std::set<Tuple> own = factorizations(extent, inner_levels, max_innermost);
  std::vector<int64_t> paddings;
  if (extent > 16 && extent % 16 != 0) {
    paddings = {round_up(extent, 16), round_up(extent, 64)};
  } else if (lanes > 0 && extent > 2 * lanes && extent % (2 * lanes) != 0) {
    // An odd number of vectors (208 = 13 x 16) splits into whole vectors one at a time only, and
    // a register tile one vector wide loads more values than it does FMAs.
    paddings = {round_up(extent, 4 * lanes)};
  }
  std::set<Tuple> extra;
  for (int64_t padded : paddings) {
    for (const Tuple& t : factorizations(padded, inner_levels, max_innermost)) {
      if (own.count(t) == 0) {
        extra.insert(t);
      }
    }
  }
  std::vector<Tuple> kept = thin(std::vector<Tuple>(own.begin(), own.end()), kMaxSplitChoices);
  size_t room = kMaxSplitChoices - kept.size();
  for (const Tuple& t : thin(std::vector<Tuple>(extra.begin(), extra.end()), room)) {
    kept.push_back(t);
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

std::vector<int64_t> vector_choices(int64_t extent) {
  std::vector<int64_t> out = {1};
  for (int64_t v = 2; v <= kMaxInnermostFactor && v / 2 < extent; v *= 2) {
    out.push_back(v);
  }
  return out;
}

int move_split_factor(const std::vector<std::vector<int64_t>>& choices,
                      int current,
                      support::Rng& rng) {
  const Tuple& from = choices[static_cast<size_t>(current)];
  if (from.empty()) {
    return -1;
  }
  // Level 0 is the implied outer level; levels 1..q are the tuple's entries.
  auto levels = static_cast<int64_t>(from.size());
  for (int attempt = 0; attempt < 8; ++attempt) {
    int64_t src = rng.uniform_int(0, levels);
    int64_t dst = rng.uniform_int(0, levels - 1);
    dst += dst >= src ? 1 : 0;
    Tuple to = from;
    int64_t p = 2;
    if (src > 0) {
      std::vector<int64_t> primes = prime_factors(to[static_cast<size_t>(src - 1)]);
      if (primes.empty()) {
        continue;
      }
      p = primes[rng.pick(primes.size())];
      to[static_cast<size_t>(src - 1)] /= p;
    } else {
      static constexpr int64_t kSmallPrimes[] = {2, 2, 2, 3, 5, 7};
      p = kSmallPrimes[rng.pick(6)];
    }
    if (dst > 0) {
      to[static_cast<size_t>(dst - 1)] *= p;
    }
    auto it = std::lower_bound(choices.begin(), choices.end(), to);
    if (it != choices.end() && *it == to && to != from) {
      return static_cast<int>(it - choices.begin());
    }
  }
  return -1;
}

}  // namespace tensortune::search::detail
