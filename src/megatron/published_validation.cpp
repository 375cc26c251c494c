#include "megatron/published_validation.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <optional>
#include <variant>

#include "megatron/grid_fit.h"
#include "model/layer_graph.h"
#include "util/divisors.h"
#include "util/input_error.h"

namespace phaze::megatron {

namespace {

/// The plan with every combination of its free settings that Megatron-LM accepts.
template <class Visit>
void for_each_choice(const PublishedRun& run, const DevicePricer& pricer, Visit visit) {
  const StepDevice device = pricer.step_device(run.system);
  const TrainingPlan& given = run.plan;
  const int64_t per_replica = given.global_batch / given.dp;
  std::vector<int64_t> micro_batches{given.micro_batch};
  if (run.free_micro_batch && given.global_batch % given.dp == 0) {
    micro_batches.clear();
    for (int64_t b : divisors(per_replica))
      if (b <= model::limits::kMicroBatch) micro_batches.push_back(b);
  }
  std::vector<int64_t> chunks{given.vp};
  if (run.free_interleaving) {
    chunks.clear();
    // Every count validate() may accept: the embedding and the loss can count as layers of the split.
    for (int64_t v = 1; v <= plan_limits::kChunks; ++v) chunks.push_back(v);
  }
  std::vector<Recompute> recomputes{given.recompute};
  if (run.free_recompute) recomputes = {Recompute::None, Recompute::Selective, Recompute::Full};
  for (int64_t b : micro_batches) {
    std::optional<LayerCosts> costs;
    for (int64_t v : chunks)
      for (Recompute r : recomputes) {
        TrainingPlan plan = given;
        plan.micro_batch = b;
        plan.vp = v;
        plan.recompute = r;
        try {
          validate(plan, run.spec);
        } catch (const InputError&) {
          continue;
        }
        if (!costs) costs = pricer.layer_costs(run.spec, run.system, plan);
        visit(predict_step(run.spec, device, run.system.network, plan, *costs));
      }
  }
}

double predicted_figure(const PublishedRun& run, const StepPrediction& p) {
  const double gpus = static_cast<double>(p.plan.gpus());
  switch (run.metric) {
    case PublishedMetric::IterationSeconds: return p.time.iteration_s;
    case PublishedMetric::TokensPerSecondPerGpu: return p.tokens_per_s / gpus;
    case PublishedMetric::TflopsPerGpu: break;
  }
  double flops = p.model_flop;
  if (run.flop_count == FlopCount::Hardware) flops = p.hardware_flop;
  if (run.flop_count == FlopCount::ModelFullAttention) flops = p.model_full_attention_flop;
  if (run.flop_count == FlopCount::Narayanan) flops = narayanan_flops(run.spec, p.plan);
  if (run.flop_count == FlopCount::SixN)
    flops = 6 * static_cast<double>(model::model_totals(run.spec, p.plan.seq, model::Precision{}).parameters) *
            static_cast<double>(p.plan.global_batch) * static_cast<double>(p.plan.seq);
  return flops / (p.time.iteration_s * gpus) / 1e12;
}

}  // namespace

double narayanan_flops(const model::ModelSpec& spec, const TrainingPlan& plan) {
  const double B = static_cast<double>(plan.global_batch), s = static_cast<double>(plan.seq);
  const double l = static_cast<double>(spec.num_layers), h = static_cast<double>(spec.hidden);
  const double V = static_cast<double>(model::padded_vocab(spec, plan.tp));
  return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

StepPrediction fastest_choice(const PublishedRun& run, const DevicePricer& pricer) {
  std::optional<StepPrediction> best, best_fitting;
  for_each_choice(run, pricer, [&](const StepPrediction& p) {
    if (!best || p.time.iteration_s < best->time.iteration_s) best = p;
    if (p.memory.fits && (!best_fitting || p.time.iteration_s < best_fitting->time.iteration_s)) best_fitting = p;
  });
  if (best_fitting) return *best_fitting;
  if (best) return *best;
  throw InputError(fmt::format("{}: no setting of its free options is a plan Megatron-LM accepts", run.label));
}

PublishedValidation check_published_runs(const std::vector<PublishedRun>& runs, const DevicePricer& pricer) {
  PublishedValidation out;
  out.runs.resize(runs.size());
  double sum = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    PublishedCheck& c = out.runs[i];
    c.prediction = fastest_choice(runs[i], pricer);
    c.predicted = predicted_figure(runs[i], c.prediction);
    c.error = (c.predicted - runs[i].value) / runs[i].value;
    sum += std::abs(c.error);
    if (out.priced == 0 || std::abs(c.error) > out.max_abs_error) {
      out.max_abs_error = std::abs(c.error);
      out.worst = i;
    }
    ++out.priced;
  }
  out.mean_abs_error = out.priced == 0 ? 0 : sum / static_cast<double>(out.priced);
  return out;
}

hw::System fit_gpu_on_published(const std::vector<PublishedRun>& runs) {
  const PublishedRun* first = nullptr;
  for (const PublishedRun& r : runs) {
    if (!first) first = &r;
    if (!(r.system == first->system))
      throw InputError(fmt::format("--fit: run '{}' is on system '{}', not on '{}' as the first", r.label,
                                   r.system.name, first->system.name));
  }
  if (!first) throw InputError("--fit: no run that phaze can price");
  hw::System system = first->system;
  hw::Gpu gpu = hw::gpu_of(system);
  fit_on_grid(gpu, {{&hw::Gpu::sustained_clock_share, 0.01, 30, 100}}, [&](const hw::Gpu& trial) {
    std::vector<PublishedRun> moved = runs;
    for (PublishedRun& r : moved) r.system.device = trial;
    return check_published_runs(moved).mean_abs_error;
  });
  system.device = gpu;
  return system;
}

}  // namespace phaze::megatron
