#pragma once

// Training iterations as timelines (io/chrome_trace.h): one track per pipeline stage and one for what
// follows the pipeline. The time models price an iteration as the critical stage's micro-batches (the steady
// state), the fill and drain of the other stages, then the gradients' synchronisation and the optimizer
// step; the timeline lays them out that way: each micro-batch one slot (the steady state over the critical
// stage's micro-batches), stage k starting k fill steps (the fill and drain over p − 1) after the first, and
// the synchronisation and the optimizer step after the pipeline. The last event ends at the iteration's time.
// A stage with more than kTracedMicroBatches micro-batches shows the first and the last half of that many one
// by one and the others as one event.

#include <cstdint>
#include <string>
#include <vector>

#include "io/chrome_trace.h"
#include "megatron/training_step.h"
#include "search/point.h"
#include "search/question.h"

namespace phaze::io {

inline constexpr int64_t kTracedMicroBatches = 64;

/// The best point of a co-search, one timeline per model with a plan there.
std::vector<Timeline> best_point_timelines(const search::SearchQuestion& question, const search::PointOutcome& point);

/// The best point's main transformer layer of each model with a plan, its forward and its backward pass,
/// scheduled again on the point's design at the plan's width and micro-batch with the search's solver: one
/// timeline per pass, one track per core (io/schedule_trace.h). The makespans are the layer latencies of the
/// answer.
std::vector<Timeline> best_point_layer_timelines(const search::SearchQuestion& question,
                                                 const search::PointOutcome& point);

/// A Megatron-LM iteration as `phaze predict` prices it: `name` the process's name.
Timeline prediction_timeline(const std::string& name, const megatron::StepPrediction& prediction);

}  // namespace phaze::io
