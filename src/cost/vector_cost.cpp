#include "cost/vector_cost.h"

#include <algorithm>

namespace phaze::cost {

using model::Direction;
using model::VectorKind;

PassCost pass_cost(VectorKind kind, Direction direction) {
  // accelerator.md 6.3: built from the original's primitive costs (LUT, ADD, MUL 1; DIV 10); every pass
  // pays for itself on its own element count.
  const bool fwd = direction == Direction::Forward;
  switch (kind) {
    case VectorKind::Add:
    case VectorKind::Mul:
    case VectorKind::Scale:
    case VectorKind::BiasAdd:
    case VectorKind::BiasGrad:
    case VectorKind::Mask:
    case VectorKind::Relu:
    case VectorKind::Max: return {1, 0};
    case VectorKind::Dropout: return {fwd ? 2.0 : 1.0, 0};
    case VectorKind::Gelu:
    case VectorKind::Log: return {fwd ? 2.0 : 3.0, 0};
    case VectorKind::Tanh: return {fwd ? 27.0 : 2.0, 0};
    case VectorKind::SwiGlu: return {fwd ? 3.0 : 5.0, 0};
    case VectorKind::Rope: return {4, 0};
    case VectorKind::LayerNorm: return fwd ? PassCost{5, 35} : PassCost{10, 20};
    case VectorKind::RmsNorm: return fwd ? PassCost{3, 25} : PassCost{7, 10};
    case VectorKind::Softmax: return fwd ? PassCost{5, 10} : PassCost{4, 0};
    case VectorKind::CrossEntropy: return fwd ? PassCost{6, 10} : PassCost{2, 0};
    case VectorKind::Gather: return {0, 0};
    case VectorKind::ScatterAdd: return {fwd ? 0.0 : 1.0, 0};
    case VectorKind::TopK: return {1, 0};  // the pass's elements count every sweep
    case VectorKind::Sigmoid: return {fwd ? 2.0 : 2.0, 0};
    case VectorKind::Exp: return {2, 0};  // subtract and LUT; backward subtract and multiply
  }
  return {1, 0};
}

double vector_compute_cycles(const std::vector<model::VectorPass>& passes, int64_t lanes) {
  double cycles = 0;
  for (const model::VectorPass& p : passes) {
    const PassCost c = pass_cost(p.kind, p.direction);
    const int64_t element_tiles = (p.elements + lanes - 1) / lanes;
    cycles += c.per_element * static_cast<double>(element_tiles);
    if (c.per_row > 0 && p.row_length > 0) {
      const int64_t rows = (p.elements + p.row_length - 1) / p.row_length;
      cycles += c.per_row * static_cast<double>((rows + lanes - 1) / lanes);
    }
  }
  return cycles;
}

VectorCost vector_cost(const std::vector<model::VectorPass>& passes, double bytes_moved,
                       const hw::VectorCoreConfig& config, const CostParams& params) {
  VectorCost cost;
  const int64_t lanes = config.lanes * config.cores;
  cost.compute_cycles = vector_compute_cycles(passes, lanes);
  const double hbm_bytes_per_cycle = config.hbm_bandwidth / config.clock_hz;
  cost.memory_cycles = bytes_moved / hbm_bytes_per_cycle;
  cost.cycles = std::max(cost.compute_cycles, cost.memory_cycles);
  double lane_ops = 0;
  for (const model::VectorPass& p : passes) {
    const PassCost c = pass_cost(p.kind, p.direction);
    lane_ops += c.per_element * static_cast<double>(p.elements);
    if (p.row_length > 0) lane_ops += c.per_row * static_cast<double>(p.elements / p.row_length);
  }
  const double words = bytes_moved / 2.0;
  cost.energy_j = lane_ops * params.lane_op_energy + words * (params.hbm_energy + params.sram_energy);
  return cost;
}

double all_reduce_seconds(double bytes, int64_t ranks, double bandwidth, double alpha_s) {
  if (ranks <= 1) return 0;
  const double t = static_cast<double>(ranks);
  return 2.0 * (t - 1.0) / t * bytes / bandwidth + 2.0 * (t - 1.0) * alpha_s;
}

}  // namespace phaze::cost
