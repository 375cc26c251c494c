#include "megatron/no_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "megatron/plan_space.h"
#include "util/divisors.h"

namespace phaze::megatron {

namespace {

bool pinned(const GpuPlanQuestion& q) {
  const GpuPlanQuestion free = unpinned(q);
  return q.widths != free.widths || q.pipelines != free.pipelines || q.replicas != free.replicas ||
         q.micro_batches != free.micro_batches || q.chunks != free.chunks || !q.recomputes.empty() ||
         q.zero_stages != free.zero_stages || !q.context_widths.empty();
}

/// Why the enumeration yields nothing: the first of widths, stages and batch that no candidate passes.
void divisibility(const model::ModelSpec& spec, const GpuPlanQuestion& q, NoPlanReason& out) {
  std::vector<int64_t> widths;
  for (int64_t t : divisors(q.gpus))
    if (model::splits_heads(spec, t, q.features.gspmd_sharding) && allowed(q.widths, t)) widths.push_back(t);
  if (widths.empty()) {
    out.constraints.push_back(fmt::format(
        "heads: no tensor-parallel width t{} divides both the {} GPUs and the {} attention heads ({} key/value heads)",
        q.widths.empty() ? "" : " of --tp", q.gpus, spec.heads, spec.kv_heads));
    return;
  }
  std::set<int64_t> degrees;
  bool stages = false;
  for (int64_t t : widths)
    for (int64_t p : divisors(q.gpus / t)) {
      if (spec.num_layers % p != 0 || !allowed(q.pipelines, p)) continue;
      stages = true;
      const int64_t d = q.gpus / t / p;
      if (allowed(q.replicas, d)) degrees.insert(d);
    }
  if (!stages) {
    out.constraints.push_back(
        fmt::format("layers: no pipeline stage count{} divides both the GPUs the widths leave "
                    "and the {} layers",
                    q.pipelines.empty() ? "" : " of --pp", spec.num_layers));
    return;
  }
  bool divides = false;
  for (int64_t d : degrees) divides = divides || q.global_batch % d == 0;
  if (degrees.empty() || divides) return;
  out.constraints.push_back(fmt::format(
      "batch: the global batch {} is not a multiple of any data-parallel degree the GPUs leave (d ∈ {{{}}})",
      q.global_batch, fmt::join(degrees, ", ")));
  // The nearest batch a degree divides, the smaller of equals.
  int64_t best = 0;
  for (int64_t d : degrees)
    for (int64_t b : {q.global_batch / d * d, (q.global_batch / d + 1) * d}) {
      if (b < 1) continue;
      const int64_t distance = std::llabs(b - q.global_batch), best_distance = std::llabs(best - q.global_batch);
      if (best == 0 || distance < best_distance || (distance == best_distance && b < best)) best = b;
    }
  if (best > 0) out.nearest_global_batch = best;
}

}  // namespace

GpuPlanQuestion unpinned(const GpuPlanQuestion& q) {
  GpuPlanQuestion free = q;
  free.widths.clear();
  free.pipelines.clear();
  free.replicas.clear();
  free.micro_batches.clear();
  free.chunks.clear();
  free.recomputes.clear();
  free.zero_stages = {0, 1, 2, 3};
  free.context_widths.clear();
  free.top = 1;
  return free;
}

std::string plan_line(const TrainingPlan& p) {
  std::string out = fmt::format("t {}", p.tp);
  if (p.cp > 1) out += fmt::format(" · c {}", p.cp);
  out += fmt::format(" · p {} · d {}", p.pp, p.dp);
  if (p.ep > 1) out += fmt::format(" · ep {}", p.ep);
  if (p.vp > 1) out += fmt::format(" (v {})", p.vp);
  out += fmt::format(", micro-batch {}, recompute {}", p.micro_batch, to_string(p.recompute));
  if (p.zero > 0) out += fmt::format(", ZeRO-{}", p.zero);
  if (p.fp8) out += ", FP8";
  return out;
}

NoPlanReason explain_no_plan(const model::ModelSpec& spec, const hw::System& system, const GpuPlanQuestion& q,
                             const GpuPlanAnswer& answer, const DevicePricer& pricer) {
  NoPlanReason out;
  if (answer.evaluated == 0) divisibility(spec, q, out);
  if (answer.least_memory) {
    const StepMemory& m = answer.least_memory->memory;
    out.constraints.push_back(fmt::format(
        "memory: the configuration that needs least, {}, needs {:.2f} GiB of a device's {:.2f} GiB (with {:.2f} GiB "
        "kept free)",
        plan_line(answer.least_memory->plan), m.peak_bytes / 1073741824.0,
        static_cast<double>(m.capacity_bytes) / 1073741824.0,
        static_cast<double>(answer.least_memory->plan.memory_reserve_bytes) / 1073741824.0));
  }
  if (pinned(q)) {
    const GpuPlanAnswer free = search_gpu_plans(spec, system, unpinned(q), pricer);
    if (!free.best.empty()) out.without_pins = free.best.front();
  }
  if (out.constraints.empty())
    out.constraints.push_back("settings: no configuration Megatron-LM accepts has the settings given");
  // The least GPU count that fits, the question otherwise unchanged (its pins kept).
  GpuPlanQuestion base = q;
  base.top = 1;
  std::set<int64_t> counts;
  for (int64_t g = (q.gpus / 8 + 1) * 8; g <= 64 * q.gpus && counts.size() < 48; g += 8) counts.insert(g);
  for (int64_t g = 1; g <= 64 * q.gpus; g *= 2)
    if (g > q.gpus) counts.insert(g);
  for (int64_t g : counts) {
    if (g > plan_limits::kGpus) break;
    if (!hw::sizable(system.network, g)) continue;  // no slice of a torus has g devices
    GpuPlanQuestion more = base;
    more.gpus = g;
    if (!search_gpu_plans(spec, system, more, pricer).best.empty()) {
      out.least_gpus = g;
      break;
    }
  }
  return out;
}

}  // namespace phaze::megatron
