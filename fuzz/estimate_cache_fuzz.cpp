// An estimate cache file (--cache FILE) that may be damaged or not a phaze cache: open it, look up and
// store. Anything but a valid cache, or a damaged entry, must give InputError.
#include <cmath>
#include <cstdlib>

#include "cost/estimate_cache.h"
#include "fuzz_input.h"
#include "util/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaze;
  const fuzz::ScratchFile file(data, size);
  try {
    cost::EstimateCache cache(file.path());
    (void)cache.size();
    (void)cache.find("gemm");
    (void)cache.find_many({"gemm", "softmax", ""});
    // A key already in the file keeps its first value (first writer wins); a new one reads back.
    const bool known = cache.find("fuzz").has_value();
    cache.store("fuzz", cost::CachedEstimate{.latency_s = 1e-6, .energy_j = 1e-9});
    const std::optional<cost::CachedEstimate> back = cache.find("fuzz");
    if (!back || (!known && back->latency_s != 1e-6)) std::abort();
    if (!(back->latency_s >= 0) || !(back->energy_j >= 0)) std::abort();  // damaged entries are refused
  } catch (const InputError&) {
  }
  return 0;
}
