// The fused attention kernel on the accelerator (accelerator.md 6.5): its HBM traffic against hand-counted
// tensors, the key/value passes when a head's keys and values outgrow the GLB, the roofline bounds its time
// respects, and that keeping the scores on chip saves the energy of moving them through HBM.

#include "cost/attention_cost.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cost/gemm_cost.h"
#include "cost/operator_cost.h"
#include "hw/presets.h"
#include "model/hf_config.h"
#include "model/layer_graph.h"

namespace {

using namespace phaze;
using model::AttentionCore;
using model::Direction;

constexpr double kTensor = 4096.0 * 32 * 128 * 2;  // one 16-bit tensor of 4096 tokens × 32 heads × 128

TEST(AttentionCost, HbmTrafficIsTheKernelsInputsAndOutputs) {
  // Llama-2-7B's core at s = 4096, b = 1, t = 1: Q, K, V, O each 32 MiB, one FP32 statistic per query row.
  AttentionCore core{32, 1, 4096, 128, 128, Direction::Forward};
  const double statistics = 32.0 * 4096 * 4;
  EXPECT_EQ(cost::attention_kv_passes(core, 8, 128ll << 20, 2), 1);
  EXPECT_EQ(cost::attention_hbm_bytes(core, 8, 128ll << 20, 2), 4 * kTensor + statistics);
  // Backward reads Q, K, V, O, dO and the statistics, writes dQ, dK, dV.
  core.direction = Direction::Backward;
  EXPECT_EQ(cost::attention_hbm_bytes(core, 8, 128ll << 20, 2), 8 * kTensor + statistics);
  // Grouped-query attention (4 query heads per key/value head): K, V, dK and dV a quarter each.
  core.group = 4;
  EXPECT_EQ(cost::attention_hbm_bytes(core, 8, 128ll << 20, 2), 4 * kTensor + 4 * kTensor / 4 + statistics);
}

TEST(AttentionCost, KeysAndValuesCrossOncePerQueryBlockWhenTheyOutgrowTheGlb) {
  // s = 1024, 64 + 64 elements per head: one head's K and V are 256 KiB. A 64 KiB GLB keeps 32 KiB of them,
  // so the queries go in blocks that fit the other 32 KiB: 32768 / 256 bytes per row = 128 rows, 8 blocks.
  AttentionCore core{1, 1, 1024, 64, 64, Direction::Forward};
  EXPECT_EQ(cost::attention_kv_passes(core, 1, 64 << 10, 2), 8);
  EXPECT_EQ(cost::attention_kv_passes(core, 1, 512 << 10, 2), 1);  // 256 KiB fit in half of 512 KiB
  // Two heads at once need twice the room: 64-row blocks.
  EXPECT_EQ(cost::attention_kv_passes(core, 2, 64 << 10, 2), 16);
  const double q = 1024.0 * 64 * 2;
  EXPECT_EQ(cost::attention_hbm_bytes(core, 1, 64 << 10, 2), q + 8 * 2 * q + q + 1024.0 * 4);
}

/// The operator of `id` of a Llama-3-8B layer (grouped-query attention) at s = 4096 on the accelerator.
const model::Operator& op_of(const model::LayerGraph& g, Direction direction, const std::string& id) {
  const model::OperatorGraph& pass = direction == Direction::Forward ? g.transformer.forward : g.transformer.backward;
  return pass.ops.at(static_cast<size_t>(pass.find(id)));
}

model::LayerGraph llama3(bool fused) {
  const model::ModelSpec spec = model::read_hf_config(std::string(PHAZE_TEST_DATA) + "/hf/llama-3-8b/config.json");
  model::Shape shape{4096, 1, 1};
  shape.fused_attention = fused;
  return model::build_layer_graph(spec, shape, model::Precision{}, "test");
}

TEST(AttentionCost, NeverFasterThanTheChipsPeakOrItsHbm) {
  const model::LayerGraph g = llama3(true);
  const hw::Architecture chip = hw::tpuv4_like();
  cost::Estimator estimator;
  for (Direction direction : {Direction::Forward, Direction::Backward}) {
    const model::Operator& op = op_of(g, direction, direction == Direction::Forward ? "F5" : "B5");
    const cost::OperatorEstimate e = estimator.estimate(op, chip);
    const double macs = static_cast<double>(op.gemm_flops()) / 2;
    const double hbm = cost::attention_hbm_bytes(*op.attention, chip.num_tc, chip.glb_bytes, 2);
    EXPECT_GE(e.all.latency_s, macs / hw::peak_tensor_macs_per_s(chip));
    EXPECT_GE(e.all.latency_s, hbm / chip.hbm_bandwidth);
    EXPECT_GE(e.single.latency_s, e.all.latency_s);
  }
}

TEST(AttentionCost, ScoresOnChipSaveTheirHbmEnergy) {
  // The materialised core writes the scores and probabilities to HBM and reads them back (F5, F6, F8); the
  // fused kernel does the same products and softmax without that traffic.
  const model::LayerGraph fused = llama3(true), materialised = llama3(false);
  const hw::Architecture chip = hw::tpuv4_like();
  cost::Estimator estimator;
  double apart = 0;
  for (const char* id : {"F5", "F6", "F8"})
    apart += estimator.estimate(op_of(materialised, Direction::Forward, id), chip).all.energy_j;
  const double together = estimator.estimate(op_of(fused, Direction::Forward, "F5"), chip).all.energy_j;
  // At least the 25 pJ per word of writing and reading back 32 × 4096² 16-bit scores twice (scores, probabilities).
  const double scores = 32.0 * 4096 * 4096;
  EXPECT_LT(together, apart - 2 * scores * cost::CostParams{}.hbm_energy);
}

TEST(AttentionCost, ProductsOnChipMoveNothingThroughHbm) {
  hw::TensorCoreConfig c{8, 128, 128, 256 << 10, 128ll << 20, 1.2e12, 1.05e9};
  const model::Gemm g{4096, 4096, 128, 32};
  const cost::GemmMapping off = cost::map_gemm(g, c, cost::CostParams{});
  c.on_chip = true;
  const cost::GemmMapping on = cost::map_gemm(g, c, cost::CostParams{});
  EXPECT_EQ(on.hbm_cycles, 0);
  EXPECT_GT(off.hbm_cycles, 0);
  EXPECT_LE(on.cycles, off.cycles);
  EXPECT_LT(on.energy_j, off.energy_j);
  EXPECT_GE(on.cycles, static_cast<double>(g.macs()) / (8.0 * 128 * 128));
}

}  // namespace
