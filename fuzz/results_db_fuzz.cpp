// A results file (search --db FILE) that may be damaged or not a phaze file at all: open it for resuming
// and read everything a resumed search reads. Anything but a valid file must give InputError.
#include <cmath>
#include <cstdlib>

#include "fuzz_input.h"
#include "search/results_file.h"
#include "util/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaze;
  const fuzz::ScratchFile file(data, size);
  try {
    search::ResultsDb db(file.path(), "fuzz run");
    const int64_t count = db.count();
    const std::vector<std::string> keys = db.load_keys();
    if (static_cast<int64_t>(keys.size()) != count) std::abort();
    for (const search::PointResult& p : db.load_summaries())
      if (!std::isfinite(p.throughput_samples_per_s) || p.throughput_samples_per_s < 0) std::abort();
    (void)db.best(5);
    db.for_each([](search::PointResult&& p) { (void)p.record.dump(); });
    if (!keys.empty()) (void)db.find(keys.front());
  } catch (const InputError&) {
  }
  return 0;
}
