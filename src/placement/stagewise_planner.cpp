#include "placement/stagewise_planner.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "placement/links.h"
#include "placement/stage_costs.h"
#include "placement/stage_memory.h"

namespace phaze::placement {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
/// A factor that takes a sum of up to 2^20 positive doubles below the exact sum whatever the order of the
/// additions (relative rounding error at most 2^20 · 2^-53).
constexpr double kBelowRounding = 1.0 - 0x1p-30;

void check_input(const std::vector<Chain>& chains, const Cluster& cluster) {
  if (!cluster.corrected.enabled)
    throw std::invalid_argument("placement: the stagewise planner prices plans with the corrected terms only");
  if (chains.empty()) throw std::invalid_argument("placement: the stagewise planner needs at least one chain");
  for (const Chain& c : chains) {
    if (c.nodes.size() != chains.front().nodes.size())
      throw std::invalid_argument("placement: the stagewise planner needs chains of equal length");
    if (c.edges.size() + 1 != c.nodes.size() && !c.nodes.empty())
      throw std::invalid_argument("placement: the stagewise planner needs pure chains");
    for (size_t k = 0; k < c.edges.size(); ++k)
      if (c.edges[k].from != static_cast<int>(k) || c.edges[k].to != static_cast<int>(k) + 1)
        throw std::invalid_argument("placement: the stagewise planner needs pure chains");
  }
}

/// The positions' options of a stage [i, j) of `chain`, swept from i (tracked: with their layers).
void sweep(RecomputeFrontier& frontier, const Chain& chain, int i, int j, bool allowed, bool track) {
  frontier.start(allowed, track);
  for (int v = i; v < j; ++v) {
    const ChainNode& node = chain.nodes[static_cast<size_t>(v)];
    frontier.add(v, node.forward_time, node.activation_bytes, input_bytes(chain, v));
  }
}

/// The first option (least re-forward) that fits with `in_flight` micro-batches, or options.size().
size_t first_fitting(const std::vector<RecomputeOption>& options, double params, double acts, int64_t in_flight,
                     const Cluster& cluster) {
  size_t o = 0;
  while (o < options.size() && max_in_flight(StageFootprint{params, acts, options[o].stash_bytes}, cluster) < in_flight)
    ++o;
  return o;
}

/// Whether positions u and v hold the same layer with the same input bytes in every chain.
bool same_position(const std::vector<Chain>& chains, int u, int v) {
  for (const Chain& c : chains) {
    const ChainNode &a = c.nodes[static_cast<size_t>(u)], &b = c.nodes[static_cast<size_t>(v)];
    if (a.forward_time != b.forward_time || a.backward_time != b.backward_time ||
        a.parameter_bytes != b.parameter_bytes || a.activation_bytes != b.activation_bytes ||
        a.tensor_parallel != b.tensor_parallel)
      return false;
    if ((u == 0) != (v == 0)) return false;
    if (u > 0 && c.edges[static_cast<size_t>(u - 1)].bytes != c.edges[static_cast<size_t>(v - 1)].bytes) return false;
  }
  return true;
}

/// Whether the stages ending at j1 and j2 hand the same bytes to the next stage in every chain (none at n).
bool same_end(const std::vector<Chain>& chains, int j1, int j2, int n) {
  if ((j1 == n) != (j2 == n)) return false;
  if (j1 == n) return true;
  for (const Chain& c : chains)
    if (c.edges[static_cast<size_t>(j1 - 1)].bytes != c.edges[static_cast<size_t>(j2 - 1)].bytes) return false;
  return true;
}

/// `stages` priced by the one evaluator, each stage's load set from it; infeasible (and `reason` set) when
/// they do not fit.
StagewisePlan priced(std::vector<StagewiseStage> stages, const std::vector<Chain>& chains, const Cluster& cluster,
                     std::string* reason = nullptr) {
  StagewisePlan plan;
  const StagewiseCheck check = evaluate_stagewise(chains, stages, cluster);
  if (!check.feasible) {
    if (reason) *reason = check.reason;
    return plan;
  }
  plan.stages = std::move(stages);
  for (size_t k = 0; k < plan.stages.size(); ++k) {
    plan.stages[k].load_s = check.loads_s[k];
    plan.stages[k].memory_bytes = check.memory_bytes[k];
  }
  plan.feasible = true;
  plan.time_per_batch = check.time_per_batch;
  plan.parts = check.parts;
  return plan;
}

}  // namespace

void StagewisePlanner::build_tables(const std::vector<Chain>& chains, const Cluster& cluster) {
  const size_t widths = chains.size(), n = static_cast<size_t>(n_);
  // Stage [i, j) is stage [i − 1, j − 1) shifted when positions i − 1 .. j − 1 hold one repeated layer and
  // both end with the same boundary: the same computation on the same values, so the same figures, bit for bit.
  std::vector<int> same_to(n);  // the last position of the run of identical positions from v
  for (int v = n_ - 1; v >= 0; --v)
    same_to[static_cast<size_t>(v)] =
        v + 1 < n_ && same_position(chains, v, v + 1) ? same_to[static_cast<size_t>(v) + 1] : v;
  kind_.assign(n * (n + 1), 0);
  kinds_ = 0;
  std::vector<char> first_of_kind(n * (n + 1), 0);
  for (int i = 0; i < n_; ++i)
    for (int j = i + 1; j <= n_; ++j) {
      const size_t cell = static_cast<size_t>(i) * (n + 1) + static_cast<size_t>(j);
      if (i >= 1 && same_to[static_cast<size_t>(i - 1)] >= j - 1 && same_end(chains, j - 1, j, n_)) {
        kind_[cell] = kind_[cell - (n + 1) - 1];
      } else {
        kind_[cell] = static_cast<uint32_t>(kinds_++);
        first_of_kind[cell] = 1;
      }
    }

  loads_.assign(widths * static_cast<size_t>(max_stages_) * kinds_, kInfinity);
  params_.assign(widths * kinds_, 0.0);
  stage_devices_.assign(widths * kinds_, 0);
  work_.assign(widths * n, 0.0);
  for (size_t w = 0; w < widths; ++w)
    for (size_t v = 0; v < n; ++v)
      work_[w * n + v] = chains[w].nodes[v].forward_time + chains[w].nodes[v].backward_time;
  StageCosts costs;
  std::vector<int64_t> fits;  // per option: the most micro-batches in flight it allows
  for (size_t w = 0; w < widths; ++w) {
    const Chain& chain = chains[w];
    costs.compute(chain, cluster);
    for (int i = 0; i < n_; ++i) {
      // Rows without a new kind need no sweep.
      bool any_new = false;
      for (int j = i + 1; j <= n_ && !any_new; ++j)
        any_new = first_of_kind[static_cast<size_t>(i) * (n + 1) + static_cast<size_t>(j)];
      if (!any_new) continue;
      frontier_.start(cluster.recompute, false);
      double acts = 0;
      for (int j = i + 1; j <= n_; ++j) {
        const ChainNode& node = chain.nodes[static_cast<size_t>(j - 1)];
        frontier_.add(j - 1, node.forward_time, node.activation_bytes, input_bytes(chain, j - 1));
        acts += node.activation_bytes;
        const std::vector<RecomputeOption>& options = frontier_.options();
        fits.clear();
        const double params = costs.parameter_bytes(i, j);
        for (const RecomputeOption& o : options)
          fits.push_back(max_in_flight(StageFootprint{params, acts, o.stash_bytes}, cluster));
        if (fits.back() < 1) break;  // not even alone: a longer stage only holds more
        if (!first_of_kind[static_cast<size_t>(i) * (n + 1) + static_cast<size_t>(j)]) continue;
        const size_t k = kind(i, j);
        params_[w * kinds_ + k] = params;
        stage_devices_[w * kinds_ + k] = costs.devices(i, j);
        const double forward = costs.forward_finish(i, j), backward = costs.backward_finish(i, j);
        const double backward_sum = costs.backward_sum(i, j);
        size_t o = 0;
        for (int64_t m = 1; m <= max_stages_; ++m) {
          while (o < options.size() && fits[o] < m) ++o;
          if (o == options.size()) break;
          loads_[(w * static_cast<size_t>(max_stages_) + static_cast<size_t>(m - 1)) * kinds_ + k] =
              forward + std::max(backward, backward_sum + options[o].reforward_s);
        }
      }
    }
  }
}

int64_t StagewisePlanner::slots(double theta, double load, int64_t p) const {
  const int64_t N = micro_batches_;
  if (load <= 0) return N;
  const double ratio = theta / load;
  if (ratio >= static_cast<double>(N + p)) return N;
  int64_t q = ratio >= 1 ? static_cast<int64_t>(ratio) - (p - 1) : 0;  // ⌊ratio⌋ − (p − 1), then exact
  if (q < 0) q = 0;
  while (q >= 1 && static_cast<double>(q + p - 1) * load > theta) --q;
  while (q < N && static_cast<double>(q + p) * load <= theta) ++q;
  return q;
}

int64_t StagewisePlanner::degree_of(int64_t q) const {
  return q == 0 ? 0 : (micro_batches_ + q - 1) / q;
}

int64_t StagewisePlanner::least_degree(double theta, double load, int64_t p) const {
  return degree_of(slots(theta, load, p));
}

double StagewisePlanner::degree_change(int64_t q, double load, int64_t p) const {
  const int64_t d = degree_of(q);
  if (d == 1) return kInfinity;
  // The first q' with ⌈N/q'⌉ < d (q' = 1 when no q fits yet).
  const int64_t next = d == 0 ? 1 : (micro_batches_ + d - 2) / (d - 1);
  return static_cast<double>(next + p - 1) * load;
}

void StagewisePlanner::insert_pareto(std::vector<Label>& front, const Label& l) {
  // The front lists devices ascending with S strictly descending. A label no better than the one with the
  // most devices not above its own is dominated (an equal pair generated earlier stays).
  auto at = std::upper_bound(front.begin(), front.end(), l.devices,
                             [](int64_t devices, const Label& f) { return devices < f.devices; });
  if (at != front.begin() && std::prev(at)->sync <= l.sync) return;
  auto end = at;
  while (end != front.end() && end->sync >= l.sync) ++end;
  if (end == at) {
    front.insert(at, l);
  } else {
    *at = l;
    front.erase(at + 1, end);
  }
}

const StagewisePlanner::Label& StagewisePlanner::label(int64_t s, int i, int k) const {
  const size_t cell = static_cast<size_t>(s) * (static_cast<size_t>(n_) + 1) + static_cast<size_t>(i);
  return last_pareto_ ? cells_[cell][static_cast<size_t>(k)] : single_[cell];
}

void StagewisePlanner::reset_cells(int64_t p, bool pareto) {
  const size_t row = static_cast<size_t>(n_) + 1, used = static_cast<size_t>(p + 1) * row;
  if (pareto) {
    if (cells_.size() < used) cells_.resize(used);
    for (size_t k = 0; k < used; ++k) cells_[k].clear();
    cells_[static_cast<size_t>(n_)].push_back(Label{0, 0.0, n_, -1, -1});
  } else {
    single_.assign(used, kNoLabel);
    single_[static_cast<size_t>(n_)] = Label{0, 0.0, n_, -1, -1};
  }
}

double StagewisePlanner::stage_sync_s(size_t cell, int64_t d) const {
  // The stage's d copies of its devices side by side (placement/links.h).
  return sync_->total_s(params_[cell], d, ring_link(cluster_, d, stage_devices_[cell]));
}

int StagewisePlanner::run(int64_t p, double theta, bool pareto, double sync_cap) {
  ++programs_;
  last_pareto_ = pareto;
  const int n = n_;
  const size_t row = static_cast<size_t>(n) + 1;
  reset_cells(p, pareto);
  const size_t widths = params_.size() / kinds_;
  double next_change = kInfinity;
  for (int64_t s = 1; s <= p; ++s) {
    // Cells [i, n) in s stages with p − s stages before them, each of one position at least.
    for (int i = n - static_cast<int>(s); i >= static_cast<int>(p - s); --i) {
      scratch_.clear();
      Label best = kNoLabel;
      for (size_t w = 0; w < widths; ++w) {
        const double* work = &work_[w * static_cast<size_t>(n)];
        const double* loads = &loads_[(w * static_cast<size_t>(max_stages_) + static_cast<size_t>(s - 1)) * kinds_];
        const uint32_t* kinds = &kind_[static_cast<size_t>(i) * row];
        double stage_work = 0;
        for (int j = i + 1; j <= n - static_cast<int>(s) + 1; ++j) {
          // Longer stages only need more: a lower bound on the load of [i, j') for every j' ≥ j (the sum of
          // its forward and backward times, lowered past any rounding) gives a lower bound on their devices.
          stage_work += work[j - 1];
          const double floor = stage_work * kBelowRounding;
          const int64_t least_q = slots(theta, floor, p);
          const size_t cell = w * kinds_ + kinds[j];
          if (least_q == 0 || stage_devices_[cell] * degree_of(least_q) + (s - 1) > devices_) {
            // Until the bound's own degree falls, no stage from here on can enter.
            next_change = std::min(next_change, degree_change(least_q, floor, p));
            break;
          }
          const double L = loads[kinds[j]];
          if (L == kInfinity) break;  // does not fit with s in flight; longer stages neither
          const int64_t q = slots(theta, L, p);
          // The next change of this stage's degree comes at q + 1 slots at the earliest.
          if (static_cast<double>(q + p) * L < next_change) next_change = std::min(next_change, degree_change(q, L, p));
          if (q == 0) continue;
          const int64_t d = degree_of(q);
          const int64_t devices = stage_devices_[cell] * d;
          const size_t rest_cell = static_cast<size_t>(s - 1) * row + static_cast<size_t>(j);
          if (!pareto) {
            const Label& rest = single_[rest_cell];
            if (devices + rest.devices > devices_) continue;
            const double sync = stage_sync_s(cell, d);
            const Label l{devices + rest.devices, std::max(sync, rest.sync), j, static_cast<int>(w), 0};
            if (l.devices < best.devices || (l.devices == best.devices && l.sync < best.sync)) best = l;
            continue;
          }
          const std::vector<Label>& rest = cells_[rest_cell];
          if (rest.empty() || devices + rest[0].devices > devices_) continue;
          const double sync = stage_sync_s(cell, d);
          if (sync >= sync_cap) continue;
          // Rest labels come by devices up and S down; once their S is below this stage's, the rest only adds
          // devices. The stages before this cell need p − s devices at least.
          for (size_t c = 0; c < rest.size() && devices + rest[c].devices <= devices_ - (p - s); ++c) {
            insert_pareto(scratch_, Label{devices + rest[c].devices, std::max(sync, rest[c].sync), j,
                                          static_cast<int>(w), static_cast<int>(c)});
            if (rest[c].sync <= sync) break;
          }
        }
      }
      const size_t out_cell = static_cast<size_t>(s) * row + static_cast<size_t>(i);
      if (!pareto) {
        single_[out_cell] = best;
        continue;
      }
      cells_[out_cell].swap(scratch_);
    }
  }
  next_change_ = next_change;
  if (!pareto) return single_[static_cast<size_t>(p) * row].child >= 0 ? 0 : -1;
  const std::vector<Label>& top = cells_[static_cast<size_t>(p) * row];
  return top.empty() ? -1 : static_cast<int>(top.size()) - 1;
}

std::vector<int> StagewisePlanner::recomputed_layers(const Chain& chain, int i, int j, int64_t in_flight, double params,
                                                     const Cluster& cluster) {
  sweep(frontier_, chain, i, j, cluster.recompute, true);
  double acts = 0;
  for (int v = i; v < j; ++v) acts += chain.nodes[static_cast<size_t>(v)].activation_bytes;
  const std::vector<RecomputeOption>& options = frontier_.options();
  return options[first_fitting(options, params, acts, in_flight, cluster)].layers;
}

StagewiseStage StagewisePlanner::make_stage(const std::vector<Chain>& chains, size_t w, int i, int j, int64_t in_flight,
                                            int64_t degree, const Cluster& cluster) {
  StagewiseStage stage;
  stage.first = i;
  stage.last = j;
  stage.chain = w;
  stage.width = chains[w].width;
  stage.devices = stage_devices_[at(w, i, j)];
  stage.data_parallel = degree;
  stage.load_s = load(w, in_flight, i, j);
  stage.parameter_bytes = params_[at(w, i, j)];
  stage.recomputed = recomputed_layers(chains[w], i, j, in_flight, stage.parameter_bytes, cluster);
  return stage;
}

StagewisePlan StagewisePlanner::plan_of(int64_t p, double theta, int label, const std::vector<Chain>& chains,
                                        const Cluster& cluster) {
  std::vector<StagewiseStage> stages;
  int i = 0;
  for (int64_t s = p; s > 0; --s) {
    const Label& l = this->label(s, i, label);
    const auto w = static_cast<size_t>(l.chain);
    stages.push_back(make_stage(chains, w, i, l.next, s, least_degree(theta, load(w, s, i, l.next), p), cluster));
    i = l.next;
    label = l.child;
  }
  std::string reason;
  StagewisePlan plan = priced(stages, chains, cluster, &reason);
  if (!plan.feasible) throw std::logic_error("placement: the stagewise planner built an infeasible plan: " + reason);
  for (size_t k = 0; k < stages.size(); ++k)
    if (plan.stages[k].load_s != stages[k].load_s)
      throw std::logic_error("placement: the stagewise planner's stage load disagrees with its evaluation");
  return plan;
}

void StagewisePlanner::prepare(const std::vector<Chain>& chains, const Cluster& cluster) {
  check_input(chains, cluster);
  programs_ = 0;
  n_ = static_cast<int>(chains.front().nodes.size());
  max_stages_ = 0;
  if (n_ == 0) return;
  devices_ = cluster.devices;
  micro_batches_ = cluster.micro_batches;
  max_stages_ = std::min<int64_t>(n_, devices_);
  sync_.emplace(cluster);
  cluster_ = cluster;
  build_tables(chains, cluster);
}

bool StagewisePlanner::feasible(const std::vector<Chain>& chains, const Cluster& cluster) {
  prepare(chains, cluster);
  for (int64_t p = 1; p <= max_stages_; ++p)
    if (run(p, kInfinity, false, kInfinity) >= 0) return true;
  return false;
}

StagewisePlan StagewisePlanner::replay(const StagewisePlan& hint, const std::vector<Chain>& chains,
                                       const Cluster& cluster) {
  std::vector<StagewiseStage> stages;
  const auto p = static_cast<int64_t>(hint.stages.size());
  for (size_t k = 0; k < hint.stages.size(); ++k) {
    const StagewiseStage& h = hint.stages[k];
    if (h.chain >= chains.size() || h.first < 0 || h.first >= h.last || h.last > n_ || p > max_stages_) return {};
    const int64_t in_flight = p - static_cast<int64_t>(k);
    if (load(h.chain, in_flight, h.first, h.last) == kInfinity) return {};
    stages.push_back(make_stage(chains, h.chain, h.first, h.last, in_flight, h.data_parallel, cluster));
  }
  return priced(std::move(stages), chains, cluster);
}

StagewisePlan StagewisePlanner::solve(const std::vector<Chain>& chains, const Cluster& cluster,
                                      const std::vector<StagewisePlan>& hints) {
  prepare(chains, cluster);
  StagewisePlan best;
  if (n_ == 0) return best;

  // PHAZE's plan, in this form, is the first incumbent.
  const Plan uniform = uniform_.solve(chains, cluster);
  if (uniform.feasible) {
    size_t w = 0;
    while (chains[w].width != uniform.width) ++w;
    std::vector<StagewiseStage> stages;
    for (size_t k = 0; k < uniform.stages.size(); ++k) {
      const Stage& s = uniform.stages[k];
      stages.push_back({s.first,
                        s.last,
                        w,
                        uniform.width,
                        s.devices,
                        uniform.data_parallel,
                        {},
                        0,
                        params_[at(w, s.first, s.last)]});
      if (cluster.recompute && k + 1 < uniform.stages.size())
        for (int v = s.first; v < s.last; ++v) stages.back().recomputed.push_back(v);
    }
    std::string reason;
    best = priced(std::move(stages), chains, cluster, &reason);
    if (!best.feasible) throw std::logic_error("placement: PHAZE's plan fails the stagewise evaluation: " + reason);
  }
  // A hint replayed here (its stages with this question's recomputation) may be a better incumbent.
  for (const StagewisePlan& hint : hints) {
    if (!hint.feasible) continue;
    StagewisePlan plan = replay(hint, chains, cluster);
    if (plan.feasible && (!best.feasible || plan.time_per_batch < best.time_per_batch)) best = std::move(plan);
  }

  // The plan of the last run's label at threshold θ: kept when strictly faster. Returns the plan's own
  // first term A (≤ θ: the plan is feasible at A too, with the same S) and S.
  struct Found {
    double a = 0, sync = 0, next_change = 0;
  };
  auto take = [&](int64_t p, double theta, int label) {
    Found f;
    f.sync = this->label(p, 0, label).sync;
    f.next_change = next_change_;
    int i = 0, k = label;
    for (int64_t s = p; s > 0; --s) {
      const Label& l = this->label(s, i, k);
      const double L = load(static_cast<size_t>(l.chain), s, i, l.next);
      const int64_t d = least_degree(theta, L, p);
      f.a = std::max(f.a, static_cast<double>(pipeline_slots(micro_batches_, d, p)) * L);
      i = l.next;
      k = l.child;
    }
    // The plan is built (and checked) only when it wins: the time model sums the same terms the same way.
    if (!best.feasible || f.a + f.sync < best.time_per_batch) {
      StagewisePlan plan = plan_of(p, theta, label, chains, cluster);
      if (plan.time_per_batch != f.a + f.sync)
        throw std::logic_error("placement: the stagewise planner's time disagrees with its evaluation");
      best = std::move(plan);
    }
    return f;
  };
  // Pareto runs drop partial plans whose S is at least `cap`: such a plan cannot beat the incumbent.
  auto evaluate = [&](int64_t p, double theta, double cap) -> std::optional<Found> {
    const int label = run(p, theta, true, cap);
    if (label < 0) return std::nullopt;
    return take(p, theta, label);
  };
  // g(θ), the least S of a plan with A ≤ θ, falls as θ grows; g is constant from a found plan's own A up to
  // the next change of a degree. On [a, b] every time is at least a + g(b); g(a) = ga when known (NaN: not).
  // `floor` is θ*(p): no plan of p stages has A below it, so S must stay below best − floor.
  std::function<void(int64_t, double, double, double, double, double)> refine = [&](int64_t p, double a, double ga,
                                                                                    double b, double gb, double floor) {
    if (a + gb >= best.time_per_batch || ga == gb) return;
    const double mid = a + (b - a) / 2;
    if (!(mid > a && mid < b)) return;
    const auto found = evaluate(p, mid, best.time_per_batch - floor);
    const double after = next_change_;
    if (found && found->a > a) refine(p, a, ga, found->a, found->sync, floor);
    // Without a plan at mid nothing up to mid can win either (g only falls as θ grows).
    if (after < b) refine(p, after, found ? found->sync : std::numeric_limits<double>::quiet_NaN(), b, gb, floor);
  };

  // First every stage count's least threshold θ*(p) and the least S above it; then, least bound first, the
  // thresholds between them where a smaller S can pay for a larger A.
  struct Candidate {
    int64_t p = 0;
    double theta = 0, g_theta = 0, top_a = 0, g_top = 0;
  };
  std::vector<Candidate> candidates;
  double guess = -1;  // θ* of the last stage count: a good first probe for the next
  // Stage counts outward from PHAZE's plan's: the best plans tend to lie near it, and an early good incumbent
  // lets the first check drop most of the others.
  std::vector<int64_t> order;
  const int64_t centre = best.feasible ? static_cast<int64_t>(best.stages.size()) : 1;
  for (int64_t step = 0; static_cast<int64_t>(order.size()) < max_stages_; ++step)
    for (int64_t p : {centre + step, centre - step - 1})
      if (p >= 1 && p <= max_stages_) order.push_back(p);
  for (const int64_t p : order) {
    const double ceiling = best.feasible ? best.time_per_batch : kInfinity;
    // Can p stages reach A ≤ the incumbent at all?
    if (run(p, ceiling, false, kInfinity) < 0) continue;
    // A plan that beats the incumbent has S ≥ g(ceiling), so A < ceiling − g(ceiling).
    const auto top = evaluate(p, ceiling, kInfinity);
    if (!top) continue;  // cannot happen: the feasibility run found a plan
    const double below = ceiling - top->sync;
    const int start = run(p, below, false, kInfinity);
    if (start < 0) continue;
    // The least feasible threshold θ*: every threshold below `lo` is infeasible, `hi` is feasible. No plan
    // of p stages beats lo + g(ceiling).
    double lo = 0, hi = take(p, below, start).a;
    while (lo < hi && lo + top->sync < best.time_per_batch) {
      double mid = lo + (hi - lo) / 2;
      if (guess > lo && guess < hi) mid = guess;
      guess = -1;
      if (mid >= hi) mid = lo;  // adjacent doubles
      const int label = run(p, mid, false, kInfinity);
      if (label < 0) {
        lo = next_change_;  // infeasible up to the next change of a degree, which is above mid
      } else {
        hi = take(p, mid, label).a;  // at most mid
      }
    }
    if (lo < hi) continue;  // cannot win
    guess = hi;
    const auto low = evaluate(p, hi, kInfinity);
    if (low && top->sync < low->sync) candidates.push_back({p, hi, low->sync, top->a, top->sync});
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& x, const Candidate& y) { return x.theta + x.g_top < y.theta + y.g_top; });
  for (const Candidate& c : candidates) {
    if (c.theta + c.g_top >= best.time_per_batch) break;
    refine(c.p, c.theta, c.g_theta, c.top_a, c.g_top, c.theta);
  }
  return best;
}

}  // namespace phaze::placement
