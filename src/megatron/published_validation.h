#pragma once

// Predictions against published runs (docs/gpu.md, "Published runs"): each run's free settings at phaze's
// fastest choice that fits, its throughput in the source's own unit and FLOP count, and the error; and the
// fit of a GPU's software figures on such runs (only on the calibration set an issue names).

#include <cstddef>
#include <vector>

#include "hw/system.h"
#include "megatron/published_run.h"
#include "megatron/training_step.h"

namespace phaze::megatron {

struct PublishedCheck {
  StepPrediction prediction;  ///< at the fastest choice of the free settings
  double predicted = 0;       ///< in the run's metric and FLOP count
  double error = 0;           ///< (predicted − published) / published
};

struct PublishedValidation {
  std::vector<PublishedCheck> runs;  ///< in input order
  size_t priced = 0;                 ///< runs priced: all of them
  double mean_abs_error = 0;
  double max_abs_error = 0;
  size_t worst = 0;  ///< index of the priced run with the largest |error|
};

/// FLOPs of one iteration by Narayanan et al. 2021, eq. 3: 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)), V the
/// vocabulary as Megatron-LM pads it at the plan's t.
double narayanan_flops(const model::ModelSpec& spec, const TrainingPlan& plan);

/// The run predicted with its free settings (micro-batch, interleaving, recomputation) at the fastest
/// choice that fits; the fastest of all when none fits.
StepPrediction fastest_choice(const PublishedRun& run, const DevicePricer& pricer = gpu_pricer());

/// Every run predicted (its system's device priced by `pricer`) against its published figure.
PublishedValidation check_published_runs(const std::vector<PublishedRun>& runs,
                                         const DevicePricer& pricer = gpu_pricer());

/// The GPU's sustained clock share (steps of 0.01 in [0.3, 1]) that minimises the mean absolute error on the
/// runs, by grid_fit.h from the system's own: whole runs fit what kernels measured one at a time cannot show,
/// the kernel figures stay. Every run must be on the system of the first (InputError otherwise). Returns that
/// system with the fitted GPU.
hw::System fit_gpu_on_published(const std::vector<PublishedRun>& runs);

}  // namespace phaze::megatron
