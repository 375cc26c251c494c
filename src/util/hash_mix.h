#pragma once

// One hash for the in-memory caches' keys (schedules, plans, GEMM estimates): values folded in one at a time.

#include <cstdint>

namespace phaze {

/// Folds `value` into the running hash `h`: the splitmix64 finaliser over the running value, cheap and well
/// spread for the bit patterns of doubles.
inline uint64_t hash_mix(uint64_t h, uint64_t value) {
  h ^= value + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

}  // namespace phaze
