#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace phaze::placement {

/// The largest degree d' ≥ d with the same ⌈N/d'⌉ and ⌊K/d'⌋ as d (N micro-batches, K devices, 1 ≤ d ≤ K).
/// Every degree in [d, d'] offers the same stages and the same pipeline slots; only the data-parallel
/// synchronisation differs, and under both time models it grows with the degree, so no degree past d can
/// strictly beat d and the planners' final rounds visit one degree per class: O(√N + √K) of them instead of
/// min(N, K). A time model whose synchronisation can fall as d grows must visit every degree instead.
inline int64_t last_equivalent_degree(int64_t d, int64_t micro_batches, int64_t devices) {
  const int64_t same_devices = devices / (devices / d);
  const int64_t quotient = (micro_batches - 1) / d;  // ⌈N/d⌉ − 1
  const int64_t same_slots = quotient == 0 ? std::numeric_limits<int64_t>::max() : (micro_batches - 1) / quotient;
  return std::min(same_devices, same_slots);
}

}  // namespace phaze::placement
