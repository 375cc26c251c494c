#include "search/question.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <set>

#include "hw/architecture_json.h"
#include "hw/area.h"
#include "util/input_error.h"

namespace phaze::search {

namespace {

bool is_power_of_two(int64_t v) {
  return v > 0 && std::has_single_bit(static_cast<uint64_t>(v));
}

template <typename T>
void require_distinct(const std::vector<T>& values, const char* option) {
  std::set<T> seen;
  for (const T& v : values)
    if (!seen.insert(v).second) throw InputError(fmt::format("{} {}: value given twice", option, v));
}

void check_filter(const std::vector<int64_t>& values, const char* option, int64_t lowest, int64_t highest,
                  int64_t unit = 1) {
  for (int64_t v : values)
    if (!is_power_of_two(v) || v < lowest || v > highest)
      throw InputError(
          fmt::format("{} {}: must be a power of two from {} to {}", option, v / unit, lowest / unit, highest / unit));
  require_distinct(values, option);
}

/// The range spanned by a filter's values, or the given range when the filter is empty.
hw::PowerOfTwoRange narrowed(const std::vector<int64_t>& values, const hw::PowerOfTwoRange& range) {
  if (values.empty()) return range;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return {std::max(*lo, range.min), std::min(*hi, range.max)};
}

/// A chip given whole (SearchQuestion::chip) within the bounds of an architecture file: checked by the file's
/// own reader, the one rule of those bounds (hw/architecture_json.h).
void validate_chip(const hw::Architecture& a) {
  hw::architecture_from_json(nlohmann::json::parse(hw::architecture_file_json(a).dump()), "--arch " + a.name);
}

bool admits(const std::vector<int64_t>& values, int64_t v) {
  return values.empty() || std::find(values.begin(), values.end(), v) != values.end();
}

}  // namespace

model::Shape layer_shape(const SearchQuestion& q, const ModelCase& m, int64_t b, int64_t t, int64_t e) {
  model::Shape shape{m.seq, b, t, e};
  shape.fused_attention = q.fused_attention;
  return shape;
}

std::vector<bool> recompute_values(RecomputeChoice choice) {
  switch (choice) {
    case RecomputeChoice::On: return {true};
    case RecomputeChoice::Off: return {false};
    case RecomputeChoice::Both: break;
  }
  return {false, true};
}

size_t ModelCase::layout_index(int64_t t, int64_t e) const {
  const auto wi = static_cast<size_t>(std::find(widths.begin(), widths.end(), t) - widths.begin());
  const auto ei = static_cast<size_t>(std::find(expert_widths.begin(), expert_widths.end(), e) - expert_widths.begin());
  return wi * expert_widths.size() + ei;
}

std::vector<int64_t> default_widths(const model::ModelSpec& spec) {
  std::vector<int64_t> out;
  for (int64_t t = 1; t <= 8; t *= 2)
    if (model::splits_heads(spec, t, false) && spec.ffn % t == 0) out.push_back(t);
  return out;
}

void validate(const SearchQuestion& q) {
  if (q.models.empty()) throw InputError("--model: give at least one model");
  if (q.chip) {
    const DesignFilter& f = q.filter;
    if (!f.num_tc.empty() || !f.num_vc.empty() || !f.width.empty() || !f.depth.empty() || !f.glb_bytes.empty())
      throw InputError("--arch: one chip is evaluated; the --tc/--vc/--width/--depth/--glb-mib filters do not apply");
    validate_chip(*q.chip);
  }
  if (q.devices <= 0 || q.devices > limits::kDevices)
    throw InputError(fmt::format("--devices {}: must be an integer from 1 to {}", q.devices, limits::kDevices));
  if (q.global_batch <= 0 || q.global_batch > limits::kGlobalBatch)
    throw InputError(
        fmt::format("--global-batch {}: must be an integer from 1 to {}", q.global_batch, limits::kGlobalBatch));
  for (const ModelCase& m : q.models) {
    if (m.seq <= 0) throw InputError(fmt::format("--seq {}: must be a positive integer ({})", m.seq, m.source));
    if (m.widths.empty()) throw InputError(fmt::format("--tp: no tensor-parallel width for {}", m.source));
    require_distinct(m.widths, "--tp");
    for (int64_t t : m.widths) {
      if (t <= 0) throw InputError(fmt::format("--tp {}: must be a positive integer", t));
      if (t > q.devices)
        throw InputError(fmt::format("--tp {}: wider than the {} devices of the cluster", t, q.devices));
      // Names the model, the field and the value when t does not divide the heads or the FFN size, or the
      // sequence is longer than the learned positions.
      model::validate(m.spec, model::Shape{m.seq, 1, t}, m.source);
    }
    if (m.expert_widths.empty()) throw InputError(fmt::format("--ep: no expert-parallel width for {}", m.source));
    require_distinct(m.expert_widths, "--ep");
    for (int64_t e : m.expert_widths) {
      if (e <= 0 || e > model::limits::kExperts)
        throw InputError(fmt::format("--ep {}: must be an integer from 1 to {}", e, model::limits::kExperts));
      if (e == 1) continue;
      if (!m.spec.moe()) throw InputError(fmt::format("--ep {}: {} has no experts", e, m.source));
      if (q.execution != Execution::Megatron)
        throw InputError(fmt::format("--ep {}: expert parallelism in the co-search needs --execution megatron", e));
      if (m.spec.experts % e != 0)
        throw InputError(fmt::format("--ep {}: does not divide the {} experts of {}", e, m.spec.experts, m.source));
      // e groups of t devices divide the t·p·d devices of Megatron-LM's layout for some width t.
      if (std::none_of(m.widths.begin(), m.widths.end(), [&](int64_t t) { return q.devices % (t * e) == 0; }))
        throw InputError(
            fmt::format("--ep {}: no width t of --tp gives t × {} dividing the {} devices", e, e, q.devices));
    }
  }
  if (q.micro_batches.empty()) throw InputError("--mbs: give at least one micro-batch size");
  require_distinct(q.micro_batches, "--mbs");
  for (int64_t b : q.micro_batches) {
    if (b <= 0) throw InputError(fmt::format("--mbs {}: must be a positive integer", b));
    if (q.global_batch % b != 0)
      throw InputError(fmt::format("--mbs {}: does not divide the global batch of {}", b, q.global_batch));
    // Tokens per micro-batch (seq · mbs) within model::limits, for every model.
    for (const ModelCase& m : q.models) model::validate(m.spec, model::Shape{m.seq, b, m.widths.front()}, m.source);
  }
  if (q.schedule_node_budget < 0 || q.schedule_node_budget > limits::kScheduleNodes)
    throw InputError(fmt::format("--schedule-nodes {}: must be a number of search nodes from 1 to {} (0: the default)",
                                 q.schedule_node_budget, limits::kScheduleNodes));
  if (q.stop_window < 1 || q.stop_window > limits::kStopWindow)
    throw InputError(
        fmt::format("--stop-window {}: must be a number of buckets from 1 to {}", q.stop_window, limits::kStopWindow));
  if (!(std::isfinite(q.bucket_um2) && q.bucket_um2 > 0 && q.bucket_um2 <= limits::kAreaUm2))
    throw InputError(fmt::format("--bucket-um2 {}: must be a positive finite area in µm²", q.bucket_um2));
  if (q.hbm_bytes.empty()) throw InputError("--hbm: give at least one HBM size");
  require_distinct(q.hbm_bytes, "--hbm");
  for (int64_t bytes : q.hbm_bytes)
    if (bytes <= 0 || bytes > limits::kHbmGiB * kGiB)
      throw InputError(
          fmt::format("--hbm {} bytes: must be a positive size of at most {:g} GiB", bytes, limits::kHbmGiB));
  if (q.execution == Execution::Megatron && q.optimizer != placement::Optimizer::MixedPrecisionAdam)
    throw InputError(fmt::format(
        "--optimizer {}: --execution megatron trains with Megatron-LM's mixed-precision Adam; give --optimizer adam",
        q.optimizer == placement::Optimizer::Sgd ? "sgd" : "adam-phaze"));
  if (q.planner == PlannerChoice::Stagewise)
    for (const ModelCase& m : q.models)
      if (m.spec.num_layers > limits::kStagewiseLayers)
        throw InputError(fmt::format("--planner stagewise: model {} has {} layers, at most {} allowed", m.source,
                                     m.spec.num_layers, limits::kStagewiseLayers));
  if (q.planner == PlannerChoice::Stagewise && q.execution != Execution::Phaze)
    throw InputError(
        "--planner stagewise: plans PHAZE's execution; Megatron-LM's has equal stages (drop --execution megatron)");
  if (q.overlap_dp && q.execution != Execution::Megatron)
    throw InputError("--overlap-dp: needs --execution megatron (PHAZE's placement reduces after the backward pass)");
  hw::validate(q.network, "the search's network");
  (void)devices_network(q);
  check_filter(q.filter.num_tc, "--tc", 1, 4096);
  check_filter(q.filter.num_vc, "--vc", 1, 4096);
  check_filter(q.filter.width, "--width", 2, 256);
  check_filter(q.filter.depth, "--depth", 2, 256);
  check_filter(q.filter.glb_bytes, "--glb-mib", 2ll << 20, 128ll << 20, 1ll << 20);
  if (q.space.budget_um2 &&
      !(std::isfinite(*q.space.budget_um2) && *q.space.budget_um2 >= 0 && *q.space.budget_um2 <= limits::kAreaUm2))
    throw InputError(fmt::format("--budget-um2 {}: must be a finite number ≥ 0", *q.space.budget_um2));
  if (!(q.space.lower_fraction >= 0 && q.space.lower_fraction <= 1))
    throw InputError(fmt::format("--lower-fraction {}: must lie in [0, 1]", q.space.lower_fraction));
  hw::validate(enumeration_options(q));
}

hw::EnumerationOptions enumeration_options(const SearchQuestion& q) {
  hw::EnumerationOptions o = q.space;
  o.num_tc = narrowed(q.filter.num_tc, o.num_tc);
  o.num_vc = narrowed(q.filter.num_vc, o.num_vc);
  o.width = narrowed(q.filter.width, o.width);
  o.depth = narrowed(q.filter.depth, o.depth);
  o.glb_bytes = narrowed(q.filter.glb_bytes, o.glb_bytes);
  if (q.chip) o.base = *q.chip;
  return o;
}

std::vector<hw::Design> search_designs(const SearchQuestion& q) {
  if (q.chip) return {hw::Design{*q.chip, hw::area_um2(*q.chip, q.space.core_overheads)}};
  std::vector<hw::Design> designs = hw::enumerate_designs(enumeration_options(q));
  const DesignFilter& f = q.filter;
  std::erase_if(designs, [&](const hw::Design& d) {
    const hw::Architecture& a = d.arch;
    return !(admits(f.num_tc, a.num_tc) && admits(f.num_vc, a.num_vc) && admits(f.width, a.tc_width) &&
             admits(f.depth, a.tc_depth) && admits(f.glb_bytes, a.glb_bytes));
  });
  if (designs.empty()) {
    // A budget under 1 mm² fits no chip: it was most likely meant in mm².
    const hw::EnumerationOptions space = enumeration_options(q);
    const double budget = space.budget_um2 ? *space.budget_um2 : hw::default_area_budget_um2(space.core_overheads);
    const std::string unit = budget < 1e6
                                 ? fmt::format(
                                       "; the budget of {:g} µm² is {:g} mm², smaller than any chip: for {:g} mm² give "
                                       "--budget-mm2 {:g}",
                                       budget, budget * 1e-6, budget, budget)
                                 : "";
    throw InputError(
        "design space: no design of the template lies within the area budget and the --tc/--vc/--width/--depth/"
        "--glb-mib restrictions" +
        unit);
  }
  return designs;
}

hw::Network devices_network(const SearchQuestion& q) {
  return hw::sized_network(q.network, q.devices,
                           fmt::format("--devices {} on the search's network (another: --system or --link-bandwidth)",
                                       q.devices));
}

}  // namespace phaze::search
