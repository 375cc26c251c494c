#include "search/gpu_plan_search.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace phaze::search {

namespace {

using placement::Recompute;
using placement::TrainingPlan;

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t k = 1; k * k <= n; ++k)
    if (n % k == 0) {
      out.push_back(k);
      if (k != n / k) out.push_back(n / k);
    }
  std::sort(out.begin(), out.end());
  return out;
}

/// Keeps the `top` fastest fitting predictions, earlier ones first among equal times.
class TopList {
 public:
  explicit TopList(size_t top) : top_(top) {}
  void offer(placement::StepPrediction p) {
    const auto at =
        std::upper_bound(list_.begin(), list_.end(), p.time.iteration_s,
                         [](double t, const placement::StepPrediction& q) { return t < q.time.iteration_s; });
    if (static_cast<size_t>(at - list_.begin()) >= top_) return;
    list_.insert(at, std::move(p));
    if (list_.size() > top_) list_.pop_back();
  }
  std::vector<placement::StepPrediction> take() { return std::move(list_); }

 private:
  size_t top_;
  std::vector<placement::StepPrediction> list_;
};

}  // namespace

GpuPlanAnswer search_gpu_plans(const model::ModelSpec& spec, const hw::System& system, const GpuPlanQuestion& q) {
  GpuPlanAnswer answer;
  TopList top(q.top);
  for (int64_t t : divisors(q.gpus)) {
    if (spec.heads % t != 0 || spec.kv_heads % t != 0) continue;
    for (int64_t p : divisors(q.gpus / t)) {
      if (spec.num_layers % p != 0) continue;
      const int64_t d = q.gpus / t / p;
      if (q.global_batch % d != 0) continue;
      for (int64_t b : divisors(q.global_batch / d)) {
        if (b > model::limits::kMicroBatch) break;
        const int64_t m = q.global_batch / (b * d);
        for (bool sp : {false, true}) {
          if (sp && (t == 1 || q.seq % t != 0)) continue;
          TrainingPlan plan;
          plan.tp = t;
          plan.pp = p;
          plan.dp = d;
          plan.micro_batch = b;
          plan.global_batch = q.global_batch;
          plan.seq = q.seq;
          plan.sequence_parallel = sp;
          plan.overlap_dp = q.overlap_dp;
          plan.flash_attention = q.flash_attention;
          const placement::LayerCosts costs = placement::layer_costs(spec, system, plan);
          for (int64_t v : divisors(spec.num_layers / p)) {
            if (v > 1 && (p == 1 || m % p != 0 || v > placement::plan_limits::kChunks)) continue;
            plan.vp = v;
            for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
              plan.recompute = r;
              for (bool dist : {false, true}) {
                if (dist && d == 1) continue;
                plan.distributed_optimizer = dist;
                placement::StepPrediction prediction = placement::predict_step(spec, system, plan, costs);
                ++answer.evaluated;
                if (!prediction.memory.fits) continue;
                ++answer.fitting;
                top.offer(std::move(prediction));
              }
            }
          }
        }
      }
    }
  }
  answer.best = top.take();
  return answer;
}

}  // namespace phaze::search
