#pragma once

#include <vector>

#include "cost/cost_params.h"
#include "hw/architecture.h"
#include "model/operator_graph.h"

namespace phaze::cost {

/// Cost of vector work on `config.cores` vector cores (accelerator.md 6.3).
struct VectorCost {
  double compute_cycles = 0;  ///< Σ passes (cost per element × ⌈n / lanes⌉) + per-row costs
  double memory_cycles = 0;   ///< bytes moved / HBM bytes per cycle
  double cycles = 0;          ///< the larger of the two
  double energy_j = 0;
};

/// Cycles per element (and per row, for row-wise kinds) of one pass, by kind and direction.
struct PassCost {
  double per_element = 0;
  double per_row = 0;
};
PassCost pass_cost(model::VectorKind kind, model::Direction direction);

/// Compute cycles of passes over `lanes` lanes (no memory bound).
double vector_compute_cycles(const std::vector<model::VectorPass>& passes, int64_t lanes);

/// A standalone vector operator: its passes over the lanes of the used cores, bounded below by moving
/// `bytes_moved` bytes from and to HBM.
VectorCost vector_cost(const std::vector<model::VectorPass>& passes, double bytes_moved,
                       const hw::VectorCoreConfig& config, const CostParams& params);

/// Ring all-reduce of `bytes` over `ranks` ranks: 2·(t − 1)/t · bytes / bandwidth + 2·(t − 1)·α seconds.
double all_reduce_seconds(double bytes, int64_t ranks, double bandwidth, double alpha_s);

}  // namespace phaze::cost
