#pragma once

// A published training run (docs/gpu.md, "Published runs"): the model, the system, the parallel settings
// the source gives, and the throughput it reports with the FLOP count it used. What `phaze validate
// FILE.json` predicts and compares. Settings a source leaves out (micro-batch, interleaving,
// recomputation) are free: phaze takes its fastest choice that fits.

#include <cstdint>
#include <string>

#include "hw/system.h"
#include "megatron/training_plan.h"
#include "model/model_spec.h"

namespace phaze::megatron {

/// How the source counted the FLOPs behind its TFLOP/s per GPU.
enum class FlopCount {
  Model,               ///< what the model needs, causal attention halved (Megatron-Bridge; Megatron-LM since 2025)
  ModelFullAttention,  ///< the same with every s × s attention block (Megatron-LM until 2025, NeMo 24.07)
  Hardware,            ///< what the kernels execute, recomputation included (phaze's hardware count)
  Narayanan,  ///< Narayanan et al. 2021, eq. 3: 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)), whatever the plan
  SixN,       ///< 6 FLOPs per parameter (as published, embeddings included) per token: MaxText's and PaLM's 6N
};

enum class PublishedMetric {
  TflopsPerGpu,      ///< TFLOP/s per GPU under `flop_count`
  IterationSeconds,  ///< seconds per iteration
  TokensPerSecondPerGpu,
};

struct PublishedRun {
  std::string label;
  model::ModelSpec spec;
  hw::System system;
  TrainingPlan plan;  ///< the settings given; the free ones as below
  bool free_micro_batch = false;
  bool free_interleaving = false;
  bool free_recompute = false;
  PublishedMetric metric = PublishedMetric::TflopsPerGpu;
  double value = 0;  ///< in the metric's unit (TFLOP/s = 10^12 FLOP/s)
  FlopCount flop_count = FlopCount::Model;
};

}  // namespace phaze::megatron
