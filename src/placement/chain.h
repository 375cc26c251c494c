#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost/adam_bytes.h"
#include "hw/network.h"

namespace phaze::placement {

/// One layer of the chain for one tensor-parallel width. Our pipeline uses seconds and bytes; the
/// compatibility format takes whatever units its file uses.
struct ChainNode {
  double forward_time = 0;       ///< seconds: the layer's forward pass on its device group
  double backward_time = 0;      ///< seconds: the layer's backward pass
  double parameter_bytes = 0;    ///< per device
  double activation_bytes = 0;   ///< stashed for one micro-batch, per device
  bool tensor_parallel = false;  ///< the layer is split over t devices
};

/// A dataflow edge between chain positions `from` < `to`, carrying `bytes` per micro-batch.
struct ChainEdge {
  int from = 0;
  int to = 0;
  double bytes = 0;
};

/// The layer graph of one width, its nodes in the unique topological order (every consecutive pair is
/// joined by an edge; further "skip" edges may jump ahead).
struct Chain {
  int64_t width = 1;  ///< t
  std::vector<ChainNode> nodes;
  std::vector<ChainEdge> edges;
};

/// What each byte of a device's parameters brings with it (stage_memory.h) and what the optimizer step moves.
enum class Optimizer {
  Sgd,   ///< the weights and their gradients: 2 bytes per parameter byte
  Adam,  ///< PHAZE's: also one parameter-sized copy of state, 3 bytes per parameter byte (placement.md)
  /// Megatron-LM's mixed-precision Adam with BF16 weights (cost/adam_bytes.h): FP32 gradients, master weights
  /// and two moments beside the 16-bit weights, 18 bytes per 2-byte parameter
  MixedPrecisionAdam,
};

/// Bytes a device holds per byte of its (16-bit) parameters under `optimizer`: weights, gradients, state.
/// Inline: the planners' memory tables call it for every stage.
inline double held_bytes_per_parameter_byte(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::Sgd: return 2;
    case Optimizer::Adam: return 3;
    case Optimizer::MixedPrecisionAdam: return cost::adam_bytes().total() / cost::adam_bytes().weights;
  }
  return 2;
}
/// HBM bytes the optimizer step moves per byte of a device's parameters: SGD reads weights and gradients and
/// writes weights (3); PHAZE's Adam also reads and writes its state (5); mixed-precision Adam's fused step
/// (cost::adam_step_bytes, 38 bytes per 2-byte parameter: 19).
inline double step_bytes_per_parameter_byte(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::Sgd: return 3;
    case Optimizer::Adam: return 5;
    case Optimizer::MixedPrecisionAdam: return cost::adam_step_bytes(cost::adam_bytes()) / cost::adam_bytes().weights;
  }
  return 3;
}

/// The corrected time-per-batch terms of our own pipeline (method.md, defects D22 and D3). Off by default:
/// the time per batch then follows placement.md to the bit, with the original's data-parallel term
/// 4·(d − 1)·P_first / (d·bandwidth) and no optimizer step (ReferencePlanner). On, the time per batch is
///
///     max stage load · (⌈N/d⌉ + p − 1) + sync(P_max, d) + P_max · optimizer_seconds_per_byte
///
/// where P_max is the largest per-device parameter bytes of any stage and sync is the ring all-reduce of
/// accelerator.md 7 over the d replicas, 2·(d − 1)/d · P_max / BW + 2·(d − 1)·α on the data-parallel link
/// of the plan's layout (BW its effective bandwidth, α its latency; placement/links.h; CorrectedPlanner). Every
/// stage synchronises its own gradients at the same time on its own links, so the slowest (largest) stage
/// sets both terms. Both formulas are BatchTimeModel (batch_time.h); its per-stage rules there serve the
/// stagewise planner too.
struct CorrectedTerms {
  bool enabled = false;
  /// Seconds of the element-wise optimizer update per byte of parameters held by one device, once per
  /// iteration after the gradient synchronisation. The caller derives it from the device, e.g. HBM bytes
  /// moved per parameter byte over the HBM bytes per second (or the vector cores' rate when slower): SGD
  /// reads weights and gradients and writes weights (3), Adam also reads and writes its state (5 with
  /// state the size of the parameters, as the memory model assumes; 7 with two full-size moments).
  double optimizer_seconds_per_byte = 0;
};

/// The cluster and training settings of one placement question. Two networks (hw/network.h): the one
/// carrying activations and gradients between stages, and the one carrying the data-parallel all-reduce.
/// The co-search gives both the system's network (use_network); the placement format gives each one link
/// (`bandwidth`, and `dataParallelBandwidth` with `ringLatency`). Which link of them a transfer runs on
/// follows where a plan puts its devices (placement/links.h).
struct Cluster {
  int64_t devices = 1;      ///< K
  double memory_bytes = 0;  ///< per device (M)
  hw::Network pipeline_network{{hw::NetworkTier{"link", 0, 1, 0, 1}}};
  hw::Network data_parallel_network{{hw::NetworkTier{"link", 0, 1, 0, 1}}};
  int64_t micro_batches = 1;  ///< N, micro-batches in one global batch
  bool recompute = false;     ///< recompute activations (true) or stash them
  Optimizer optimizer = Optimizer::Sgd;
  CorrectedTerms corrected;  ///< off: placement.md's reference formula
};

/// Both networks of `cluster` set to `network`.
void use_network(Cluster& cluster, const hw::Network& network);

/// The parts of a time per batch, in seconds (in the reference format: the unit of the input). Their sum
/// is the time per batch up to rounding.
struct BatchTimeParts {
  double steady_state = 0;  ///< max stage load · ⌈N/d⌉: every micro-batch of a replica through the slowest stage
  double fill_drain = 0;    ///< max stage load · (p − 1): filling and draining the pipeline
  /// Gradient all-reduce across the d replicas: the ring term with corrected terms on, else the
  /// reference's 4·(d − 1)·P_first / (d·bandwidth).
  double data_parallel_sync = 0;
  double optimizer_step = 0;  ///< 0 unless the corrected terms are on
  double total() const { return steady_state + fill_drain + data_parallel_sync + optimizer_step; }
  bool operator==(const BatchTimeParts&) const = default;
};

/// A contiguous range of chain positions [first, last) run on `devices` devices per pipeline replica.
struct Stage {
  int first = 0;
  int last = 0;
  int64_t devices = 1;
  bool operator==(const Stage&) const = default;
};

/// A placement: stages (first stage first), data-parallel degree and width, and the time per batch.
struct Plan {
  bool feasible = false;
  std::vector<Stage> stages;
  int64_t data_parallel = 0;
  int64_t width = 0;
  double time_per_batch = 0;  ///< seconds (or the unit of the input)
  BatchTimeParts parts;       ///< time_per_batch split into its terms
};

}  // namespace phaze::placement
