#pragma once

// The tiny question of the evaluator tests: a six-layer GPT (hidden 64, 4 heads) at widths 1, 2 and 4 on 12
// devices, global batch 24, micro-batches 1 and 2, and 3 MiB, 8 MiB and 1 GiB of HBM (the smallest fits only
// some plans), both recomputation settings: 12 points per design.

#include <cstdint>

#include "model/presets.h"
#include "search/question.h"

namespace phaze::search::testing {

inline SearchQuestion tiny_question(Execution execution, PlannerChoice planner) {
  ModelCase m;
  m.source = "tiny";
  m.spec = model::megatron_gpt("tiny", "test GPT", 6, 64, 4, 64);
  m.seq = 64;
  m.widths = {1, 2, 4};
  SearchQuestion q;
  q.models = {m};
  q.devices = 12;
  q.global_batch = 24;
  q.micro_batches = {1, 2};
  q.hbm_bytes = {int64_t{3} << 20, int64_t{8} << 20, int64_t{1} << 30};
  q.execution = execution;
  q.planner = planner;
  if (execution == Execution::Megatron) q.optimizer = placement::Optimizer::Adam;
  return q;
}

}  // namespace phaze::search::testing
