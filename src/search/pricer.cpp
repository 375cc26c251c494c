#include "search/pricer.h"

#include <fmt/format.h>

#include "search/megatron_pricer.h"
#include "search/stagewise_pricer.h"
#include "search/uniform_pricer.h"

namespace phaze::search {

std::unique_ptr<Pricer> make_pricer(const SearchQuestion& q) {
  if (q.execution == Execution::Megatron) return std::make_unique<MegatronPricer>();
  if (q.planner == PlannerChoice::Stagewise) return std::make_unique<StagewisePricer>();
  return std::make_unique<UniformPricer>();
}

PointOutcome empty_point(const hw::Design& design, int64_t hbm_bytes, int64_t b, bool rc) {
  PointOutcome p;
  p.design = design.arch;
  p.design.hbm_bytes = hbm_bytes;
  p.key = point_key(p.design, b, rc);
  p.area_um2 = design.area_um2;
  p.micro_batch = b;
  p.recompute = rc;
  return p;
}

void score_point(PointOutcome& p) {
  p.feasible = true;
  double sum = 0;
  for (const ModelOutcome& m : p.models) {
    p.feasible = p.feasible && m.feasible;
    sum += m.samples_per_s;
  }
  p.score = p.feasible ? sum / static_cast<double>(p.models.size()) : 0;
}

std::string no_plan_fits_reason(int64_t hbm_bytes, int64_t devices) {
  return fmt::format("no plan fits in {} GiB of HBM on {} devices", hbm_bytes / kGiB, devices);
}

std::string no_estimate_reason() {
  return "an operator has no finite estimate on this design at every width";
}

std::string no_estimate_at_width_reason(int64_t t) {
  return fmt::format("an operator has no finite estimate on this design at t = {}", t);
}

}  // namespace phaze::search
