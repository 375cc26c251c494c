// A GPU written as JSON reads back as the same GPU, for every preset: every field the writer emits is one
// the reader knows.

#include <gtest/gtest.h>

#include "hw/gpu.h"
#include "hw/gpu_json.h"

namespace {

TEST(GpuJson, EveryPresetReadsBackAsItself) {
  for (const std::string& name : phaze::hw::gpu_preset_names()) {
    const phaze::hw::Gpu gpu = *phaze::hw::find_gpu_preset(name);
    nlohmann::json j = phaze::hw::to_json(gpu);
    j["base"] = name;
    const phaze::hw::Gpu back = phaze::hw::gpu_from_json(j, "t.json");
    // to_json writes software_fitted_on too, so the fit a preset records survives the round trip.
    EXPECT_EQ(back, gpu) << name;
  }
}

}  // namespace
