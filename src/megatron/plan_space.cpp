#include "megatron/plan_space.h"

#include <algorithm>

#include "util/divisors.h"

namespace phaze::megatron {

bool allowed(const std::vector<int64_t>& list, int64_t x) {
  return list.empty() || std::find(list.begin(), list.end(), x) != list.end();
}

namespace {

struct ExpertLayout {
  int64_t ep = 1, etp = 0;  ///< as TrainingPlan's: etp 0 is the attention's t
};

/// The expert layouts of a stage of `gpus` = t · c · d GPUs, in (ep, etp) order: every ep of the space dividing
/// the experts and every etp of the space dividing the expert FFN, ep · etp dividing the GPUs; (1, t) alone for
/// a dense model. An etp equal to t is written 0 and matches 0 or t in the space's list.
std::vector<ExpertLayout> expert_layouts(const model::ModelSpec& spec, const PlanSpace& space, int64_t t,
                                         int64_t gpus) {
  if (!spec.moe()) return {ExpertLayout{}};
  std::vector<ExpertLayout> out;
  for (int64_t ep : divisors(gpus)) {
    if (spec.experts % ep != 0 || !allowed(space.expert_widths, ep)) continue;
    for (int64_t etp : divisors(gpus / ep)) {
      if (spec.expert_ffn % etp != 0) continue;
      const int64_t written = etp == t ? 0 : etp;
      if (!allowed(space.expert_tensor_widths, written) && !allowed(space.expert_tensor_widths, etp)) continue;
      out.push_back({ep, written});
    }
  }
  return out;
}

}  // namespace

void for_each_megatron_plan(const model::ModelSpec& spec, const PlanSpace& space,
                            const std::function<void(const megatron::TrainingPlan&)>& visit) {
  megatron::TrainingPlan plan = space.features;
  plan.global_batch = space.global_batch;
  plan.seq = space.seq;
  for (int64_t t : divisors(space.devices)) {
    if (!model::splits_heads(spec, t, space.features.gspmd_sharding) || !allowed(space.widths, t)) continue;
    for (int64_t c : space.context_widths) {
      if ((space.devices / t) % c != 0) continue;
      plan.tp = t;
      plan.cp = c;
      plan.sequence_parallel = false;
      if (!context_parallel_refusal(plan, spec).empty()) continue;
      for (int64_t p : divisors(space.devices / t / c)) {
        const int64_t L = spec.num_layers;
        // The embedding and the loss counted in the split: L + 2 slots, each end stage keeping a layer.
        const bool counted_split = space.try_split_accounting && p > 1 && (L + 2) % p == 0 && (L + 2) / p >= 2;
        if (L % p != 0 && !counted_split) continue;
        const int64_t d = space.devices / t / c / p;
        if (space.global_batch % d != 0 || !allowed(space.pipelines, p) || !allowed(space.replicas, d)) continue;
        for (const ExpertLayout& experts : expert_layouts(spec, space, t, t * c * d)) {
          plan.ep = experts.ep;
          plan.etp = experts.etp;
          for (int64_t b : divisors(space.global_batch / d)) {
            if (b > model::limits::kMicroBatch) break;
            if (!allowed(space.micro_batches, b)) continue;
            const int64_t m = space.global_batch / (b * d);
            for (bool sp : {false, true}) {
              // GSPMD's sharding may split along the hidden size where the sequence does not divide (validate's rule).
              const bool splits = space.seq % t == 0 || (space.features.gspmd_sharding && spec.hidden % t == 0);
              if (sp && (t == 1 || !splits)) continue;
              if (!sp && t > 1 && spec.moe()) continue;  // Megatron-Core's experts need sequence parallelism
              plan.tp = t;
              plan.cp = c;
              plan.sequence_parallel = sp;
              if (!context_parallel_refusal(plan, spec).empty()) continue;
              plan.pp = p;
              plan.dp = d;
              plan.micro_batch = b;
              plan.tp_comm_overlap = sp && space.features.tp_comm_overlap;
              for (bool counted : {false, true}) {
                if (counted ? !counted_split : L % p != 0) continue;
                plan.embedding_in_pipeline_split = plan.loss_in_pipeline_split = counted;
                for (int64_t v : divisors(plan.split_slots(L) / p)) {
                  if (v > 1 && (p == 1 || m % p != 0 || v > megatron::plan_limits::kChunks)) continue;
                  if (!allowed(space.chunks, v)) continue;
                  // Two stages of L/2 + 1 slots, each a layer short: the even split unless interleaved.
                  if (counted && p == 2 && v == 1) continue;
                  plan.vp = v;
                  for (megatron::Recompute r : space.recomputes) {
                    plan.recompute = r;
                    plan.overlap_moe_comm =
                        space.features.overlap_moe_comm && experts.ep > 1 && r != megatron::Recompute::Full;
                    for (int64_t zero : space.zero_stages) {
                      if (zero > 0 && d * c == 1) continue;
                      plan.zero = zero;
                      plan.zero_group = zero > 0 ? space.features.zero_group : 0;
                      if (plan.zero_group > 0 && (d * c) % plan.zero_group != 0) continue;
                      plan.overlap_param_gather = zero > 0 && space.features.overlap_param_gather;
                      if (!space.try_fp8) {
                        visit(plan);
                        continue;
                      }
                      for (bool fp8 : {false, true}) {
                        if (fp8 && !plan.bf16) continue;  // Transformer Engine's FP8 recipe is BF16's
                        plan.fp8 = fp8;
                        plan.fp8_param_gather = fp8 && space.features.fp8_param_gather;
                        visit(plan);
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace phaze::megatron
