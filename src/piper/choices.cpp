#include "piper/choices.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "piper/plan.h"
#include "util/input_error.h"

namespace phaze::piper {

namespace {

/// One TMPC of one node in the stage: its share of α and β and its memory, as the bytes with one micro-batch
/// in flight (m1 = a + b) and the bytes each further one adds (a). With y ≥ 1 always, a choice needs no more
/// memory than another at every y exactly when both figures are no larger.
struct Option {
  double alpha = 0, beta = 0, a = 0, m1 = 0;
  int tmpc = 0;
  auto key() const { return std::tuple(alpha, beta, a, m1); }
};

using choice_detail::Final;
using choice_detail::Partial;

/// Bytes of a partial choice with `most` = min(N, K) micro-batches in flight, computed as finish_choices tests
/// the fit there: no stage ever has more, and memory is linear in y, so a partial choice needs no more memory
/// than another at every y that matters when its m1 and its top are no larger, and adding nodes keeps it so.
double top_bytes(const Partial& p, int64_t most) {
  return p.m1 + p.a * static_cast<double>(most - 1);
}

bool dominates(const Partial& x, const Partial& y, int64_t most) {
  return x.alpha <= y.alpha && x.beta <= y.beta && x.m1 <= y.m1 && top_bytes(x, most) <= top_bytes(y, most);
}

/// Points compared with each new one when pruning with several values of β: dropping a dominated choice only
/// saves work (every query takes the best of all choices kept), so each point is checked against the latest
/// kept ones, the closest in sorted order, and the pruning stays linear.
constexpr size_t kPruneWindow = 64;

/// The most micro-batches in flight up to which a stage's choices are sorted by counting (min(N, K) ≤ this).
constexpr int64_t kYBuckets = 64;

/// Drops dominated points of `points`, given by α non-decreasing (the later of equal ones). With one value of
/// β (TMPCs of equal parameter bytes, the usual case) every dominated point goes: a point is dominated when
/// an earlier one needs no more memory, found on the staircase of the earlier points' (m1, top). Otherwise
/// each is checked against a window of the latest kept.
void non_dominated(const std::vector<Partial>& points, size_t stage_size, int64_t most, std::vector<Partial>& kept) {
  kept.clear();
  if (points.empty()) return;
  const bool one_beta =
      std::all_of(points.begin(), points.end(), [&](const Partial& p) { return p.beta == points.front().beta; });
  // (m1, least top of the kept points with that m1 or less), m1 increasing and top decreasing.
  thread_local std::vector<std::pair<double, double>> staircase;
  staircase.clear();
  for (const Partial& p : points) {
    bool dominated = false;
    if (one_beta) {
      auto at = std::upper_bound(staircase.begin(), staircase.end(), p.m1,
                                 [](double m1, const std::pair<double, double>& e) { return m1 < e.first; });
      const double top = top_bytes(p, most);
      dominated = at != staircase.begin() && std::prev(at)->second <= top;
      if (!dominated) {
        if (at != staircase.begin() && std::prev(at)->first == p.m1) {
          std::prev(at)->second = top;
        } else {
          at = staircase.insert(at, {p.m1, top}) + 1;
        }
        auto end = at;
        while (end != staircase.end() && end->second >= top) ++end;
        staircase.erase(at, end);
      }
    } else {
      for (size_t k = kept.size(); k-- > 0 && kept.size() - k <= kPruneWindow;)
        if (dominates(kept[k], p, most)) {
          dominated = true;
          break;
        }
    }
    if (dominated) continue;
    kept.push_back(p);
    if (static_cast<int64_t>(kept.size()) > piper_limits::kStageChoices)
      throw InputError(
          fmt::format("a stage of {} nodes has more than {} non-dominated TMPC choices: too many to choose "
                      "among exactly",
                      stage_size, piper_limits::kStageChoices));
  }
}

/// Sums `level` (by α non-decreasing) with each of `adds` in turn, keeps the sums that fit with one
/// micro-batch in flight (memory only grows as nodes are added: one that does not fit never will), merges
/// the runs by α and writes the non-dominated ones to `out`. Each sum keeps its parent in `level` and the
/// index of its add.
void extend_level(const std::vector<Partial>& level, const std::vector<Partial>& adds, const Problem& problem,
                  size_t stage_size, std::vector<Partial>& next, std::vector<size_t>& run_starts,
                  std::vector<Partial>& out) {
  const double memory_bytes = problem.memory_per_device_bytes;
  if (static_cast<int64_t>(level.size() * adds.size()) > piper_limits::kPartialChoices)
    throw InputError(
        fmt::format("a stage of {} nodes has more than {} partial TMPC choices: too many to choose "
                    "among exactly",
                    stage_size, piper_limits::kPartialChoices));
  next.clear();
  run_starts.clear();
  for (size_t c = 0; c < adds.size(); ++c) {
    const Partial& add = adds[c];
    run_starts.push_back(next.size());
    for (size_t p = 0; p < level.size(); ++p) {
      const Partial x{level[p].alpha + add.alpha, level[p].beta + add.beta, level[p].a + add.a,
                      level[p].m1 + add.m1,       static_cast<int>(p),      static_cast<int>(c)};
      if (x.m1 <= memory_bytes) next.push_back(x);
    }
  }
  run_starts.push_back(next.size());
  auto by_alpha = [](const Partial& x, const Partial& y) { return x.alpha < y.alpha; };
  for (size_t width = 1; width + 1 < run_starts.size(); width *= 2)
    for (size_t r = 0; r + width + 1 < run_starts.size(); r += 2 * width)
      std::inplace_merge(
          next.begin() + static_cast<std::ptrdiff_t>(run_starts[r]),
          next.begin() + static_cast<std::ptrdiff_t>(run_starts[r + width]),
          next.begin() + static_cast<std::ptrdiff_t>(run_starts[std::min(r + 2 * width, run_starts.size() - 1)]),
          by_alpha);
  non_dominated(next, stage_size, std::min(problem.micro_batches, problem.devices), out);
}

/// The choices of a stage from its last level, whose α each take `alpha_shift` more (the stage's cut when
/// the level leaves it out): only y_max matters of the memory, so the choices no other beats in α, β and
/// y_max are kept, by y_max descending. With `indices`, each kept choice's index in `last` too.
void finish_choices(const Problem& problem, const std::vector<Partial>& last, double alpha_shift,
                    std::vector<Final>& finals, std::vector<StageChoice>& out, std::vector<int>* indices);

/// The options of `node` at width index `w`, each with the cut `cut_of(tmpc)` bytes in its α, those another
/// option of the same node dominates dropped.
template <class CutOf>
std::vector<Option> undominated_options(const Problem& problem, const Node& node, int w, CutOf cut_of) {
  const double B = problem.bandwidth_bytes_per_s, N = static_cast<double>(problem.micro_batches);
  const std::vector<Tmpc>& tmpcs = node.tmpcs[static_cast<size_t>(w)];
  std::vector<Option> options;
  for (size_t l = 0; l < tmpcs.size(); ++l) {
    const Tmpc& c = tmpcs[l];
    const double cut = cut_of(c);
    const double resync = 4 * c.parameter_bytes / (N * B);
    options.push_back({cut / B + c.time_per_sample_s - resync, resync, c.memory_per_in_flight_bytes,
                       c.memory_per_in_flight_bytes + c.memory_fixed_bytes, static_cast<int>(l)});
  }
  std::vector<Option> kept;
  for (const Option& o : options) {
    bool dominated = false;
    for (const Option& p : options)
      if (&p != &o && p.alpha <= o.alpha && p.beta <= o.beta && p.a <= o.a && p.m1 <= o.m1 &&
          (p.key() != o.key() || p.tmpc < o.tmpc)) {
        dominated = true;
        break;
      }
    if (!dominated) kept.push_back(o);
  }
  return kept;
}

/// The nodes (positions in `node_options`) with the same options, in the order of their first node: in a group
/// only how many nodes take each option matters.
std::vector<std::vector<size_t>> identical_nodes(const std::vector<std::vector<Option>>& node_options) {
  std::map<std::vector<std::tuple<double, double, double, double>>, size_t> group_of;
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < node_options.size(); ++i) {
    std::vector<std::tuple<double, double, double, double>> key;
    for (const Option& o : node_options[i]) key.push_back(o.key());
    const auto [at, added] = group_of.emplace(key, groups.size());
    if (added) groups.emplace_back();
    groups[at->second].push_back(i);
  }
  return groups;
}

/// Each node's options in the stage of `nodes` (`in_stage` true for them) at width index `w`, with its cut,
/// those another option of the same node dominates dropped; nothing when a node has no TMPC at that width.
std::optional<std::vector<std::vector<Option>>> stage_node_options(const Problem& problem,
                                                                   const std::vector<int>& nodes,
                                                                   const std::vector<char>& in_stage, int w) {
  std::vector<std::vector<Option>> node_options;
  for (int v : nodes) {
    const Node& node = problem.nodes[static_cast<size_t>(v)];
    if (node.tmpcs[static_cast<size_t>(w)].empty()) return std::nullopt;
    node_options.push_back(
        undominated_options(problem, node, w, [&](const Tmpc& c) { return cut_bytes(problem, node, c, in_stage); }));
  }
  return node_options;
}

/// Every way of giving `k` identical nodes counts of `options` TMPCs (Σ counts = k).
void compositions(int k, size_t options, std::vector<int>& counts, std::vector<std::vector<int>>& out) {
  if (counts.size() + 1 == options) {
    counts.push_back(k);
    out.push_back(counts);
    counts.pop_back();
    return;
  }
  for (int c = k; c >= 0; --c) {
    counts.push_back(c);
    compositions(k - c, options, counts, out);
    counts.pop_back();
  }
}

/// The most micro-batches in flight y with which m1 + a·(y − 1) ≤ M (0: not even one).
int64_t max_in_flight(double a, double m1, double m) {
  if (m1 > m) return 0;
  if (a <= 0) return kUnlimited;
  const double bound = 1 + std::floor((m - m1) / a);
  if (!(bound < 9.0e18)) return kUnlimited;
  auto y = static_cast<int64_t>(bound);
  auto fits = [&](int64_t k) { return m1 + a * static_cast<double>(k - 1) <= m; };
  while (y > 1 && !fits(y)) --y;
  while (y < kUnlimited - 1 && fits(y + 1)) ++y;
  return y;
}

void finish_choices(const Problem& problem, const std::vector<Partial>& last, double alpha_shift,
                    std::vector<Final>& finals, std::vector<StageChoice>& out, std::vector<int>* indices) {
  // No stage ever has more than min(N, K) micro-batches in flight (y = ⌈σ/d⌉ ≤ σ = Σ d ≤ N, and Σ d ≤ K):
  // beyond that y_max makes no difference, so it is capped there and the choices above it collapse into the
  // fastest of them.
  const int64_t most = std::min(problem.micro_batches, problem.devices);
  const double memory = problem.memory_per_device_bytes;
  finals.clear();
  for (size_t i = 0; i < last.size(); ++i) {
    const Partial& p = last[i];
    // Most partial choices fit with the most in flight that matter (max_in_flight's own test at `most`).
    const int64_t y = top_bytes(p, most) <= memory ? most : std::min(max_in_flight(p.a, p.m1, memory), most);
    if (y >= 1) finals.push_back({{p.alpha + alpha_shift, p.beta, y}, static_cast<int>(i)});
  }
  const size_t first = out.size();
  auto keep = [&](const Final& f) {
    out.push_back(f.choice);
    if (indices) indices->push_back(f.index);
  };
  const bool one_beta = std::all_of(finals.begin(), finals.end(),
                                    [&](const Final& f) { return f.choice.beta == finals.front().choice.beta; });
  if (one_beta && most <= kYBuckets) {
    // By y_max descending, then α, then the level's order, a choice is kept when its α is below the last
    // kept one's: so only the first of each y_max, the least α, can be, and no sort is needed.
    std::array<int, kYBuckets + 1> best;
    best.fill(-1);
    for (size_t k = 0; k < finals.size(); ++k) {
      int& b = best[static_cast<size_t>(finals[k].choice.max_in_flight)];
      if (b < 0 || finals[k].choice.alpha < finals[static_cast<size_t>(b)].choice.alpha) b = static_cast<int>(k);
    }
    for (int64_t y = most; y >= 1; --y) {
      const int b = best[static_cast<size_t>(y)];
      if (b < 0) continue;
      const Final& f = finals[static_cast<size_t>(b)];
      if (out.size() == first || f.choice.alpha < out.back().alpha) keep(f);
    }
    return;
  }
  // By y_max descending, α, β, then the level's order: a total order, so an unstable sort (no buffer to
  // allocate) gives the stable order.
  std::sort(finals.begin(), finals.end(), [](const Final& x, const Final& y) {
    return std::tuple(-x.choice.max_in_flight, x.choice.alpha, x.choice.beta, x.index) <
           std::tuple(-y.choice.max_in_flight, y.choice.alpha, y.choice.beta, y.index);
  });
  // With one β the kept α strictly fall (each is below every kept one in its window, the one before it
  // included), so the last kept is the only one to compare with: the window's answer, in one comparison.
  const size_t window = one_beta ? 1 : kPruneWindow;
  for (const Final& f : finals) {
    bool dominated = false;
    for (size_t k = out.size(); k-- > first && out.size() - k <= window;)
      if (out[k].alpha <= f.choice.alpha && out[k].beta <= f.choice.beta) {
        dominated = true;  // it has y_max ≥ f's (sorted) and is no slower at any d
        break;
      }
    if (!dominated) keep(f);
  }
}

}  // namespace

StageChoices stage_choices(const Problem& problem, const std::vector<int>& nodes, const std::vector<char>& in_stage,
                           int w, bool with_tmpcs) {
  StageChoices out;
  const std::optional<std::vector<std::vector<Option>>> found = stage_node_options(problem, nodes, in_stage, w);
  if (!found) return out;
  const std::vector<std::vector<Option>>& node_options = *found;
  // Nodes with the same options (the identical layers of a stage) form a group: only how many of them take
  // each option matters.
  const std::vector<std::vector<size_t>> groups = identical_nodes(node_options);

  std::vector<std::vector<Partial>> levels{{Partial{}}};
  std::vector<std::vector<std::vector<int>>> combos(groups.size());
  std::vector<Partial> next, adds;
  std::vector<size_t> run_starts;
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<Option>& options = node_options[groups[g].front()];
    std::vector<int> counts;
    compositions(static_cast<int>(groups[g].size()), options.size(), counts, combos[g]);
    // One run per combination, each in the α order of the level (adding a constant keeps it), merged.
    adds.clear();
    for (size_t c = 0; c < combos[g].size(); ++c) {
      Partial add;
      for (size_t l = 0; l < options.size(); ++l) {
        const double k = combos[g][c][l];
        add.alpha += k * options[l].alpha;
        add.beta += k * options[l].beta;
        add.a += k * options[l].a;
        add.m1 += k * options[l].m1;
      }
      adds.push_back(add);
    }
    std::vector<Partial> level;
    extend_level(levels.back(), adds, problem, nodes.size(), next, run_starts, level);
    levels.push_back(std::move(level));
  }

  std::vector<Final> finals;
  std::vector<int> indices;
  finish_choices(problem, levels.back(), 0.0, finals, out.choices, with_tmpcs ? &indices : nullptr);
  for (int index : indices) {
    // Each group's counts, back through the levels; a group's nodes take the options in node order.
    std::vector<int> tmpc(nodes.size(), -1);
    int at = index;
    for (size_t g = groups.size(); g-- > 0;) {
      const Partial& x = levels[g + 1][static_cast<size_t>(at)];
      const std::vector<int>& counts = combos[g][static_cast<size_t>(x.combo)];
      const std::vector<Option>& options = node_options[groups[g].front()];
      size_t member = 0;
      for (size_t l = 0; l < options.size(); ++l)
        for (int k = 0; k < counts[l]; ++k) tmpc[groups[g][member++]] = options[l].tmpc;
      at = x.parent;
    }
    out.tmpc.push_back(std::move(tmpc));
  }
  return out;
}

void order_identical_nodes(const Problem& problem, const std::vector<int>& nodes, const std::vector<char>& in_stage,
                           int w, std::vector<int>& tmpc) {
  const std::optional<std::vector<std::vector<Option>>> node_options = stage_node_options(problem, nodes, in_stage, w);
  if (!node_options) return;
  for (const std::vector<size_t>& members : identical_nodes(*node_options)) {
    std::vector<int> taken;
    for (size_t i : members) taken.push_back(tmpc[i]);
    std::sort(taken.begin(), taken.end());
    for (size_t m = 0; m < members.size(); ++m) tmpc[members[m]] = taken[m];
  }
}

bool cut_independent_of_tmpc(const Problem& problem, int w) {
  for (const Node& node : problem.nodes) {
    const std::vector<Tmpc>& tmpcs = node.tmpcs[static_cast<size_t>(w)];
    for (const Tmpc& c : tmpcs)
      if (c.sync_in_bytes != tmpcs.front().sync_in_bytes || c.sync_out_bytes != tmpcs.front().sync_out_bytes)
        return false;
  }
  return true;
}

GrowingStage::GrowingStage(const Problem& problem, int w)
    : problem_(problem),
      from_side_(problem.edges.size(), 0.0),
      to_side_(problem.edges.size(), 0.0),
      in_stage_(problem.nodes.size(), 0),
      levels_{{Partial{}}},
      cut_bytes_{ExactishSum{}} {
  for (const Node& node : problem.nodes) {
    std::vector<Partial>& adds = options_.emplace_back();
    option_tmpc_.emplace_back();
    const std::vector<Tmpc>& tmpcs = node.tmpcs[static_cast<size_t>(w)];
    if (tmpcs.empty()) continue;  // no option: every stage holding the node has no choice
    std::vector<int>& tmpc_of = option_tmpc_.back();
    for (const Option& o : undominated_options(problem, node, w, [](const Tmpc&) { return 0.0; })) {
      adds.push_back(Partial{o.alpha, o.beta, o.a, o.m1});
      tmpc_of.push_back(o.tmpc);
    }
    // The bytes an edge's cut costs, charged by whichever end is in the stage (cut_bytes' terms).
    for (size_t j = 0; j < node.in_edges.size(); ++j) {
      const auto e = static_cast<size_t>(node.in_edges[j]);
      to_side_[e] = 2 * (problem.edges[e].bytes + tmpcs.front().sync_in_bytes[j]);
    }
    for (size_t j = 0; j < node.out_edges.size(); ++j) {
      const auto e = static_cast<size_t>(node.out_edges[j]);
      from_side_[e] = 2 * (problem.edges[e].bytes + tmpcs.front().sync_out_bytes[j]);
    }
  }
}

void GrowingStage::push(int v) {
  const Node& node = problem_.nodes[static_cast<size_t>(v)];
  // An edge to a node of the stage no longer crosses its cut; one to a node outside now does.
  ExactishSum cut = cut_bytes_.back();
  for (int e : node.in_edges) {
    const auto i = static_cast<size_t>(e);
    cut = cut.plus(in_stage_[static_cast<size_t>(problem_.edges[i].from)] ? -from_side_[i] : to_side_[i]);
  }
  for (int e : node.out_edges) {
    const auto i = static_cast<size_t>(e);
    cut = cut.plus(in_stage_[static_cast<size_t>(problem_.edges[i].to)] ? -to_side_[i] : from_side_[i]);
  }
  in_stage_[static_cast<size_t>(v)] = 1;
  nodes_.push_back(v);
  cut_bytes_.push_back(cut);
  if (levels_.size() <= nodes_.size()) levels_.emplace_back();
  extend_level(levels_[nodes_.size() - 1], options_[static_cast<size_t>(v)], problem_, nodes_.size(), next_,
               run_starts_, levels_[nodes_.size()]);
}

void GrowingStage::pop() {
  in_stage_[static_cast<size_t>(nodes_.back())] = 0;
  nodes_.pop_back();
  cut_bytes_.pop_back();
}

void GrowingStage::choices(std::vector<StageChoice>& out) {
  finish_choices(problem_, levels_[nodes_.size()], cut_bytes_.back().value() / problem_.bandwidth_bytes_per_s, finals_,
                 out, nullptr);
}

StageChoices GrowingStage::choices_with_tmpcs() {
  StageChoices out;
  std::vector<int> indices;
  finish_choices(problem_, levels_[nodes_.size()], cut_bytes_.back().value() / problem_.bandwidth_bytes_per_s, finals_,
                 out.choices, &indices);
  std::vector<size_t> ascending(nodes_.size());  // positions in nodes_, by node
  for (size_t i = 0; i < ascending.size(); ++i) ascending[i] = i;
  std::sort(ascending.begin(), ascending.end(), [&](size_t x, size_t y) { return nodes_[x] < nodes_[y]; });
  for (int index : indices) {
    // Back through the levels: the option each node added took, then the partial choice it extended.
    std::vector<int> by_position(nodes_.size());
    int at = index;
    for (size_t d = nodes_.size(); d > 0; --d) {
      const Partial& x = levels_[d][static_cast<size_t>(at)];
      by_position[d - 1] = option_tmpc_[static_cast<size_t>(nodes_[d - 1])][static_cast<size_t>(x.combo)];
      at = x.parent;
    }
    std::vector<int>& tmpc = out.tmpc.emplace_back();
    for (size_t i : ascending) tmpc.push_back(by_position[i]);
  }
  return out;
}

GrowingStage::ExactishSum GrowingStage::ExactishSum::plus(double x) const {
  // Knuth's two-sum: s + e equals hi + x exactly; then the low parts, renormalised.
  const double s = hi + x, v = s - hi, e = (hi - (s - v)) + (x - v);
  const double low = lo + e, sum = s + low;
  return ExactishSum{sum, low - (sum - s)};
}

}  // namespace phaze::piper
