#include "search/point_row.h"

namespace phaze::search {

PointRow row_of(const PointOutcome& p) {
  PointRow row;
  row.design = design_values(p.design);
  row.area_um2 = p.area_um2;
  row.micro_batch = p.micro_batch;
  row.recompute = p.recompute;
  row.feasible = p.feasible;
  row.score = p.score;
  for (const ModelOutcome& m : p.models)
    row.models.push_back({m.feasible, m.width, static_cast<int64_t>(m.stages.size()), m.data_parallel,
                          m.time_per_batch_s, m.samples_per_s, m.energy_per_batch_j});
  return row;
}

PointOutcome outline_of(const PointRow& row) {
  PointOutcome p;
  set_design_values(p.design, row.design);
  p.micro_batch = row.micro_batch;
  p.recompute = row.recompute;
  p.key = point_key(p);
  p.area_um2 = row.area_um2;
  p.feasible = row.feasible;
  p.score = row.score;
  for (const ModelRow& m : row.models) {
    ModelOutcome& o = p.models.emplace_back();
    o.feasible = m.feasible;
    o.samples_per_s = m.samples_per_s;
    o.energy_per_batch_j = m.energy_per_batch_j;
  }
  return p;
}

bool before(const PointRow& a, const PointRow& b) {
  return canonical_before(a.design, a.micro_batch, a.recompute, b.design, b.micro_batch, b.recompute);
}

}  // namespace phaze::search
