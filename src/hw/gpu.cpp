// The GPU presets. Structural figures: NVIDIA's A100 and H100 whitepapers and datasheets (docs/gpu.md has
// each with its source). Software figures: fitted on the single-node calibration file (docs/gpu.md,
// "Calibration"); the H100 takes the A100's, as no H100 measurement entered the fit.

#include "hw/gpu.h"

#include <fmt/format.h>

#include <cmath>

#include "util/input_error.h"

namespace phaze::hw {

namespace {

/// The fitted software figures (`phaze validate --fit` on tests/data/vtrain/ground_truth_single.csv).
constexpr double kTensorEfficiency = 0.84;
constexpr double kMemoryEfficiency = 0.67;
constexpr double kKernelLaunchS = 63.5e-6;

Gpu with_fitted_software(Gpu g) {
  g.tensor_efficiency = kTensorEfficiency;
  g.memory_efficiency = kMemoryEfficiency;
  g.kernel_launch_s = kKernelLaunchS;
  return g;
}

void check_positive(double value, double limit, const std::string& source, const char* field) {
  if (!std::isfinite(value) || value <= 0 || value > limit)
    throw InputError(fmt::format("{}: {} = {} must be a number in (0, {:g}]", source, field, value, limit));
}

}  // namespace

double peak_tensor_flop_per_s(const Gpu& g) {
  return static_cast<double>(g.sms) * g.tensor_flop_per_clock_per_sm * g.tensor_clock_hz;
}

void validate(const Gpu& g, const std::string& source) {
  if (g.sms < 1 || g.sms > gpu_limits::kSms)
    throw InputError(fmt::format("{}: sms = {} must be in [1, {}]", source, g.sms, gpu_limits::kSms));
  check_positive(g.tensor_flop_per_clock_per_sm, gpu_limits::kFlopPerClock, source, "tensor_flop_per_clock_per_sm");
  check_positive(g.tensor_clock_hz, gpu_limits::kClockHz, source, "tensor_clock_hz");
  check_positive(g.hbm_bandwidth, gpu_limits::kBandwidth, source, "hbm_bandwidth");
  for (auto [value, field] : {std::pair{g.hbm_bytes, "hbm_bytes"}, std::pair{g.l2_bytes, "l2_bytes"},
                              std::pair{g.shared_memory_per_sm_bytes, "shared_memory_per_sm_bytes"}})
    if (value < 1 || value > gpu_limits::kBytes)
      throw InputError(fmt::format("{}: {} = {} must be in [1, {}]", source, field, value, gpu_limits::kBytes));
  check_positive(g.tensor_efficiency, 1, source, "tensor_efficiency");
  check_positive(g.memory_efficiency, 1, source, "memory_efficiency");
  if (!std::isfinite(g.kernel_launch_s) || g.kernel_launch_s < 0 || g.kernel_launch_s > gpu_limits::kLaunchS)
    throw InputError(
        fmt::format("{}: kernel_launch_s = {} must be in [0, {:g}]", source, g.kernel_launch_s, gpu_limits::kLaunchS));
}

Gpu a100_40gb() {
  Gpu g;
  g.name = "a100-40gb";
  g.sms = 108;                            // of 128 on the die
  g.tensor_flop_per_clock_per_sm = 2048;  // 4 tensor cores × 256 FP16 FMA
  g.tensor_clock_hz = 1.41e9;             // 108 × 2048 × 1.41 GHz = 312 TFLOP/s dense
  g.hbm_bytes = 40ll << 30;
  g.hbm_bandwidth = 1.555e12;
  g.l2_bytes = 40ll << 20;
  g.shared_memory_per_sm_bytes = 164ll << 10;
  return with_fitted_software(g);
}

Gpu a100_80gb() {
  Gpu g = a100_40gb();
  g.name = "a100-80gb";
  g.hbm_bytes = 80ll << 30;
  g.hbm_bandwidth = 2.039e12;
  return g;
}

Gpu h100_sxm() {
  Gpu g;
  g.name = "h100-sxm";
  g.sms = 132;                            // of 144 on the die
  g.tensor_flop_per_clock_per_sm = 4096;  // 4 tensor cores × 512 FP16 FMA
  g.tensor_clock_hz = 1.83e9;             // 132 × 4096 × 1.83 GHz = 989.4 TFLOP/s dense
  g.hbm_bytes = 80ll << 30;
  g.hbm_bandwidth = 3.35e12;
  g.l2_bytes = 50ll << 20;
  g.shared_memory_per_sm_bytes = 228ll << 10;
  g.generation = "hopper";
  return with_fitted_software(g);  // fitted on A100 runs: software_fitted_on stays "ampere"
}

const std::vector<std::string>& gpu_preset_names() {
  static const std::vector<std::string> names = {"a100-40gb", "a100-80gb", "h100-sxm"};
  return names;
}

std::optional<Gpu> find_gpu_preset(const std::string& name) {
  if (name == "a100-40gb") return a100_40gb();
  if (name == "a100-80gb") return a100_80gb();
  if (name == "h100-sxm") return h100_sxm();
  return std::nullopt;
}

}  // namespace phaze::hw
