#pragma once

// The result of evaluating one point of the search, and its record in the results file.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "hw/architecture.h"
#include "megatron/training_plan.h"
#include "placement/chain.h"
#include "search/design_point.h"

namespace phaze::search {

/// Forward and backward latency (seconds) and energy (joules) of one distinct layer's schedules.
struct LayerFigures {
  double forward_s = 0;
  double backward_s = 0;
  double forward_j = 0;
  double backward_j = 0;
  bool operator==(const LayerFigures&) const = default;
};

/// The settings of a plan under Megatron-LM execution beyond t, p and d (SearchQuestion::execution).
struct MegatronSettings {
  int64_t chunks = 1;  ///< model chunks per device v (interleaved 1F1B when > 1)
  bool sequence_parallel = false;
  megatron::Recompute recompute = megatron::Recompute::None;
  int64_t zero = 0;              ///< ZeRO stage (1: the distributed optimizer)
  double peak_memory_bytes = 0;  ///< of the device that needs most
  int64_t expert_parallel = 1;   ///< e: a mixture of experts' routed experts over e groups of t devices
  bool operator==(const MegatronSettings&) const = default;
};

/// One stage's own settings in a plan of the stagewise planner (SearchQuestion::planner stagewise).
struct StageSettings {
  int64_t width = 1;            ///< t of the stage
  int64_t data_parallel = 1;    ///< d of the stage
  std::vector<int> recomputed;  ///< chain positions whose forward pass the backward pass re-runs
  bool operator==(const StageSettings&) const = default;
};

/// A plan of PHAZE's planner: every stage at ModelOutcome::width, ModelOutcome::data_parallel replicas,
/// whole-stage recomputation when the point recomputes. Nothing more to say.
struct UniformSettings {
  bool operator==(const UniformSettings&) const = default;
};

/// A plan of the stagewise planner: per stage (as ModelOutcome::stages) its own width, degree and recomputed
/// layers. ModelOutcome::width and data_parallel are then the largest of the stages, and its layer figures
/// those at that width.
struct StagewiseSettings {
  std::vector<StageSettings> stages;
  bool operator==(const StagewiseSettings&) const = default;
};

/// How a model's plan runs beyond its stages, one alternative per kind of pricer (pricer.h).
using PlanSettings = std::variant<UniformSettings, StagewiseSettings, MegatronSettings>;

/// One model at one point: its best training plan over the widths, or why there is none.
struct ModelOutcome {
  bool feasible = false;
  std::string reason;  ///< when infeasible
  int64_t width = 0;   ///< t
  int64_t data_parallel = 0;
  std::vector<placement::Stage> stages;  ///< chain positions [first, last), devices per replica
  double time_per_batch_s = 0;
  placement::BatchTimeParts parts;  ///< seconds
  double samples_per_s = 0;         ///< global batch / time per batch
  double tokens_per_s = 0;          ///< samples/s · sequence length
  /// Joules per batch: the layer schedules' energies (every operator of every micro-batch on every
  /// tensor-parallel rank, with the re-forward of recomputation); link and optimizer energy not included.
  double energy_per_batch_j = 0;
  double tensor_utilisation = 0;  ///< busy tensor-core time / (cores · time) over the layer passes of a micro-batch
  double vector_utilisation = 0;
  /// Model FLOP utilisation: the training GEMM FLOPs of a batch (no re-forward) over the peak tensor-core
  /// FLOP/s of the devices in use times the time per batch.
  double flops_utilisation = 0;
  bool schedules_proven = true;  ///< every layer schedule of the chosen width is proven optimal
  /// Per distinct layer of the model (model::LayerGraph::distinct_layers) at the chosen width.
  std::vector<LayerFigures> layers;
  /// Under PHAZE's execution, per stage the bytes one of its devices holds at its peak (placement's memory
  /// model: weights, gradients, optimizer state, activations in flight); Megatron-LM's execution gives its
  /// busiest device's in MegatronSettings::peak_memory_bytes.
  std::vector<double> stage_memory_bytes;
  /// The plan's further settings. Under Megatron-LM execution its stages are p equal ones and `parts` are
  /// the busiest stage's micro-batches (steady state), the pipeline bubble (fill and drain), the exposed
  /// gradient reduction and the optimizer step.
  PlanSettings settings;
  bool operator==(const ModelOutcome&) const = default;
};

/// One point (its identity: design with cores, array, lanes, GLB and HBM size; micro-batch size;
/// recomputation setting), all models.
struct PointOutcome : PointId {
  std::string key;  ///< point_key of the identity
  double area_um2 = 0;
  bool feasible = false;  ///< every model has a plan
  double score = 0;       ///< average samples/s over the models; 0 when infeasible
  std::vector<ModelOutcome> models;
  bool operator==(const PointOutcome&) const = default;
};

/// Bytes the device that holds most holds at its peak: the largest of ModelOutcome::stage_memory_bytes, or
/// Megatron-LM's peak (0 when the outcome does not say).
double peak_memory_bytes(const ModelOutcome& model);

/// The record stored in the results file (everything but the key) and back. Doubles survive the text
/// round trip bit for bit, so an answer built from stored records equals one built from fresh ones.
nlohmann::json to_record(const PointOutcome& point);
PointOutcome from_record(const std::string& key, const nlohmann::json& record);
/// A point after the round trip through its record: fresh points and stored ones compare and print alike.
PointOutcome as_recorded(const PointOutcome& point);

/// How an answer orders points of equal score, and what its top list lists.
enum class Ranking {
  /// PHAZE's: the earlier point in canonical order (design_point.h: num_tc, num_vc, width, vc_width, depth,
  /// GLB, each from the largest down, then the smaller HBM, the smaller micro-batch, recomputation off before
  /// on), so the chip with the most cores; the top list holds one point per design (chip and HBM size).
  Canonical,
  /// An architect's: the smaller chip area first, then canonical order; the top list holds one point per chip,
  /// at its best HBM size, micro-batch and recomputation setting.
  SmallerArea,
};

/// The total order of the answer: higher score first; among equal scores the ranking's order.
bool better(const PointOutcome& a, const PointOutcome& b, Ranking ranking);
/// The same order on one model's throughput (model index `m`); a point where that model has no plan is
/// never better.
bool better_for_model(const PointOutcome& a, const PointOutcome& b, size_t m, Ranking ranking);
/// Whether two points are one entry of a top list under the ranking: the same design, or the same chip.
bool same_entry(const PointOutcome& a, const PointOutcome& b, Ranking ranking);
/// Canonical order alone (no score): the order of points in listings.
bool before(const PointOutcome& a, const PointOutcome& b);

/// The best feasible point of `points` in the answer's order (`better`), as recorded; nothing when none is
/// feasible.
std::optional<PointOutcome> best_feasible(const std::vector<PointOutcome>& points, Ranking ranking);

}  // namespace phaze::search
