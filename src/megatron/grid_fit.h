#pragma once

// The fit of a GPU's software figures (docs/gpu.md, "Calibration"): coordinate descent on a grid. Each
// figure walks from its current grid point one step at a time, each way, while the error falls; rounds
// repeat until a full round improves nothing. Deterministic: the same start and data give the same figures.

#include <functional>
#include <vector>

#include "hw/gpu.h"

namespace phaze::megatron {

/// One fitted figure: its grid is step · [low, high].
struct FitAxis {
  double hw::Gpu::*field;
  double step;
  int low, high;
};

/// The three figures a fit on whole iterations moves: tensor and memory efficiency in steps of 0.01 in
/// [0.3, 1], the launch time in steps of 0.5 µs in [0, 200 µs].
const std::vector<FitAxis>& iteration_fit_axes();

/// Moves `gpu`'s figures along `axes` (first onto the grid) to a local minimum of `error(gpu)`.
void fit_on_grid(hw::Gpu& gpu, const std::vector<FitAxis>& axes, const std::function<double(const hw::Gpu&)>& error);

}  // namespace phaze::megatron
