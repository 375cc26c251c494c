#include "piper/choices.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
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

/// A partial choice over the groups merged so far: its sums and how it was built.
struct Partial {
  double alpha = 0, beta = 0, a = 0, m1 = 0;
  int parent = -1;  ///< index in the previous level
  int combo = -1;   ///< index of the group's combination
};

bool dominates(const Partial& x, const Partial& y) {
  return x.alpha <= y.alpha && x.beta <= y.beta && x.a <= y.a && x.m1 <= y.m1;
}

/// Points compared with each new one when pruning with several values of β: dropping a dominated choice only
/// saves work (every query takes the best of all choices kept), so each point is checked against the latest
/// kept ones, the closest in sorted order, and the pruning stays linear.
constexpr size_t kPruneWindow = 64;

/// Drops dominated points of `points`, given by α non-decreasing (the later of equal ones). With one value of
/// β (TMPCs of equal parameter bytes, the usual case) every dominated point goes: a point is dominated when
/// an earlier one needs no more memory, found on the staircase of the earlier points' (a, m1). Otherwise
/// each is checked against a window of the latest kept.
std::vector<Partial> non_dominated(const std::vector<Partial>& points, size_t stage_size) {
  const bool one_beta =
      std::all_of(points.begin(), points.end(), [&](const Partial& p) { return p.beta == points.front().beta; });
  // (a, least m1 of the kept points with that a or less), a increasing and m1 decreasing.
  thread_local std::vector<std::pair<double, double>> staircase;
  staircase.clear();
  std::vector<Partial> kept;
  for (const Partial& p : points) {
    bool dominated = false;
    if (one_beta) {
      auto at = std::upper_bound(staircase.begin(), staircase.end(), p.a,
                                 [](double a, const std::pair<double, double>& e) { return a < e.first; });
      dominated = at != staircase.begin() && std::prev(at)->second <= p.m1;
      if (!dominated) {
        if (at != staircase.begin() && std::prev(at)->first == p.a) {
          std::prev(at)->second = p.m1;
        } else {
          at = staircase.insert(at, {p.a, p.m1}) + 1;
        }
        auto end = at;
        while (end != staircase.end() && end->second >= p.m1) ++end;
        staircase.erase(at, end);
      }
    } else {
      for (size_t k = kept.size(); k-- > 0 && kept.size() - k <= kPruneWindow;)
        if (dominates(kept[k], p)) {
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
  return kept;
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

}  // namespace

StageChoices stage_choices(const Problem& problem, const std::vector<int>& nodes, const std::vector<char>& in_stage,
                           int w, bool with_tmpcs) {
  StageChoices out;
  const double B = problem.bandwidth_bytes_per_s, N = static_cast<double>(problem.micro_batches);
  // Each node's options, those another option of the same node dominates dropped.
  std::vector<std::vector<Option>> node_options;
  for (int v : nodes) {
    const Node& node = problem.nodes[static_cast<size_t>(v)];
    const std::vector<Tmpc>& tmpcs = node.tmpcs[static_cast<size_t>(w)];
    if (tmpcs.empty()) return out;
    std::vector<Option> options;
    for (size_t l = 0; l < tmpcs.size(); ++l) {
      const Tmpc& c = tmpcs[l];
      const double cut = cut_bytes(problem, node, c, in_stage);
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
    node_options.push_back(std::move(kept));
  }

  // Nodes with the same options (the identical layers of a stage) form a group: only how many of them take
  // each option matters.
  std::map<std::vector<std::tuple<double, double, double, double>>, size_t> group_of;
  std::vector<std::vector<size_t>> groups;  // positions in `nodes`
  for (size_t i = 0; i < node_options.size(); ++i) {
    std::vector<std::tuple<double, double, double, double>> key;
    for (const Option& o : node_options[i]) key.push_back(o.key());
    const auto [at, added] = group_of.emplace(key, groups.size());
    if (added) groups.emplace_back();
    groups[at->second].push_back(i);
  }

  std::vector<std::vector<Partial>> levels{{Partial{}}};
  std::vector<std::vector<std::vector<int>>> combos(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<Option>& options = node_options[groups[g].front()];
    std::vector<int> counts;
    compositions(static_cast<int>(groups[g].size()), options.size(), counts, combos[g]);
    // One run per combination, each in the α order of the level (adding a constant keeps it), merged.
    std::vector<Partial> next;
    const std::vector<Partial>& level = levels.back();
    if (static_cast<int64_t>(level.size() * combos[g].size()) > piper_limits::kPartialChoices)
      throw InputError(
          fmt::format("a stage of {} nodes has more than {} partial TMPC choices: too many to choose "
                      "among exactly",
                      nodes.size(), piper_limits::kPartialChoices));
    std::vector<size_t> run_starts;
    for (size_t c = 0; c < combos[g].size(); ++c) {
      Partial add;
      for (size_t l = 0; l < options.size(); ++l) {
        const double k = combos[g][c][l];
        add.alpha += k * options[l].alpha;
        add.beta += k * options[l].beta;
        add.a += k * options[l].a;
        add.m1 += k * options[l].m1;
      }
      run_starts.push_back(next.size());
      for (size_t p = 0; p < level.size(); ++p) {
        const Partial x{level[p].alpha + add.alpha, level[p].beta + add.beta, level[p].a + add.a,
                        level[p].m1 + add.m1,       static_cast<int>(p),      static_cast<int>(c)};
        // Memory only grows as nodes are added: a partial choice that does not fit with one micro-batch in
        // flight never will.
        if (x.m1 <= problem.memory_per_device_bytes) next.push_back(x);
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
    levels.push_back(non_dominated(std::move(next), nodes.size()));
  }

  // Only y_max matters of the memory: keep the choices no other beats in α, β and y_max.
  struct Final {
    StageChoice choice;
    int index;
  };
  // No stage ever has more than min(N, K) micro-batches in flight (y = ⌈σ/d⌉ ≤ σ = Σ d ≤ N, and Σ d ≤ K):
  // beyond that y_max makes no difference, so it is capped there and the choices above it collapse into the
  // fastest of them.
  const int64_t most = std::min(problem.micro_batches, problem.devices);
  std::vector<Final> finals;
  const std::vector<Partial>& last = levels.back();
  for (size_t i = 0; i < last.size(); ++i) {
    const int64_t y = std::min(max_in_flight(last[i].a, last[i].m1, problem.memory_per_device_bytes), most);
    if (y >= 1) finals.push_back({{last[i].alpha, last[i].beta, y}, static_cast<int>(i)});
  }
  std::stable_sort(finals.begin(), finals.end(), [](const Final& x, const Final& y) {
    return std::tuple(-x.choice.max_in_flight, x.choice.alpha, x.choice.beta) <
           std::tuple(-y.choice.max_in_flight, y.choice.alpha, y.choice.beta);
  });
  for (const Final& f : finals) {
    bool dominated = false;
    for (size_t k = out.choices.size(); k-- > 0 && out.choices.size() - k <= kPruneWindow;)
      if (out.choices[k].alpha <= f.choice.alpha && out.choices[k].beta <= f.choice.beta) {
        dominated = true;  // it has y_max ≥ f's (sorted) and is no slower at any d
        break;
      }
    if (dominated) continue;
    out.choices.push_back(f.choice);
    if (!with_tmpcs) continue;
    // Each group's counts, back through the levels; a group's nodes take the options in node order.
    std::vector<int> tmpc(nodes.size(), -1);
    int at = f.index;
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

}  // namespace phaze::piper
