// Lower bounds of the exact solver's branch and bound on every completion of a partial schedule.
//
// Bounds: the latest start so far plus the longest remaining chain of fastest variants; per core type,
// the remaining core-time on top of when each core becomes free; the remaining collectives on the link;
// the time that parallel tasks (which run alone) and single-core work leave no way around, for all
// remaining tasks and for the remaining ancestors of each collective followed by what comes after it;
// and, near the incumbent, the integral packing of single-core runs on the cores.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "schedule/exact_search.h"

namespace phaze::schedule::detail {

namespace {

/// Sets of at most this many tasks get the exclusive-time bound split at each of their tasks.
constexpr int kSplitTasks = 16;

/// ... and a task is split at only when at most this many tasks of the set are incomparable with it.
constexpr int kSplitFreeTasks = 3;

/// Tasks the packing bound runs parallel at most, one after another, before it gives up.
constexpr int kPackingDepth = 3;

/// Slots of the table of packing_proves answers per parallel set (a power of two, well above the sets of up to
/// kPackingDepth of 64 tasks that one call can reach in practice: about C(20, 3) for 20 parallel tasks).
constexpr size_t kPackingMemoSlots = 1 << 12;

/// Task sets whose exclusive-time bound is kept (about 64 bytes each).
constexpr size_t kExclusiveMemoLimit = 1 << 20;

/// The mixes of the exclusive-time bound: α shares the single-core work between the core types, γ the work
/// term with the chain term, and which flow weighs the chains (0: a longest chain, 1: even split).
struct Mix {
  double alpha, gamma;
  int flow;
};
constexpr Mix kMixes[] = {{0.5, 0.0, 0}, {0.5, 0.0, 1}, {1.0, 1.0, 0}, {0.0, 1.0, 0},
                          {1.0, 0.5, 1}, {0.0, 0.5, 1}, {0.5, 0.5, 1}};

// The value kept for `set`, computed and kept on first use (the memo is emptied when full: bounded memory).
template <typename Compute>
double remember(SetTable<double>& memo, uint64_t set, Compute compute) {
  if (const double* known = memo.find(set)) return *known;
  const double value = compute();
  if (memo.size() >= kExclusiveMemoLimit) memo.clear();
  memo.insert(set, value);
  return value;
}

}  // namespace

double ExactSearch::lower_bound(uint64_t done, double last_start) const {
  double bound = makespan_;
  // Chains: every unscheduled task starts no earlier than last_start and after its predecessors.
  std::vector<double>& est = est_;
  est.assign(n_, 0);
  for (int s = 0; s < n_; ++s) {
    if (done >> s & 1) continue;
    double e = last_start;
    for (int pr : q_.preds[s]) e = std::max(e, (done >> pr & 1) ? finish_[pr] : est[pr] + q_.fastest[pr]);
    est[s] = e;
    bound = std::max(bound, e + q_.tail[s]);
  }
  // Core-time per type on top of when each core becomes free.
  double busy_tc = 0, busy_vc = 0;
  for (const Group& g : groups_) {
    if (g.kind & kTc) busy_tc += static_cast<double>(g.count) * std::max(g.tc_free - last_start, 0.0);
    if (g.kind & kVc) busy_vc += static_cast<double>(g.count) * std::max(g.vc_free - last_start, 0.0);
  }
  const double n_tc = static_cast<double>(p_.tensor_cores), n_vc = static_cast<double>(p_.vector_cores);
  if (remaining_tc_ > 0) bound = std::max(bound, last_start + (remaining_tc_ + busy_tc) / n_tc);
  if (remaining_vc_ > 0) bound = std::max(bound, last_start + (remaining_vc_ + busy_vc) / n_vc);
  if (!p_.overlap_across_types) {
    // A parallel task runs alone, so the time left holds the parallel tasks back to back plus, for each
    // core type X, the single-core work of X spread over its cores: T − s ≥ P + (W_X + busy_X) / n_X.
    // Any convex combination of the two types bounds the maximum; each task takes its cheaper share.
    for (size_t l = 0; l < std::size(kLambdas); ++l) {
      const double lambda = kLambdas[l];
      double sum = lambda * busy_tc / n_tc + (1 - lambda) * busy_vc / n_vc;
      const double* cheaper = cheaper_share_[l].data();
      for (uint64_t m = ~done & compute_mask_; m; m &= m - 1) sum += cheaper[std::countr_zero(m)];
      bound = std::max(bound, last_start + sum);
    }
  }
  if (remaining_link_ > 0) bound = std::max(bound, std::max(link_end_, last_start) + remaining_link_);
  if (!p_.overlap_across_types && bound < best_) {
    const uint64_t rest = ~done & all_;
    bound = std::max(bound, last_start + exclusive_bound(rest));
    // A collective starts after all its remaining ancestors; what follows it is at least a chain, or the
    // tasks up to a later collective, that collective and what follows it.
    for (int c : q_.link_tasks)
      if (rest >> c & 1)
        bound = std::max(
            bound, last_start + exclusive_bound(rest & q_.ancestors[c]) + q_.single[c] + after_link_task(c, rest));
    if (bound < best_ && best_ < kInf && packing_proves(rest, last_start, best_ * (1 - kBoundTolerance) - last_start))
      bound = best_;
  }
  return bound;
}

// Whether every completion of the partial schedule ends at or after last_start + target, by the integral
// packing of single-core runs on the cores (the exclusive-time bound above is fractional: it lets a
// core's idle end be filled by parts of tasks). Every way of choosing the remaining tasks run parallel is
// covered: with the parallel set Y fixed, cutting Y's intervals out of a schedule (nothing overlaps them)
// leaves a schedule of the other tasks, all single-core, shorter by Σ_Y ℓ' (packing_fits); a task of Y
// only shortens chains. Y grows one task at a time, up to kPackingDepth tasks, until the fractional bound
// of the tasks left single covers the rest of the target.
bool ExactSearch::packing_proves(uint64_t rest, double last_start, double target) const {
  if (target <= 0) return false;
  double first_free = kInf;  // every remaining compute task starts after some core is free
  for (const Group& g : groups_) {
    if (g.count == 0) continue;
    if (g.kind & kTc) first_free = std::min(first_free, g.tc_free);
    if (g.kind & kVc) first_free = std::min(first_free, g.vc_free);
  }
  packing_wait_ = std::max(first_free - last_start, 0.0);
  packing_all_free_ = std::max(compute_end_[0] - last_start, 0.0);
  // Each remaining task's release by its scheduled predecessors, the same for every parallel set.
  done_release_.resize(n_);
  for (uint64_t m = rest; m; m &= m - 1) {
    const int s = std::countr_zero(m);
    double fixed = 0;
    for (uint64_t d = q_.pred_mask[s] & ~rest; d; d &= d - 1)
      fixed = std::max(fixed, finish_[std::countr_zero(d)] - last_start);
    done_release_[s] = fixed;
  }
  if (packing_memo_.empty()) packing_memo_.assign(kPackingMemoSlots, PackingMemo{0, 0, false});
  if (++packing_stamp_ == 0) {  // the stamps wrapped: forget every entry
    for (PackingMemo& e : packing_memo_) e.stamp = 0;
    packing_stamp_ = 1;
  }
  packing_memo_used_ = 0;
  return packing_proves(rest, 0, last_start, target, 0);
}

bool ExactSearch::packing_proves(uint64_t rest, uint64_t parallel_set, double t0, double target, int depth) const {
  // Sets of two or more tasks are reached once per order of their tasks, with the same target but for
  // rounding: the first answer stands for all (each is a proof). The table is kept at most half full, so
  // that a probe ends at a free slot soon.
  if (depth < 2 || packing_memo_used_ >= kPackingMemoSlots / 2)
    return packing_proves_once(rest, parallel_set, t0, target, depth);
  auto slot_of = [&] {
    size_t slot = static_cast<size_t>((parallel_set * 0x9e3779b97f4a7c15ULL) >> 40) & (kPackingMemoSlots - 1);
    while (packing_memo_[slot].stamp == packing_stamp_ && packing_memo_[slot].parallel_set != parallel_set)
      slot = (slot + 1) & (kPackingMemoSlots - 1);
    return slot;
  };
  if (const PackingMemo& known = packing_memo_[slot_of()]; known.stamp == packing_stamp_) return known.proves;
  const bool proves = packing_proves_once(rest, parallel_set, t0, target, depth);
  // Found again: the calls below may have taken slots meanwhile, and filled the table.
  if (packing_memo_used_ < kPackingMemoSlots / 2) {
    packing_memo_[slot_of()] = PackingMemo{parallel_set, packing_stamp_, proves};
    ++packing_memo_used_;
  }
  return proves;
}

bool ExactSearch::packing_proves_once(uint64_t rest, uint64_t parallel_set, double t0, double target, int depth) const {
  const uint64_t singles = rest & ~parallel_set;
  if (depth > 0 && packing_wait_ + cached_base(singles) >= target) return true;
  // At the last depth nothing is left to try, whether the tasks left single fit or not.
  if (depth == kPackingDepth || packing_fits(rest, parallel_set, t0, target)) return false;
  for (uint64_t m = singles; m; m &= m - 1) {
    const int v = std::countr_zero(m);
    if (q_.use[v] == kNone || !q_.can_parallel[v] || !std::isfinite(q_.parallel[v])) continue;
    // A parallel task starts once every core is free, and the tasks of Y run one after another.
    const double left = target - q_.parallel[v];
    if (packing_all_free_ >= left) continue;
    if (!packing_proves(rest, parallel_set | uint64_t{1} << v, t0, left, depth + 1)) return false;
  }
  return true;
}

// Whether the remaining tasks, those of `parallel_set` taken out (zero time), could all run single-core
// within `span` of t0 by a relaxation: per core type, each task fits alone between its release (latest
// finish of done predecessors, then chains) and its tail; a task that cannot share a core with any other
// takes a core of its own; and a core holds at most as many tasks as the shortest ones that fit between
// the later of its free time and its first task's release, and the end less the smallest tail (cores
// and first tasks paired in sorted order give every core its largest count). Times are relative to t0;
// once a task runs parallel, the cut-out intervals lie after every core is free, so releases later than
// that are taken at that time.
void ExactSearch::set_releases_and_tails(uint64_t rest, uint64_t parallel_set) const {
  auto duration = [&](int s) { return (parallel_set >> s & 1) || q_.use[s] == kNone ? 0.0 : q_.single[s]; };
  release_.resize(n_);
  tail_.assign(n_, 0);
  for (uint64_t m = rest; m; m &= m - 1) {
    const int s = std::countr_zero(m);
    double chain = 0;
    for (uint64_t r = q_.pred_mask[s] & rest; r; r &= r - 1) {
      const int pr = std::countr_zero(r);
      chain = std::max(chain, release_[pr] + duration(pr));
    }
    double fixed = done_release_[s];
    if (parallel_set) fixed = std::min(fixed, packing_all_free_);
    release_[s] = std::max({fixed, chain, 0.0});
  }
  for (int s = n_ - 1; s >= 0; --s) {
    if (!(rest >> s & 1)) continue;
    for (uint64_t m = q_.successor_mask[s] & rest; m; m &= m - 1) {
      const int d = std::countr_zero(m);
      tail_[s] = std::max(tail_[s], duration(d) + tail_[d]);
    }
  }
}

bool ExactSearch::lone_tasks_fit(int64_t cores, double span) const {
  // Tasks that share a core with no other task take a core of their own: the latest free one they fit
  // on, the most constrained task first, which leaves the earliest cores to the others.
  shared_.clear();
  latest_starts_.clear();
  for (int s : packing_items_) {
    bool shares = false;
    for (int k : packing_items_)
      if (k != s &&
          std::min(release_[s], release_[k]) + q_.single[s] + q_.single[k] + std::min(tail_[s], tail_[k]) <= span) {
        shares = true;
        break;
      }
    if (shares)
      shared_.push_back(s);
    else
      latest_starts_.push_back(span - q_.single[s] - tail_[s]);
  }
  if (static_cast<int64_t>(latest_starts_.size()) > cores) return false;
  if (latest_starts_.empty()) return true;
  std::sort(latest_starts_.begin(), latest_starts_.end());
  taken_.assign(free_.size(), 0);
  for (double latest : latest_starts_) {
    int core = -1;
    for (int c = 0; c < static_cast<int>(free_.size()) && free_[c] <= latest; ++c)
      if (!taken_[c]) core = c;
    if (core < 0) return false;
    taken_[core] = 1;
  }
  size_t kept = 0;
  for (size_t c = 0; c < free_.size(); ++c)
    if (!taken_[c]) free_[kept++] = free_[c];
  free_.resize(kept);
  return true;
}

bool ExactSearch::shared_tasks_fit(double span) const {
  const size_t used = std::min(free_.size(), shared_.size());
  if (used == 0) return false;
  lengths_.clear();
  releases_.clear();
  tails_.clear();
  double least_release = kInf, least_tail = kInf;
  for (int s : shared_) {
    lengths_.push_back(q_.single[s]);
    releases_.push_back(release_[s]);
    tails_.push_back(tail_[s]);
    least_release = std::min(least_release, release_[s]);
    least_tail = std::min(least_tail, tail_[s]);
  }
  std::sort(lengths_.begin(), lengths_.end());
  std::sort(releases_.begin(), releases_.end());
  std::sort(tails_.begin(), tails_.end());
  // Tasks a core can hold: the shortest ones, from `from` to the end less `to_end`.
  auto holds = [&](double from, double to_end) {
    size_t k = 0;
    double sum = from + to_end;
    while (k < lengths_.size() && sum + lengths_[k] <= span) sum += lengths_[k++];
    return k;
  };
  size_t by_release = 0, by_tail = 0;
  for (size_t i = 0; i < used; ++i) {
    by_release += holds(std::max(free_[i], releases_[i]), least_tail);
    by_tail += holds(std::max(free_[0], least_release), tails_[i]);
  }
  return by_release >= shared_.size() && by_tail >= shared_.size();
}

bool ExactSearch::packing_fits(uint64_t rest, uint64_t parallel_set, double t0, double span) const {
  set_releases_and_tails(rest, parallel_set);
  for (const uint8_t type : {kTc, kVc}) {
    packing_items_.clear();
    for (uint64_t m = rest & ~parallel_set; m; m &= m - 1) {
      const int s = std::countr_zero(m);
      if (q_.use[s] & type) packing_items_.push_back(s);
    }
    if (packing_items_.empty()) continue;
    const size_t items = packing_items_.size();
    // The free times of the cores of this type, earliest first (no more than one per task matters).
    free_.clear();
    for (const Group& g : groups_) {
      if (!(g.kind & type)) continue;
      const double free = std::max((type == kTc ? g.tc_free : g.vc_free) - t0, 0.0);
      for (int64_t c = 0; c < g.count && c < static_cast<int64_t>(items); ++c) free_.push_back(free);
    }
    std::sort(free_.begin(), free_.end());
    const int64_t cores = type == kTc ? p_.tensor_cores : p_.vector_cores;
    if (free_.empty()) return false;
    for (int s : packing_items_)
      if (std::max(free_[0], release_[s]) + q_.single[s] + tail_[s] > span) return false;
    if (!lone_tasks_fit(cores, span)) return false;
    if (!shared_.empty() && !shared_tasks_fit(span)) return false;
  }
  return true;
}

// A lower bound on the time any schedule needs for the compute tasks in `set` alone (layer-schedule.md:
// a parallel task runs alone). With y the tasks run single-core, that time is the parallel tasks' time
// plus the time S when none runs, and S holds every single-core task:
//   T ≥ Σ_{parallel} ℓ' + max(M, Σ_{single} c_i),
//   c_i = γ·(α·ℓ_i/n_TC [uses TC] + (1 − α)·ℓ_i/n_VC [uses VC]) + (1 − γ)·f_i·ℓ_i,
// where M ≥ the longest single-core task, the α term is the single-core work spread over the cores and
// the f term a unit flow of chains (single-core tasks of a chain run one after another); any α, γ in
// [0, 1] keep it valid (kMixes). For each class "longest single task = m_k" the minimum over y is at least
// the value of a fractional knapsack (capacity M before the max bites); the minimum over the classes,
// each at its best mix, bounds every schedule. Then the set is split at its tasks (below).
double ExactSearch::exclusive_bound(uint64_t set) const {
  return remember(exclusive_memo_, set, [&] { return split_exclusive_bound(set); });
}

// The exclusive-time bound of the set, raised by splitting it: a compute task v splits the set in time,
// its ancestors end before v starts, its descendants start after v ends. Run single-core, v overlaps at
// most the tasks incomparable with it (left out); run parallel, it overlaps nothing, so each incomparable
// task is before or after it (every way is tried, for a few such tasks). Small sets are split at every
// task; larger ones only at their longest task (fastest variant), to keep the cost down.
double ExactSearch::split_exclusive_bound(uint64_t set) const {
  double value = compute_exclusive_bound(set);
  uint64_t split_at = set;
  if (std::popcount(set) > kSplitTasks) {
    int longest = -1;
    for (uint64_t m = set; m; m &= m - 1) {
      const int v = std::countr_zero(m);
      if (q_.use[v] != kNone && (longest < 0 || q_.fastest[v] > q_.fastest[longest])) longest = v;
    }
    split_at = longest < 0 ? 0 : uint64_t{1} << longest;
  }
  for (uint64_t m = split_at; m; m &= m - 1) {
    const int v = std::countr_zero(m);
    if (q_.use[v] == kNone) continue;
    const uint64_t before = set & q_.ancestors[v], after = set & q_.descendants[v];
    // Collectives on the link may overlap v even when it runs parallel: they go to neither side.
    const uint64_t free = set & ~before & ~after & ~(uint64_t{1} << v) & compute_mask_;
    double split = part_bound(before) + q_.single[v] + part_bound(after);
    if (q_.can_parallel[v] && std::isfinite(q_.parallel[v])) {
      double parallel_case = kInf;
      if (std::popcount(free) <= kSplitFreeTasks) {
        // Every subset of the free tasks goes before v, the rest after it.
        for (uint64_t sub = free;; sub = (sub - 1) & free) {
          parallel_case =
              std::min(parallel_case, part_bound(before | sub) + q_.parallel[v] + part_bound(after | (free & ~sub)));
          if (sub == 0) break;
        }
      } else {
        parallel_case = part_bound(before) + q_.parallel[v] + part_bound(after);  // the free tasks left out
      }
      split = std::min(split, parallel_case);
    }
    value = std::max(value, split);
  }
  return value;
}

double ExactSearch::cached_base(uint64_t set) const {
  if (!set) return 0;
  return remember(base_memo_, set, [&] { return compute_exclusive_bound(set); });
}

double ExactSearch::part_bound(uint64_t set) const {
  const double base = cached_base(set);
  const int size = std::popcount(set);
  if (size < 2 || size > exact_part_tasks_) return base;
  // Running the tasks one at a time, each its fastest way, is a schedule of the part: a base bound that
  // reaches its length is the part's optimum already.
  double one_by_one = 0;
  for (uint64_t m = set; m; m &= m - 1) one_by_one += q_.fastest[std::countr_zero(m)];
  if (base >= one_by_one * (1 - kBoundTolerance)) return base;
  return std::max(base, exact_part(set));
}

double ExactSearch::exact_part(uint64_t set) const {
  return remember(*exact_memo_, set, [&] {
    // The tasks of the set alone, with the precedences among them that the whole DAG implies.
    Problem part;
    part.tensor_cores = p_.tensor_cores;
    part.vector_cores = p_.vector_cores;
    part.comm_as_vector = p_.comm_as_vector;
    part.overlap_across_types = p_.overlap_across_types;
    std::vector<int> index(n_, -1);
    for (uint64_t m = set; m; m &= m - 1) {
      const int s = std::countr_zero(m);
      index[s] = static_cast<int>(part.tasks.size());
      part.tasks.push_back(p_.tasks[q_.task[s]]);
    }
    for (uint64_t m = set; m; m &= m - 1) {
      const int s = std::countr_zero(m);
      const uint64_t before = q_.ancestors[s] & set;
      for (uint64_t a = before; a; a &= a - 1) {
        const int t = std::countr_zero(a);
        // Only the nearest: an edge implied by another ancestor in the set is left out.
        bool implied = false;
        for (uint64_t o = before; o && !implied; o &= o - 1)
          implied = (q_.ancestors[std::countr_zero(o)] >> t & 1) != 0;
        if (!implied) part.edges.emplace_back(index[t], index[s]);
      }
    }
    const Schedule s = solve_part(part, exact_part_nodes_);
    return s.proven_optimal ? s.makespan_s : s.lower_bound_s;
  });
}

ExactSearch::ExclusiveSet ExactSearch::collect_exclusive_items(uint64_t set) const {
  items_.clear();
  ExclusiveSet e;
  for (int s = 0; s < n_; ++s) {
    if (!(set >> s & 1) || q_.use[s] == kNone) continue;
    if (!q_.can_parallel[s] || !std::isfinite(q_.parallel[s])) {
      e.forced = true;
      e.forced_longest = std::max(e.forced_longest, q_.single[s]);
      e.forced_work[q_.use[s]] += q_.single[s];
      continue;
    }
    e.all_parallel += q_.parallel[s];
    items_.push_back(Item{q_.single[s], q_.parallel[s], q_.use[s], s});
  }
  return e;
}

void ExactSearch::set_chain_flows(uint64_t set) const {
  // A longest chain of the set (fastest variants): its single-core tasks run one after another, all in
  // the time no parallel task runs, so that time is also at least their sum.
  path_length_.assign(n_, 0);
  path_prev_.assign(n_, -1);
  int last = -1;
  for (int s = 0; s < n_; ++s) {
    if (!(set >> s & 1)) continue;
    double before = 0;
    for (int pr : q_.preds[s])
      if ((set >> pr & 1) && path_length_[pr] > before) {
        before = path_length_[pr];
        path_prev_[s] = pr;
      }
    path_length_[s] = before + q_.fastest[s];
    if (last < 0 || path_length_[s] > path_length_[last]) last = s;
  }
  // Two unit flows through the set (each a convex combination of its chains, so Σ flow·ℓ over the
  // single-core tasks bounds the time without parallel tasks): a longest chain, and the flow that splits
  // evenly at every branch (which also weighs the side branches).
  flow_[0].assign(n_, 0.0);
  for (int s = last; s >= 0; s = path_prev_[s]) flow_[0][s] = 1;
  flow_[1].assign(n_, 0.0);
  int sources = 0;
  for (int s = 0; s < n_; ++s)
    if ((set >> s & 1) && !(q_.pred_mask[s] & set)) ++sources;
  for (int s = 0; s < n_; ++s) {
    if (!(set >> s & 1)) continue;
    if (!(q_.pred_mask[s] & set)) flow_[1][s] += 1.0 / sources;
    const int outs = std::popcount(q_.successor_mask[s] & set);
    if (outs == 0) continue;
    for (uint64_t m = q_.successor_mask[s] & set; m; m &= m - 1) flow_[1][std::countr_zero(m)] += flow_[1][s] / outs;
  }
}

double ExactSearch::knapsack_bound(const ExclusiveSet& e, double no_single) const {
  const double n_tc = static_cast<double>(p_.tensor_cores), n_vc = static_cast<double>(p_.vector_cores);
  // Per mix (α, γ): α shares the work term between the core types, γ mixes it with the chain term. The
  // items' weights and their order by ℓ'/weight are made once per mix, when a class first needs them.
  constexpr size_t kMixCount = std::size(kMixes);
  const size_t k = items_.size();
  weights_.resize(kMixCount * k);
  orders_.resize(kMixCount * k);
  double forced_used[kMixCount];
  bool ready[kMixCount] = {};
  auto prepare_mix = [&](size_t x) {
    const auto& [alpha, gamma, flow] = kMixes[x];
    const double w_tc = gamma * alpha / n_tc, w_vc = gamma * (1 - alpha) / n_vc;
    auto weight = [&](uint8_t use, double single) {
      return single * (((use & kTc) ? w_tc : 0.0) + ((use & kVc) ? w_vc : 0.0));
    };
    forced_used[x] =
        weight(kTc, e.forced_work[kTc]) + weight(kVc, e.forced_work[kVc]) + weight(kTc | kVc, e.forced_work[kTc | kVc]);
    double* w = weights_.data() + x * k;
    int* order = orders_.data() + x * k;
    for (size_t i = 0; i < k; ++i) {
      w[i] = weight(items_[i].use, items_[i].single) + (1 - gamma) * flow_[flow][items_[i].task] * items_[i].single;
      order[i] = static_cast<int>(i);
    }
    // By ℓ'/weight, largest first; items of weight 0 (off the mix's chain) cost no capacity and come first.
    // An item with ℓ' = 0 and weight 0 would compare equal to every other item under the cross products
    // alone, which is no strict weak order: std::sort then misplaces other items and the bound overshoots.
    std::sort(order, order + k, [&](int a, int b) {
      const bool free_a = w[a] <= 0, free_b = w[b] <= 0;
      if (free_a || free_b) return free_a && (!free_b || a < b);
      return items_[a].parallel * w[b] > items_[b].parallel * w[a];
    });
    ready[x] = true;
  };
  double best = no_single;
  for (const double m : classes_) {
    if (m >= best) break;  // every later class costs at least its M
    double class_bound = 0;
    for (size_t x = 0; x < kMixCount && class_bound < best; ++x) {
      if (!ready[x]) prepare_mix(x);
      const double* w = weights_.data() + x * k;
      const int* order = orders_.data() + x * k;
      // The fractional knapsack over the items no longer than M: an item run single gains its ℓ' while
      // the capacity M lasts, and ℓ' − c beyond it (taken only when positive).
      double used = forced_used[x], gain = 0;
      for (size_t j = 0; j < k; ++j) {
        const int i = order[j];
        if (items_[i].single > m) continue;
        const double room = std::max(m - used, 0.0);
        const double part = w[i] <= room ? 1.0 : room / w[i];
        gain += part * items_[i].parallel + (1 - part) * std::max(items_[i].parallel - w[i], 0.0);
        used += w[i];
      }
      class_bound = std::max(class_bound, e.all_parallel - gain + m + std::max(forced_used[x] - m, 0.0));
    }
    best = std::min(best, class_bound);
  }
  return best;
}

double ExactSearch::compute_exclusive_bound(uint64_t set) const {
  const ExclusiveSet e = collect_exclusive_items(set);
  if (items_.empty() && !e.forced) return 0;
  set_chain_flows(set);
  std::sort(items_.begin(), items_.end(), [](const Item& a, const Item& b) { return a.single < b.single; });
  const double no_single = e.forced ? kInf : e.all_parallel;  // the class without single-core tasks
  // Classes: the longest single-core task is forced_longest (when some task cannot run parallel) or one
  // of the distinct lengths of the others; a class costs at least its M, so only those below the
  // all-parallel time matter.
  classes_.clear();
  if (e.forced && e.forced_longest < no_single) classes_.push_back(e.forced_longest);
  for (size_t k = 0; k < items_.size(); ++k) {
    const double m = items_[k].single;
    if (m >= no_single) break;
    if (m < e.forced_longest || (k + 1 < items_.size() && items_[k + 1].single == m)) continue;
    classes_.push_back(m);
  }
  return knapsack_bound(e, no_single);
}

double ExactSearch::after_link_task(int c, uint64_t rest) const {
  double after = q_.tail[c] - q_.fastest[c];
  for (int d : q_.link_tasks)
    if ((rest >> d & 1) && (q_.ancestors[d] >> c & 1))
      after = std::max(
          after, exclusive_bound(rest & q_.ancestors[d] & q_.descendants[c]) + q_.single[d] + after_link_task(d, rest));
  return after;
}

}  // namespace phaze::schedule::detail
