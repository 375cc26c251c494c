// A CSV of measured kernels (phaze validate --kernels FILE): parse, then price every row on the H100.
#include <cmath>
#include <cstdlib>

#include "fuzz_input.h"
#include "hw/gpu.h"
#include "io/kernel_measurements.h"
#include "megatron/kernel_validation.h"
#include "util/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaze;
  try {
    const auto kernels = io::parse_kernel_measurements(fuzz::as_text(data, size), "kernels.csv");
    if (kernels.empty()) std::abort();  // no rows is an error, not an empty answer
    const auto v = megatron::check_kernels(kernels, hw::h100_sxm(), "cudnn");
    for (const auto& row : v.rows)
      if (row && (!std::isfinite(row->predicted_s) || row->predicted_s <= 0)) std::abort();
  } catch (const InputError&) {
  }
  return 0;
}
