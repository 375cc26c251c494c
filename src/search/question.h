#pragma once

// What a search answers: the models, the cluster and training settings, and the design space. Everything
// here determines the answer; how the search runs (threads, files, progress) is elsewhere (driver.h).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/enumerate.h"
#include "hw/network.h"
#include "hw/system.h"
#include "model/model_spec.h"
#include "placement/chain.h"
#include "search/point.h"

namespace phaze::search {

/// One model of the workload set.
struct ModelCase {
  std::string source;  ///< preset name or config.json path as given
  model::ModelSpec spec;
  int64_t seq = 0;              ///< tokens per sequence
  std::vector<int64_t> widths;  ///< tensor-parallel widths t tried, ascending
  /// Expert-parallel widths e tried with every t, ascending: a mixture of experts' routed experts split over e
  /// groups of t devices, t apart, their tokens exchanged by all-to-all on the network (Megatron-LM execution
  /// only; {1} otherwise).
  std::vector<int64_t> expert_widths{1};
  /// The (t, e) layouts of the layer graphs built per micro-batch, t-major: the i-th width's e-th expert width
  /// at i · |expert_widths| + e. With expert_widths {1} it is the width's own index.
  size_t layouts() const { return widths.size() * expert_widths.size(); }
  size_t layout_index(int64_t t, int64_t e) const;
};

/// Optional lists restricting the enumerated designs to these values (empty: no restriction). Sizes in
/// cores, PEs / lanes and bytes.
struct DesignFilter {
  std::vector<int64_t> num_tc, num_vc, width, depth, glb_bytes;
};

enum class RecomputeChoice { Both, On, Off };

/// How a training iteration runs on the searched accelerators.
enum class Execution {
  /// PHAZE's placement (placement.md): contiguous stages of any sizes on a chain of layers, 1F1B fill and
  /// drain, the corrected data-parallel and optimizer terms, the question's optimizer and its memory model.
  Phaze,
  /// Megatron-LM's (docs/gpu.md, "Execution"), the model `phaze predict` validates on GPU clusters: equal
  /// stages, 1F1B and interleaved 1F1B, sequence parallelism, selective or full recomputation, distributed
  /// optimizer, mixed-precision Adam with its memory; every configuration tried per point.
  Megatron,
};

/// Which placement planner prices each point under PHAZE's execution.
enum class PlannerChoice {
  /// PHAZE's (placement/corrected_planner.h): one width and one data-parallel degree for the whole pipeline,
  /// recomputation of whole stages or none.
  Phaze,
  /// The stagewise planner, with Piper's generality (placement/stagewise_planner.h): each stage its own width
  /// and degree, each layer its own recomputation choice, under the same time per batch; never slower than
  /// PHAZE's plan. `--planner piper` is its other name.
  Stagewise,
};

inline constexpr double kGiB = 1073741824.0;

/// Search nodes per layer schedule in a search that names no budget: a quarter of the exact solver's own
/// default (which `phaze schedule` keeps). A search schedules thousands of layer passes and few need more:
/// 18 of about 4,500 in the Llama-2-7B default search, 8 of which stay unproven at the solver's default
/// too, which makes that search take 1.6 times as long (docs/method.md, stage 4).
inline constexpr int64_t kSearchScheduleNodes = 1'000'000;

/// Largest accepted values of the search's settings (docs/limits.md); validate() checks them.
namespace limits {
inline constexpr int64_t kDevices = int64_t{1} << 20;        ///< accelerators in the cluster
inline constexpr int64_t kGlobalBatch = int64_t{1} << 24;    ///< sequences per iteration
inline constexpr double kHbmGiB = 1048576;                   ///< HBM capacity, GiB (1 PiB)
inline constexpr double kLinkGiBs = 1e6;                     ///< link bandwidth, GiB/s
inline constexpr double kAreaUm2 = hw::kMaxBudgetUm2;        ///< area budget and bucket width, µm² (1 m²)
inline constexpr int64_t kStopWindow = 10000;                ///< buckets in the stop rule's window
inline constexpr int64_t kScheduleNodes = int64_t{1} << 40;  ///< search nodes per layer schedule
inline constexpr int64_t kThreads = 1024;                    ///< worker threads
inline constexpr int64_t kTop = 100000;                      ///< points in the top list
/// Transformer layers of a model planned by the stagewise planner (--planner stagewise), whose tables grow with
/// the square of the layers and the stage counts, and its table sweeps with their cube.
inline constexpr int64_t kStagewiseLayers = 512;
}  // namespace limits

/// When the search stops. Exact: every point is evaluated or left out by a bound that proves it cannot enter
/// the answer, so the answer and the top list are the optimum. Buckets: PHAZE's area-bucket rule of method.md
/// 7 (search/buckets.h): per outer combination the designs are visited by area bucket, largest first, until
/// the maxima of the last `stop_window` buckets with a feasible design are non-increasing; a heuristic whose
/// answer can miss the optimum.
enum class StopRule { Exact, Buckets };

/// The search question. Defaults are those of the original evaluation (method.md 4), with micro-batches
/// 1, 2, 4, 8, and the exact stop rule.
struct SearchQuestion {
  std::vector<ModelCase> models;
  int64_t devices = 1024;       ///< K, accelerators in the cluster
  int64_t global_batch = 4096;  ///< sequences per iteration
  std::vector<int64_t> micro_batches{1, 2, 4, 8};
  std::vector<int64_t> hbm_bytes{32ll << 30, 64ll << 30, 80ll << 30};  ///< HBM capacities tried
  RecomputeChoice recompute = RecomputeChoice::Both;
  /// The network joining the devices (hw/network.h): tensor-parallel collectives run on the tier their group
  /// spans, pipeline sends and the data-parallel all-reduce on the tier spanning the whole cluster. Default:
  /// the tpuv4-like system's one 4 GiB/s link (--link-bandwidth sets a one-tier network, --system another).
  hw::Network network = hw::tpuv4_like_system().network;
  /// GPU clusters priced beside the designs (--baseline): each model's fastest Megatron-LM configuration on the
  /// question's devices, global batch and sequence (baselines.h, GpuBaseline). Empty: none.
  std::vector<hw::System> gpu_baselines;
  placement::Optimizer optimizer = placement::Optimizer::Sgd;
  Execution execution = Execution::Phaze;
  PlannerChoice planner = PlannerChoice::Phaze;  ///< under PHAZE's execution only
  /// Megatron-LM execution: the gradient reduction overlaps the backward pass (else it follows it).
  bool overlap_dp = false;
  hw::EnumerationOptions space;  ///< area budget, lower fraction, ranges; `base` is set from the settings above
  DesignFilter filter;
  StopRule stop_rule = StopRule::Exact;
  /// Under StopRule::Buckets: buckets with a feasible design in the stop rule's window (D23: a parameter).
  int64_t stop_window = 5;
  double bucket_um2 = 10'000;  ///< width of an area bucket, µm² (0.01 mm²)
  /// Search nodes each layer schedule may use before the best schedule found is taken unproven
  /// (kSearchScheduleNodes when 0). Part of the run identity: it can change answers.
  int64_t schedule_node_budget = 0;
  /// The attention core as one fused kernel (model::Shape::fused_attention); false: materialised, as PHAZE.
  bool fused_attention = false;
  /// How points of equal score rank and what the top list lists (point.h).
  Ranking ranking = Ranking::Canonical;
  /// The one chip of the space (phaze evaluate): its own per-core SRAMs, HBM bandwidth and clock, which need
  /// not lie in the template; the area budget, the template's ranges and the filters do not apply. Nothing:
  /// the enumerated space.
  std::optional<hw::Architecture> chip;
};

/// The shape of the layer graph of model `m` at micro-batch b, tensor-parallel width t and expert-parallel
/// width e under the question's settings.
model::Shape layer_shape(const SearchQuestion& q, const ModelCase& m, int64_t b, int64_t t, int64_t e = 1);

/// The recomputation settings tried, off before on.
std::vector<bool> recompute_values(RecomputeChoice choice);

/// Default tensor-parallel widths of a model: every power of two up to 8 that divides the attention heads,
/// the key/value heads and the FFN size.
std::vector<int64_t> default_widths(const model::ModelSpec& spec);

/// Checks the question (InputError naming the option and the value): models and their widths and sequence
/// lengths, positive counts, micro-batches dividing the global batch, positive finite sizes and bandwidths,
/// filter values that are powers of two inside the template, no duplicates; Megatron-LM execution with Adam,
/// data-parallel overlap only with it.
void validate(const SearchQuestion& question);

/// The question's network as its devices use it (hw::sized_network: a torus's slice of q.devices).
hw::Network devices_network(const SearchQuestion& question);

/// The designs searched, in canonical order (hw/enumerate.h), filtered, or the question's chip alone; the HBM
/// size of each is set per point. Throws InputError when the space is empty.
std::vector<hw::Design> search_designs(const SearchQuestion& question);

/// The enumeration options actually used: the question's, with the ranges narrowed to the filters; with a
/// chip, its architecture as the base (the bandwidth, clock and per-core SRAMs of every point).
hw::EnumerationOptions enumeration_options(const SearchQuestion& question);

}  // namespace phaze::search
