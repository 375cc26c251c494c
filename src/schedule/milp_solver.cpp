// The per-layer scheduling MILP of layer-schedule.md (section 3) solved exactly with COIN-OR CBC, inside the
// two-phase scheme of section 4 (core-assignment constraints only when the replay needs them, then the
// pairing check).

#include "schedule/milp_solver.h"

#include <fmt/format.h>

#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <CoinMessageHandler.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "util/dag.h"
#include "util/input_error.h"

namespace phaze::schedule {

namespace detail {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
/// Most times the longest usable latency may be of the shortest non-zero one. Times are scaled so that the
/// longest is 1 and CBC runs with primal and integer tolerances of 1e-9: at this ratio the shortest latency
/// is still 1000 tolerances long, and rounding in the big-M rows (an integrality error times H, at most
/// a few units) stays well below it. Near 1e9 short operators vanish into the tolerance and CBC "proves"
/// schedules that are not optimal.
constexpr double kMaxLatencySpan = 1e6;
/// Coefficients of scaled rows at most this large are differences that cancel (the shortest latency is at
/// least 1e-6 after scaling): they are zeros, kept out of the rows.
constexpr double kNoise = 1e-12;
/// Stand-ins for column indices of variables fixed by the formulation (x of comparable pairs by S5, y of a
/// collective): they are constants in the rows, not columns (Clp has aborted on models with many fixed
/// columns and tiny coefficients).
constexpr int kFixedZero = -1;
constexpr int kFixedOne = -2;

/// How an operator of V takes part in the model: Comm becomes Vector under Problem::comm_as_vector.
enum class Kind { Tensor, Vector, Fused, Link };

/// The preprocessed problem (layer-schedule.md 2): V, reachability, big-M, scale.
struct Instance {
  const Problem* problem = nullptr;
  int n = 0;                             ///< |V|
  std::vector<int> task;                 ///< V index -> task index
  std::vector<Kind> kind;                ///< per V index
  std::vector<double> single;            ///< ℓ, seconds (= ℓ' when y is forced 1)
  std::vector<double> parallel;          ///< ℓ', seconds (= ℓ when y is forced 0)
  std::vector<char> may_parallel;        ///< y is not forced 0 (compute operator, not a collective)
  std::vector<char> parallel_only;       ///< y is forced 1: the single-core variant is longer than H
  std::vector<std::vector<char>> reach;  ///< reach[a][b]: b ∈ R(a), over V indices
  std::vector<int> full_order;           ///< topological order of all tasks
  std::vector<int> order;                ///< V indices in topological order
  std::vector<std::vector<int>> full_preds;
  int64_t n_tc = 0;
  int64_t n_vc = 0;
  int64_t n_p = 0;
  double big_m = 0;      ///< H = Σ min(ℓ, ℓ'), seconds
  double scale = 1;      ///< internal time unit = seconds · scale (largest latency becomes 1)
  double tolerance = 0;  ///< seconds; overlaps shorter than this are rounding noise in the replay

  bool uses_tc(int a) const { return kind[a] == Kind::Tensor || kind[a] == Kind::Fused; }
  bool uses_vc(int a) const { return kind[a] == Kind::Vector || kind[a] == Kind::Fused; }
  bool compute(int a) const { return kind[a] != Kind::Link; }
  /// The serial schedule's mode of a: its faster variant.
  bool faster_parallel(int a) const { return parallel_only[a] || (may_parallel[a] && parallel[a] < single[a]); }
  bool comparable(int a, int b) const { return reach[a][b] || reach[b][a]; }
  /// S7 applies to the pair (a parallel one excludes the other).
  bool exclusive(int a, int b) const {
    if (!compute(a) || !compute(b)) return false;
    if (!problem->overlap_across_types) return true;
    return kind[a] == kind[b] || kind[a] == Kind::Fused || kind[b] == Kind::Fused;
  }
  double duration(int a, bool par) const { return par ? parallel[a] : single[a]; }
  /// Cores of each type busy while a runs (section 4 step 3: a parallel fused operator counts n_P of each).
  int64_t tc_cores(int a, bool par) const {
    if (!uses_tc(a)) return 0;
    if (!par) return 1;
    return kind[a] == Kind::Fused ? n_p : n_tc;
  }
  int64_t vc_cores(int a, bool par) const {
    if (!uses_vc(a)) return 0;
    if (!par) return 1;
    return kind[a] == Kind::Fused ? n_p : n_vc;
  }
};

int no_callback(CbcModel* /*model*/, int /*where_from*/) {
  return 0;
}

bool bad_latency(double v) {
  return !std::isfinite(v) || v < 0;
}

/// Structural checks the model relies on (indices, self-loops, cycles); returns the topological order.
std::vector<int> topological_order(const Problem& problem, std::vector<std::vector<int>>& succs,
                                   std::vector<std::vector<int>>& preds) {
  const int count = static_cast<int>(problem.tasks.size());
  succs.assign(count, {});
  preds.assign(count, {});
  for (const auto& [from, to] : problem.edges) {
    if (from < 0 || from >= count || to < 0 || to >= count)
      throw std::invalid_argument("milp: edge (" + std::to_string(from) + ", " + std::to_string(to) +
                                  ") names a task that does not exist");
    if (from == to) throw std::invalid_argument("milp: task '" + problem.tasks[from].id + "' depends on itself");
    succs[from].push_back(to);
    preds[to].push_back(from);
  }
  std::vector<int> order = util::topological_order(succs);
  if (static_cast<int>(order.size()) != count) throw std::invalid_argument("milp: the task graph has a cycle");
  return order;
}

/// Appends task `t` to the instance's operators: its kind and its single- and parallel-core latencies.
void add_operator(Instance& in, const Problem& problem, const Task& t) {
  Kind k = Kind::Link;
  bool par = true;
  switch (t.kind) {
    case TaskKind::Tensor: k = Kind::Tensor; break;
    case TaskKind::Vector: k = Kind::Vector; break;
    case TaskKind::Fused: k = Kind::Fused; break;
    case TaskKind::Comm:
      k = problem.comm_as_vector ? Kind::Vector : Kind::Link;
      par = false;
      break;
    case TaskKind::None: break;
  }
  in.kind.push_back(k);
  in.may_parallel.push_back(par ? 1 : 0);
  in.parallel_only.push_back(0);
  in.single.push_back(t.single_s);
  in.parallel.push_back(par ? t.parallel_s : t.single_s);
  in.big_m += std::min(in.single.back(), in.parallel.back());
}

/// A variant longer than H, the serial schedule's makespan, is in no optimal schedule: the operator is
/// forced into its other one. Then an unused variant (a single-core run of 1e10 s) no longer sets the time
/// scale, which had pushed every other latency below CBC's tolerances.
void drop_variants_beyond_serial(Instance& in) {
  for (int a = 0; a < in.n; ++a) {
    if (!in.may_parallel[a]) continue;
    if (in.single[a] > in.big_m) {
      in.parallel_only[a] = 1;
      in.single[a] = in.parallel[a];
    } else if (in.parallel[a] > in.big_m) {
      in.may_parallel[a] = 0;
      in.parallel[a] = in.single[a];
    }
  }
}

/// The time scale (1 / the longest latency) and tolerance; refuses latencies further apart than CBC's
/// tolerances resolve.
void set_scale(Instance& in, const Problem& problem) {
  double largest = 0;
  double smallest = 0;  // non-zero
  int longest = -1;
  int shortest = -1;
  for (int a = 0; a < in.n; ++a)
    for (const double v : {in.single[a], in.parallel[a]}) {
      if (v > largest) {
        largest = v;
        longest = a;
      }
      if (v > 0 && (shortest < 0 || v < smallest)) {
        smallest = v;
        shortest = a;
      }
    }
  if (shortest >= 0 && largest > kMaxLatencySpan * smallest)
    throw InputError(fmt::format(
        "ilp solver: operator '{}' takes {:g} s, more than {:g} times less than the {:g} s of '{}', which CBC's "
        "tolerances cannot resolve (use --solver exact)",
        problem.tasks[in.task[shortest]].id, smallest, kMaxLatencySpan, largest, problem.tasks[in.task[longest]].id));
  in.scale = largest > 0 ? 1.0 / largest : 1.0;
  in.tolerance = 1e-12 * in.big_m;
}

/// R(u) over the full DAG of `count` tasks (paths through NOPs), restricted to the operators (`index`: a
/// task's operator, or −1).
void set_reach(Instance& in, const std::vector<std::vector<int>>& succs, const std::vector<int>& index) {
  const int count = static_cast<int>(succs.size());
  std::vector<std::vector<char>> full(count, std::vector<char>(count, 0));
  for (auto it = in.full_order.rbegin(); it != in.full_order.rend(); ++it) {
    const int u = *it;
    for (int v : succs[u]) {
      full[u][v] = 1;
      for (int w = 0; w < count; ++w)
        if (full[v][w]) full[u][w] = 1;
    }
  }
  in.reach.assign(in.n, std::vector<char>(in.n, 0));
  for (int a = 0; a < in.n; ++a)
    for (int b = 0; b < in.n; ++b) in.reach[a][b] = full[in.task[a]][in.task[b]];
  for (int u : in.full_order)
    if (index[u] >= 0) in.order.push_back(index[u]);
}

Instance prepare(const Problem& problem) {
  Instance in;
  in.problem = &problem;
  in.n_tc = problem.tensor_cores;
  in.n_vc = problem.vector_cores;
  in.n_p = problem.pairs();
  const int count = static_cast<int>(problem.tasks.size());
  std::vector<std::vector<int>> succs;
  in.full_order = topological_order(problem, succs, in.full_preds);

  std::vector<int> index(count, -1);
  for (int u = 0; u < count; ++u) {
    const Task& t = problem.tasks[u];
    if (t.kind == TaskKind::None) continue;
    index[u] = in.n++;
    in.task.push_back(u);
    add_operator(in, problem, t);
  }
  drop_variants_beyond_serial(in);
  set_scale(in, problem);
  set_reach(in, succs, index);
  return in;
}

/// A solution of one MILP, rounded.
struct PhaseSolution {
  bool proven_optimal = false;
  double objective_s = 0;
  std::vector<char> y;
  std::vector<std::vector<char>> x;
  std::vector<int64_t> tensor_core;  ///< from z^TC when enabled, else -1
  std::vector<int64_t> vector_core;
  int rows = 0;
  int columns = 0;
  double seconds = 0;
  double root_bound_s = 0;
};

/// Builds the MILP of section 3 with S1-S8 and, per enabled type, S9-S11 (S12 when both are enabled).
class MilpBuilder {
  using Terms = std::vector<std::pair<int, double>>;

 public:
  /// `lower_bound_s` > 0: a proven lower bound on this model's optimum (an earlier phase's optimum: that
  /// phase solved a relaxation of this one), added as T ≥ it when `cuts`.
  MilpBuilder(const Instance& in, bool tc, bool vc, bool cuts, double lower_bound_s = 0) : in_(in), tc_(tc), vc_(vc) {
    const int n = in.n;
    col_t_.resize(n);
    col_y_.resize(n);
    col_x_.assign(n, std::vector<int>(n, kFixedZero));
    col_ztc_.assign(n, {});
    col_zvc_.assign(n, {});
    col_makespan_ = add_column(0, kInfinity, 1, false);
    for (int a = 0; a < n; ++a) col_t_[a] = add_column(0, kInfinity, 0, false);
    for (int a = 0; a < n; ++a)
      col_y_[a] = in.parallel_only[a] ? kFixedOne : in.may_parallel[a] ? add_column(0, 1, 0, true) : kFixedZero;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        if (a == b) continue;
        // S5: x_ab = 1, x_ba = 0 for b ∈ R(a).
        col_x_[a][b] = in.reach[a][b] ? kFixedOne : in.reach[b][a] ? kFixedZero : add_column(0, 1, 0, true);
      }
    // S10 by omission: z^X_ac exists only when a uses X (and may run on one core: S9 makes it 0 otherwise).
    for (int a = 0; a < n; ++a) {
      if (in.parallel_only[a]) continue;
      if (tc_ && in.uses_tc(a))
        for (int64_t c = 0; c < in.n_tc; ++c) col_ztc_[a].push_back(add_column(0, 1, 0, true));
      if (vc_ && in.uses_vc(a))
        for (int64_t c = 0; c < in.n_vc; ++c) col_zvc_[a].push_back(add_column(0, 1, 0, true));
    }
    add_rows();
    if (cuts) {
      add_makespan_bounds();
      add_capacity_rows();
      add_symmetry_rows();
      // A margin of 1e-9 relative keeps CBC's rounding of the earlier optimum from cutting off this one.
      if (lower_bound_s > 0) add_row(lower_bound_s * in.scale * (1 - 1e-9), kInfinity, {{col_makespan_, 1}});
    }
  }

  PhaseSolution solve(const MilpOptions& options) const;

 private:
  /// The model as a CBC model of CLP's LP, its integer columns marked.
  OsiClpSolverInterface lp_of_model() const;
  /// The phase's schedule read from a solution of the model's columns.
  void read_solution(const double* sol, PhaseSolution& out) const;

  int add_column(double lo, double hi, double cost, bool integer) {
    col_lo_.push_back(lo);
    col_hi_.push_back(hi);
    cost_.push_back(cost);
    integer_.push_back(integer ? 1 : 0);
    return static_cast<int>(col_lo_.size()) - 1;
  }

  /// Adds lo ≤ Σ value·column ≤ hi; fixed variables move to the bounds, a row left without columns is
  /// dropped (it holds: the fixed values come from a consistent order).
  void add_row(double lo, double hi, const std::vector<std::pair<int, double>>& terms) {
    double constant = 0;
    const size_t first = index_.size();
    for (const auto& [col, value] : terms) {
      if (value == 0 || col == kFixedZero) continue;
      if (col == kFixedOne) {
        constant += value;
        continue;
      }
      index_.push_back(col);
      value_.push_back(value);
    }
    if (index_.size() == first) return;
    starts_.push_back(static_cast<CoinBigIndex>(index_.size()));
    row_lo_.push_back(lo - constant);
    row_hi_.push_back(hi - constant);
  }

  /// The value of a column or fixed variable in a solution vector.
  static double value_of(const double* sol, int col) { return col == kFixedOne ? 1 : col == kFixedZero ? 0 : sol[col]; }

  double length(int a) const { return in_.single[a] * in_.scale; }
  /// p_a = ℓ_a + (ℓ'_a − ℓ_a)·y_a (S2 substituted): the coefficient of y_a.
  double stretch(int a) const { return in_.may_parallel[a] ? (in_.parallel[a] - in_.single[a]) * in_.scale : 0; }
  bool fixed(int a, int b) const { return in_.comparable(a, b); }

  void add_rows() {
    const Instance& in = in_;
    const int n = in.n;
    const double big_m = in.big_m * in.scale;
    // S1: T − t_a − (ℓ'−ℓ)·y_a ≥ ℓ_a.
    for (int a = 0; a < n; ++a)
      add_row(length(a), kInfinity, {{col_makespan_, 1}, {col_t_[a], -1}, {col_y_[a], -stretch(a)}});
    // S5 (timing): t_a + p_a ≤ t_b for b ∈ R(a).
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        if (a != b && in.reach[a][b])
          add_row(-kInfinity, -length(a), {{col_t_[a], 1}, {col_t_[b], -1}, {col_y_[a], stretch(a)}});
    // S3: x_ab + x_ba ≤ 1 (for comparable pairs implied by the S5 values).
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b)
        if (!fixed(a, b)) add_row(-kInfinity, 1, {{col_x_[a][b], 1}, {col_x_[b][a], 1}});
    // S4: x_ac ≥ x_ab + x_bc − 1; rows implied by the S5 values (x_ac fixed 1, x_ab or x_bc fixed 0) are
    // left out.
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        if (b == a || in.reach[b][a]) continue;
        for (int c = 0; c < n; ++c) {
          if (c == a || c == b || in.reach[a][c] || in.reach[c][b]) continue;
          add_row(-1, kInfinity, {{col_x_[a][c], 1}, {col_x_[a][b], -1}, {col_x_[b][c], -1}});
        }
      }
    // S6: t_a + p_a − H·(1 − x_ab) ≤ t_b for incomparable (a, b).
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        if (a != b && !fixed(a, b))
          add_row(-kInfinity, big_m - length(a),
                  {{col_t_[a], 1}, {col_t_[b], -1}, {col_y_[a], stretch(a)}, {col_x_[a][b], big_m}});
    // S7: x_ab + x_ba ≥ y_a for incomparable compute pairs (variant: sharing a core type).
    for (int a = 0; a < n; ++a) {
      if (!in.may_parallel[a]) continue;
      for (int b = 0; b < n; ++b)
        if (a != b && !fixed(a, b) && in.exclusive(a, b))
          add_row(0, kInfinity, {{col_x_[a][b], 1}, {col_x_[b][a], 1}, {col_y_[a], -1}});
    }
    // S8: one collective at a time on the link.
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b)
        if (!fixed(a, b) && in.kind[a] == Kind::Link && in.kind[b] == Kind::Link)
          add_row(1, kInfinity, {{col_x_[a][b], 1}, {col_x_[b][a], 1}});
    add_core_rows(col_ztc_);
    add_core_rows(col_zvc_);
    // S12: a fused operator uses the same index on both types.
    if (tc_ && vc_)
      for (int a = 0; a < n; ++a)
        if (in.kind[a] == Kind::Fused && !in.parallel_only[a])
          for (int64_t c = 0; c < in.n_p; ++c) add_row(0, 0, {{col_ztc_[a][c], 1}, {col_zvc_[a][c], -1}});
  }

  void add_core_rows(const std::vector<std::vector<int>>& z) {
    const int n = in_.n;
    for (int a = 0; a < n; ++a) {
      if (z[a].empty()) continue;
      // S9: Σ_c z_ac + y_a = 1.
      std::vector<std::pair<int, double>> terms;
      for (int col : z[a]) terms.emplace_back(col, 1);
      terms.emplace_back(col_y_[a], 1);
      add_row(1, 1, terms);
    }
    // S11: x_ab + x_ba ≥ z_ac + z_bc − 1 for incomparable pairs on the same core.
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b) {
        if (z[a].empty() || z[b].empty() || fixed(a, b)) continue;
        for (size_t c = 0; c < z[a].size(); ++c)
          add_row(-1, kInfinity, {{col_x_[a][b], 1}, {col_x_[b][a], 1}, {z[a][c], -1}, {z[b][c], -1}});
      }
  }

  // Valid inequalities (not in layer-schedule.md 3). Every schedule of the full problem satisfies them, so
  // each phase still solves a relaxation of the full problem (section 4) and the scheme stays exact. They
  // only tighten the LP relaxation, which the big-M rows S6 leave weak.
  //
  // Makespan and start-time bounds rest on two facts about any schedule:
  // (a) a set K of parallel-capable operators that pairwise exclude each other (S7: any two compute
  //     operators; under overlap_across_types those sharing a core type) run their parallel variants in
  //     disjoint intervals, and these are disjoint from the single-core run of every operator that each
  //     k ∈ K excludes;
  // (b) the operators of a set A running single-core at one instant are pairwise incomparable and each
  //     holds a core, so at most d(A) = min(width of A, cores A can use) of them run at once, and the time
  //     during which some of them runs is at least Σ_{i∈A} (1 − y_i)·ℓ_i / d(A). A chain has d = 1.
  // So a window of time that contains every operator of K and A, with each k ∈ K excluding each i ∈ A, is
  // at least Σ_{k∈K} y_k·ℓ'_k + Σ_{i∈A} (1 − y_i)·ℓ_i / d(A) long. Windows used: [0, T] (all operators),
  // [0, t_j] (the ancestors of j) and [t_j + p_j, T] (the descendants of j). Collectives on the link run
  // one at a time (S8), so the same holds for a set A of them with d = 1 and K empty.
  void add_makespan_bounds() {
    const Instance& in = in_;
    const int n = in.n;
    std::vector<int> all(n);
    for (int a = 0; a < n; ++a) all[a] = a;
    const Terms makespan = {{col_makespan_, 1}};

    // Whole schedule: the operators of each core type, and chains of compute operators through each one
    // (the longest by ℓ and by ℓ'); under the variant also each operator alone (its K is larger there).
    for (const std::vector<int>& set : work_sets(all)) add_window_bound(makespan, 0, all, set);
    std::vector<char> everywhere(n, 1);
    for (int j = 0; j < n; ++j) {
      if (!in.compute(j)) continue;
      add_window_bound(makespan, 0, all, longest_chain(everywhere, false, j));
      add_window_bound(makespan, 0, all, longest_chain(everywhere, true, j));
      if (in.problem->overlap_across_types) add_window_bound(makespan, 0, all, {j});
    }
    add_window_bound(makespan, 0, {}, links(all));

    // Before each operator starts and after it ends.
    for (int j = 0; j < n; ++j) {
      std::vector<int> before;
      std::vector<int> after;
      for (int a = 0; a < n; ++a) {
        if (in.reach[a][j]) before.push_back(a);
        if (in.reach[j][a]) after.push_back(a);
      }
      const Terms start = {{col_t_[j], 1}};
      // T − t_j − p_j with p_j = ℓ_j + (ℓ'_j − ℓ_j)·y_j.
      const Terms rest = {{col_makespan_, 1}, {col_t_[j], -1}, {col_y_[j], -stretch(j)}};
      for (const auto& [window, lhs, constant] :
           {std::tuple{&before, &start, 0.0}, std::tuple{&after, &rest, length(j)}}) {
        if (window->empty()) continue;
        std::vector<char> inside(n, 0);
        for (int a : *window) inside[a] = 1;
        for (const std::vector<int>& set : work_sets(*window)) add_window_bound(*lhs, constant, *window, set);
        add_window_bound(*lhs, constant, *window, longest_chain(inside, false, -1));
        add_window_bound(*lhs, constant, {}, links(*window));
      }
    }
  }

  /// The compute operators of `window` that use tensor cores, and those that use vector cores.
  std::vector<std::vector<int>> work_sets(const std::vector<int>& window) const {
    std::vector<int> tensor;
    std::vector<int> vector;
    for (int a : window) {
      if (in_.uses_tc(a)) tensor.push_back(a);
      if (in_.uses_vc(a)) vector.push_back(a);
    }
    return {tensor, vector};
  }

  /// The collectives on the link among `window`.
  std::vector<int> links(const std::vector<int>& window) const {
    std::vector<int> out;
    for (int a : window)
      if (in_.kind[a] == Kind::Link) out.push_back(a);
    return out;
  }

  /// The longest chain (by ℓ, or by ℓ' when `by_parallel`) of compute operators inside `window`, through
  /// operator `through` (which must be inside) or anywhere when it is −1.
  std::vector<int> longest_chain(const std::vector<char>& window, bool by_parallel, int through) const {
    const Instance& in = in_;
    const int n = in.n;
    const auto weight = [&](int a) { return by_parallel ? in.parallel[a] : in.single[a]; };
    const auto member = [&](int a) { return window[a] && in.compute(a); };
    std::vector<double> head(n, 0);
    std::vector<double> tail(n, 0);
    std::vector<int> prev(n, -1);
    std::vector<int> next(n, -1);
    for (int a : in.order) {
      if (!member(a)) continue;
      for (int b : in.order)
        if (member(b) && in.reach[b][a] && (prev[a] < 0 || head[b] > head[prev[a]])) prev[a] = b;
      head[a] = weight(a) + (prev[a] < 0 ? 0 : head[prev[a]]);
    }
    for (auto it = in.order.rbegin(); it != in.order.rend(); ++it) {
      const int a = *it;
      if (!member(a)) continue;
      for (int b : in.order)
        if (member(b) && in.reach[a][b] && (next[a] < 0 || tail[b] > tail[next[a]])) next[a] = b;
      tail[a] = weight(a) + (next[a] < 0 ? 0 : tail[next[a]]);
    }
    int pivot = through;
    if (pivot < 0)
      for (int a = 0; a < n; ++a)
        if (member(a) && (pivot < 0 || head[a] > head[pivot])) pivot = a;
    std::vector<int> chain;
    if (pivot < 0 || !member(pivot)) return chain;
    for (int a = prev[pivot]; a >= 0; a = prev[a]) chain.push_back(a);
    std::reverse(chain.begin(), chain.end());
    if (through < 0) {
      chain.push_back(pivot);
      return chain;
    }
    for (int a = pivot; a >= 0; a = next[a]) chain.push_back(a);
    return chain;
  }

  /// Most operators of `set` that can run single-core at one instant: pairwise incomparable (Dilworth:
  /// |set| minus a maximum matching of a → b with b ∈ R(a)) and no more than the cores they use.
  int64_t concurrency(const std::vector<int>& set) const {
    const Instance& in = in_;
    const int m = static_cast<int>(set.size());
    std::vector<int> matched(m, -1);  // right vertex -> left vertex
    int matching = 0;
    for (int l = 0; l < m; ++l) {
      std::vector<char> seen(m, 0);
      if (augment(set, l, matched, seen)) ++matching;
    }
    bool all_tc = true;
    bool all_vc = true;
    for (int a : set) {
      all_tc = all_tc && in.uses_tc(a);
      all_vc = all_vc && in.uses_vc(a);
    }
    const int64_t cores = all_tc && all_vc ? in.n_p : all_tc ? in.n_tc : all_vc ? in.n_vc : in.n_tc + in.n_vc;
    return std::min<int64_t>(m - matching, cores);
  }

  bool augment(const std::vector<int>& set, int l, std::vector<int>& matched, std::vector<char>& seen) const {
    for (size_t r = 0; r < set.size(); ++r) {
      if (seen[r] || !in_.reach[set[l]][set[r]]) continue;
      seen[r] = 1;
      if (matched[r] < 0 || augment(set, matched[r], matched, seen)) {
        matched[r] = l;
        return true;
      }
    }
    return false;
  }

  /// Sets K of fact (a): parallel-capable operators of `window` that exclude every operator of `set` and
  /// each other. Without the variant that is one set; under it, those using tensor cores and those using
  /// vector cores (fused ones in both).
  std::vector<std::vector<int>> exclusive_sets(const std::vector<int>& window, const std::vector<int>& set) const {
    std::vector<int> all;
    for (int k : window) {
      if (!in_.may_parallel[k]) continue;
      bool excludes = true;
      for (int i : set) excludes = excludes && in_.exclusive(k, i);
      if (excludes) all.push_back(k);
    }
    if (!in_.problem->overlap_across_types) return {all};
    std::vector<int> tensor;
    std::vector<int> vector;
    for (int k : all) {
      if (in_.uses_tc(k)) tensor.push_back(k);
      if (in_.uses_vc(k)) vector.push_back(k);
    }
    if (tensor.empty() || vector.empty() || tensor == vector) return {tensor.empty() ? vector : tensor};
    return {tensor, vector};
  }

  /// lhs ≥ constant + Σ_{k∈K} y_k·ℓ'_k + Σ_{i∈set} (1 − y_i)·ℓ_i / d(set) for each K of exclusive_sets
  /// (K empty when `set` holds collectives); lhs and constant in internal units.
  void add_window_bound(const Terms& lhs, double constant, const std::vector<int>& window,
                        const std::vector<int>& set) {
    const Instance& in = in_;
    if (set.empty()) return;
    const bool link = in.kind[set.front()] == Kind::Link;
    const double d = link ? 1.0 : static_cast<double>(concurrency(set));
    const std::vector<std::vector<int>> ks = link ? std::vector<std::vector<int>>{{}} : exclusive_sets(window, set);
    for (const std::vector<int>& k : ks) {
      std::map<int, double> coef;
      double rhs = constant;
      for (const auto& [col, value] : lhs)
        if (col >= 0) coef[col] += value;
      for (int a : k) coef[col_y_[a]] -= in.parallel[a] * in.scale;
      for (int a : set) {
        const double share = in.single[a] * in.scale / d;
        rhs += share;
        if (col_y_[a] != kFixedZero) coef[col_y_[a]] += share;  // add_row moves kFixedOne terms to the bounds
      }
      // A y coefficient ℓ_a/d − ℓ'_a that cancels (ℓ_a = d·ℓ'_a) is left with rounding noise of about 1e-17;
      // with such an entry, Clp's scaled simplex under CBC returned an LP bound above the true one and cut
      // off the optimum. Latencies are scaled to at most 1, so anything this small is a zero.
      Terms terms;
      for (const auto& [col, value] : coef)
        if (std::abs(value) > kNoise) terms.emplace_back(col, value);
      if (!seen_rows_.insert({terms, rhs}).second) continue;
      add_row(rhs, kInfinity, terms);
    }
  }

  // Core capacity without core variables: among n_X + 1 pairwise incomparable operators that use core type
  // X, some two do not overlap (Helly: pairwise overlapping intervals share an instant, when n_X + 1 cores
  // of type X would be busy; a parallel one overlaps none of them), and x orders every pair that does not
  // overlap: Σ_{a≠b ∈ S} x_ab ≥ 1. With all of them no replay exceeds n_X, so phase 1 needs no re-solve for
  // the core counts (z only for the pairing check). They are enumerated up to a limit per type, any subset
  // being valid.
  void add_capacity_rows() {
    const Instance& in = in_;
    constexpr int kLimit = 4000;
    for (int type = 0; type < 2; ++type) {
      const int64_t cores = type == 0 ? in.n_tc : in.n_vc;
      std::vector<int> users;
      for (int a = 0; a < in.n; ++a)
        if (type == 0 ? in.uses_tc(a) : in.uses_vc(a)) users.push_back(a);
      if (static_cast<int64_t>(users.size()) <= cores) continue;
      int added = 0;
      std::vector<int> set;
      const auto extend = [&](const auto& self, size_t from) -> void {
        if (added >= kLimit) return;
        if (static_cast<int64_t>(set.size()) == cores + 1) {
          Terms terms;
          for (int a : set)
            for (int b : set)
              if (a != b) terms.emplace_back(col_x_[a][b], 1);
          add_row(1, kInfinity, terms);
          ++added;
          return;
        }
        for (size_t k = from; k < users.size(); ++k) {
          const int b = users[k];
          bool incomparable = true;
          for (int a : set) incomparable = incomparable && !in.comparable(a, b);
          if (!incomparable) continue;
          set.push_back(b);
          self(self, k + 1);
          set.pop_back();
        }
      };
      extend(extend, 0);
    }
  }

  // Symmetry breaking. Cores of one type are interchangeable, except that tensor core c and vector core c
  // (c < n_P) form a pair: with both types enabled the groups are the pairs, the remaining tensor cores and
  // the remaining vector cores; with one type, all of its cores. Renumbering the members of a group by the
  // first operator (in V order) placed on each keeps a schedule feasible with the same makespan, so some
  // optimal schedule has: an operator on member r ≥ 1 of a group comes after an operator on member r − 1.
  // Rows: u(a_m, r) ≤ Σ_{m' < m} u(a_{m'}, r − 1) over the operators a_0, a_1, … that may use the group.
  void add_symmetry_rows() {
    const Instance& in = in_;
    const auto group = [&](const std::vector<std::vector<int>>& first, const std::vector<std::vector<int>>& second,
                           int64_t from, int64_t to) {
      // u(a, r): operator a on member r, i.e. on core from + r of `first`, else of `second` (a fused
      // operator has equal columns in both by S12).
      std::vector<std::vector<int>> u;
      for (int a = 0; a < in.n; ++a) {
        const std::vector<int>& z = !first[a].empty() ? first[a] : second[a];
        if (static_cast<int64_t>(z.size()) < to) continue;
        u.emplace_back(z.begin() + from, z.begin() + to);
      }
      const int64_t members = to - from;
      for (size_t m = 0; m < u.size(); ++m)
        for (int64_t r = 1; r < members; ++r) {
          Terms terms = {{u[m][r], 1}};
          for (size_t earlier = 0; earlier < m; ++earlier) terms.emplace_back(u[earlier][r - 1], -1);
          add_row(-kInfinity, 0, terms);
        }
    };
    const std::vector<std::vector<int>> none(in.n);
    if (tc_ && vc_) {
      group(col_ztc_, col_zvc_, 0, in.n_p);
      group(col_ztc_, none, in.n_p, in.n_tc);
      group(col_zvc_, none, in.n_p, in.n_vc);
    } else if (tc_) {
      group(col_ztc_, none, 0, in.n_tc);
    } else if (vc_) {
      group(col_zvc_, none, 0, in.n_vc);
    }
  }

  /// The serial schedule (topological order, each operator with its faster variant, on core 0): always
  /// feasible, objective H.
  std::vector<double> serial_solution() const {
    const Instance& in = in_;
    std::vector<double> sol(col_lo_.size(), 0);
    // V in topological order of the full graph.
    std::vector<int> rank(in.n, 0);
    {
      std::vector<int> index(in.problem->tasks.size(), -1);
      for (int a = 0; a < in.n; ++a) index[in.task[a]] = a;
      int r = 0;
      for (int u : in.full_order)
        if (index[u] >= 0) rank[index[u]] = r++;
    }
    std::vector<int> order(in.n);
    for (int a = 0; a < in.n; ++a) order[rank[a]] = a;
    double now = 0;
    for (int a : order) {
      const bool par = in.faster_parallel(a);
      sol[col_t_[a]] = now;
      if (col_y_[a] >= 0) sol[col_y_[a]] = par ? 1 : 0;
      now += in.duration(a, par) * in.scale;
      if (!col_ztc_[a].empty() && !par) sol[col_ztc_[a][0]] = 1;
      if (!col_zvc_[a].empty() && !par) sol[col_zvc_[a][0]] = 1;
    }
    for (int a = 0; a < in.n; ++a)
      for (int b = 0; b < in.n; ++b)
        if (a != b && col_x_[a][b] >= 0) sol[col_x_[a][b]] = rank[a] < rank[b] ? 1 : 0;
    sol[col_makespan_] = now;
    return sol;
  }

  const Instance& in_;
  bool tc_;
  bool vc_;
  std::set<std::pair<Terms, double>> seen_rows_;  ///< valid inequalities added so far
  int col_makespan_ = -1;
  std::vector<int> col_t_;
  std::vector<int> col_y_;
  std::vector<std::vector<int>> col_x_;
  std::vector<std::vector<int>> col_ztc_;
  std::vector<std::vector<int>> col_zvc_;
  std::vector<double> col_lo_;
  std::vector<double> col_hi_;
  std::vector<double> cost_;
  std::vector<char> integer_;
  std::vector<CoinBigIndex> starts_{0};
  std::vector<int> index_;
  std::vector<double> value_;
  std::vector<double> row_lo_;
  std::vector<double> row_hi_;
};

/// The arguments of CBC's stand-alone driver for these models: exact, silent, single-threaded, and without
/// the parts that failed on them (each reason below).
std::vector<std::string> cbc_arguments(const MilpOptions& options) {
  std::vector<std::string> args = {"phaze"};
  const auto option = [&args](const char* name, const char* value) {
    args.emplace_back(name);
    args.emplace_back(value);
  };
  option("-log", "0");   // silent
  option("-slog", "0");  // silent LP solver
  option("-ratioGap", "0");
  option("-allowableGap", "0");
  // Accept any improvement: the default cutoff increment, 1e-5 internal units, is coarser than the smallest
  // latencies after scaling.
  option("-increment", "1e-10");
  option("-integerTolerance", "1e-9");
  // Latencies span five or more decades, so after scaling the shortest ones are ~1e-6 units. With Clp's
  // default tolerances (1e-7) a root LP bound came out 8e-6 too high (a worse schedule was "proven"
  // optimal), and on another model Clp aborted on an internal assertion; 1e-9 for both avoids both.
  option("-primalTolerance", "1e-9");
  option("-dualTolerance", "1e-9");
  // CBC's integer preprocessing returned wrong "optimal" makespans on some of these models (e.g. the
  // llama2-7b forward layer at t = 8: root cuts on the preprocessed model raised the bound above the
  // optimum); without it every comparison with the exact solver agreed.
  option("-preprocess", "off");
  // With Gomory cuts CBC "proved" 28.75 s optimal on a 10-operator model with a 27.5 s schedule (the
  // regression test in solver_property_test.cpp): a cut removed the optimum. Without them it agrees.
  option("-gomory", "off");
  // The feasibility pump aborted the process on about 1 in 300 small models (Clp's assertion
  // lowerValue <= upperValue in ClpNonLinearCost, compiled in by Debian): when every operator runs
  // parallel in sequence, a heuristic finds that optimum at once, the cutoff it sets is finer than the
  // primal tolerance (-increment above), and the pump's LP on that cutoff has crossed bounds. A heuristic
  // only proposes incumbents, so without it the search and its proof are unchanged.
  option("-feasibilityPump", "off");
  option("-threads", "0");  // no threads: deterministic
  option("-randomCbcSeed", "1");
  if (options.time_limit_s > 0) {
    option("-timeMode", "elapsed");
    option("-seconds", std::to_string(options.time_limit_s).c_str());
  }
  args.push_back("-solve");
  args.push_back("-quit");
  return args;
}

/// Runs CBC's stand-alone driver on `model` with `args`.
void run_cbc(CbcModel& model, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  // CbcMain0/CbcMain1 keep parts of their state in globals of libCbcSolver: one solve at a time.
  static std::mutex cbc_main;
  const std::lock_guard<std::mutex> lock(cbc_main);
  CbcSolverUsefulData data;
  data.noPrinting_ = true;
  data.useSignalHandler_ = false;
  CbcMain0(model, data);
  CbcMain1(static_cast<int>(argv.size()), argv.data(), model, no_callback, data);
}

OsiClpSolverInterface MilpBuilder::lp_of_model() const {
  const int columns = static_cast<int>(col_lo_.size());
  const int rows = static_cast<int>(row_lo_.size());
  std::vector<int> lengths(rows);
  for (int r = 0; r < rows; ++r) lengths[r] = static_cast<int>(starts_[r + 1] - starts_[r]);
  const CoinPackedMatrix matrix(false, columns, rows, starts_.back(), value_.data(), index_.data(), starts_.data(),
                                lengths.data());
  OsiClpSolverInterface lp;
  lp.messageHandler()->setLogLevel(0);
  lp.setHintParam(OsiDoReducePrint, true, OsiHintTry);
  lp.loadProblem(matrix, col_lo_.data(), col_hi_.data(), cost_.data(), row_lo_.data(), row_hi_.data());
  for (int c = 0; c < columns; ++c)
    if (integer_[c]) lp.setInteger(c);
  return lp;
}

void MilpBuilder::read_solution(const double* sol, PhaseSolution& out) const {
  const Instance& in = in_;
  out.objective_s = sol[col_makespan_] / in.scale;
  out.y.resize(in.n);
  out.x.assign(in.n, std::vector<char>(in.n, 0));
  out.tensor_core.assign(in.n, -1);
  out.vector_core.assign(in.n, -1);
  for (int a = 0; a < in.n; ++a) {
    out.y[a] = value_of(sol, col_y_[a]) > 0.5 ? 1 : 0;
    for (int b = 0; b < in.n; ++b)
      if (a != b) out.x[a][b] = value_of(sol, col_x_[a][b]) > 0.5 ? 1 : 0;
    for (size_t c = 0; c < col_ztc_[a].size(); ++c)
      if (sol[col_ztc_[a][c]] > 0.5) out.tensor_core[a] = static_cast<int64_t>(c);
    for (size_t c = 0; c < col_zvc_[a].size(); ++c)
      if (sol[col_zvc_[a][c]] > 0.5) out.vector_core[a] = static_cast<int64_t>(c);
  }
}

PhaseSolution MilpBuilder::solve(const MilpOptions& options) const {
  const auto started = std::chrono::steady_clock::now();
  OsiClpSolverInterface lp = lp_of_model();
  double root_bound = 0;
  if (options.root_bound) {
    OsiClpSolverInterface relaxation(lp);
    relaxation.setDblParam(OsiPrimalTolerance, 1e-9);
    relaxation.setDblParam(OsiDualTolerance, 1e-9);
    relaxation.initialSolve();
    if (relaxation.isProvenOptimal()) root_bound = relaxation.getObjValue() / in_.scale;
  }

  CbcModel model(lp);
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  model.solver()->messageHandler()->setLogLevel(0);
  // CBC's stand-alone driver (its default cuts and heuristics) proves these models faster than a bare
  // CbcModel::branchAndBound() (phase 1 of a 12-task DAG: 0.1 s instead of 3-10 s).
  run_cbc(model, cbc_arguments(options));

  PhaseSolution out;
  out.root_bound_s = root_bound;
  out.rows = static_cast<int>(row_lo_.size());
  out.columns = static_cast<int>(col_lo_.size());
  // Fall back to the serial schedule (objective H) when CBC has no solution (a time limit stopped it first)
  // or one worse than the serial schedule, which no correct optimum is. The serial schedule is not handed
  // to CBC as a first incumbent: CbcMain1 then prunes improvements smaller than its own tolerance.
  std::vector<double> serial;
  const double* sol = model.bestSolution();
  const bool from_cbc = sol != nullptr && sol[col_makespan_] <= in_.big_m * in_.scale * (1 + 1e-9);
  if (!from_cbc) {
    serial = serial_solution();
    sol = serial.data();
  }
  out.proven_optimal = from_cbc && model.isProvenOptimal();
  read_solution(sol, out);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

/// The replay of section 4 step 2 (start as soon as all x-predecessors have finished) and the core count of
/// step 3.
struct Replay {
  std::vector<double> start;  ///< per V index, seconds
  std::vector<double> finish;
  double makespan = 0;
  int64_t tc_peak = 0;
  int64_t vc_peak = 0;
};

Replay replay(const Instance& in, const std::vector<char>& y, const std::vector<std::vector<char>>& x) {
  const int n = in.n;
  Replay r;
  r.start.assign(n, 0);
  r.finish.assign(n, 0);
  std::vector<std::vector<int>> after(n);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b && x[a][b]) after[a].push_back(b);
  const std::vector<int> order = util::topological_order(after);
  if (static_cast<int>(order.size()) != n) throw std::logic_error("milp: the order x of a solution has a cycle");
  for (int a : order) {
    r.finish[a] = r.start[a] + in.duration(a, y[a]);
    r.makespan = std::max(r.makespan, r.finish[a]);
    for (int b : after[a]) r.start[b] = std::max(r.start[b], r.finish[a]);
  }

  const double tol = in.tolerance;
  auto overlap = [&](int a, int b) { return r.start[a] < r.finish[b] - tol && r.start[b] < r.finish[a] - tol; };
  for (int a = 0; a < n; ++a) {
    int64_t tc = 0;
    int64_t vc = 0;
    for (int b = 0; b < n; ++b)
      if (r.start[b] <= r.start[a] && r.start[a] < r.finish[b] - tol) {
        tc += in.tc_cores(b, y[b]);
        vc += in.vc_cores(b, y[b]);
      }
    r.tc_peak = std::max(r.tc_peak, tc);
    r.vc_peak = std::max(r.vc_peak, vc);
    for (int b = 0; b < n; ++b) {
      if (b == a || !overlap(a, b)) continue;
      if (y[a] && in.exclusive(a, b))
        throw std::logic_error("milp: parallel task '" + in.problem->tasks[in.task[a]].id + "' overlaps '" +
                               in.problem->tasks[in.task[b]].id + "'");
      if (in.kind[a] == Kind::Link && in.kind[b] == Kind::Link)
        throw std::logic_error("milp: collectives '" + in.problem->tasks[in.task[a]].id + "' and '" +
                               in.problem->tasks[in.task[b]].id + "' overlap");
    }
  }
  return r;
}

/// Slots of every task from a V schedule; NOPs at the latest finish of their direct predecessors.
void fill_slots(const Instance& in, const std::vector<char>& y, const std::vector<double>& start,
                const std::vector<double>& finish, Schedule& out) {
  const Problem& problem = *in.problem;
  out.tasks.assign(problem.tasks.size(), TaskSlot{});
  for (int a = 0; a < in.n; ++a) {
    TaskSlot& slot = out.tasks[in.task[a]];
    slot.start_s = start[a];
    slot.finish_s = finish[a];
    slot.parallel = y[a] != 0;
  }
  for (int u : in.full_order) {
    if (problem.tasks[u].kind != TaskKind::None) continue;
    double at = 0;
    for (int p : in.full_preds[u]) at = std::max(at, out.tasks[p].finish_s);
    out.tasks[u].start_s = at;
    out.tasks[u].finish_s = at;
  }
  out.makespan_s = 0;
  for (int a = 0; a < in.n; ++a) out.makespan_s = std::max(out.makespan_s, finish[a]);
}

/// H = 0: every operator takes a zero-length variant at time 0; zero-length intervals never overlap.
Schedule trivial_schedule(const Instance& in) {
  Schedule out;
  std::vector<char> y(in.n, 0);
  const std::vector<double> zero(in.n, 0.0);
  for (int a = 0; a < in.n; ++a) y[a] = in.faster_parallel(a) ? 1 : 0;
  fill_slots(in, y, zero, zero, out);
  for (int a = 0; a < in.n; ++a) {
    if (y[a]) continue;
    TaskSlot& slot = out.tasks[in.task[a]];
    if (in.uses_tc(a)) slot.tensor_core = 0;
    if (in.uses_vc(a)) slot.vector_core = 0;
  }
  out.feasible = true;
  out.proven_optimal = true;
  out.lower_bound_s = out.makespan_s;
  return out;
}

}  // namespace

Schedule solve_milp(const Problem& problem, const MilpOptions& options, MilpReport* report) {
  if (report != nullptr) *report = MilpReport{};
  for (const Task& t : problem.tasks) {
    const bool compute = t.kind == TaskKind::Tensor || t.kind == TaskKind::Vector || t.kind == TaskKind::Fused;
    if ((t.kind != TaskKind::None && bad_latency(t.single_s)) || (compute && bad_latency(t.parallel_s))) {
      Schedule infeasible;
      infeasible.tasks.assign(problem.tasks.size(), TaskSlot{});
      return infeasible;
    }
  }
  if (problem.tensor_cores < 1 || problem.vector_cores < 1)
    throw std::invalid_argument("milp: the chip needs at least one tensor core and one vector core");
  const Instance in = prepare(problem);

  if (in.big_m <= 0) {
    Schedule out = trivial_schedule(in);
    summarize(problem, out);
    return out;
  }

  // The time limit covers all solves: each gets what is left (at least a moment, to return an incumbent or
  // fall back to the serial schedule).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.time_limit_s);
  const auto phase_options = [&] {
    MilpOptions o = options;
    if (options.time_limit_s > 0) {
      const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
      o.time_limit_s = std::max(left, 0.01);
    }
    return o;
  };
  bool tc = false;
  bool vc = false;
  double lower_bound = 0;  // the largest proven optimum of an earlier phase
  for (int resolves = 0;; ++resolves) {
    const PhaseSolution s = MilpBuilder(in, tc, vc, options.valid_inequalities, lower_bound).solve(phase_options());
    if (s.proven_optimal) lower_bound = std::max(lower_bound, s.objective_s);
    const Replay r = replay(in, s.y, s.x);
    if (report != nullptr)
      report->phases.push_back(MilpPhase{tc, vc, s.objective_s, r.makespan, r.tc_peak, r.vc_peak, s.proven_optimal,
                                         s.columns, s.rows, s.seconds, s.root_bound_s});
    const bool need_tc = r.tc_peak > in.n_tc;
    const bool need_vc = r.vc_peak > in.n_vc;
    if ((need_tc && tc) || (need_vc && vc))
      throw std::logic_error("milp: a solution with core constraints exceeds the core count");
    if (need_tc || need_vc) {
      if (resolves >= 2) throw std::logic_error("milp: more than two re-solves");
      tc = tc || need_tc;
      vc = vc || need_vc;
      continue;
    }

    Schedule out;
    fill_slots(in, s.y, r.start, r.finish, out);
    if (tc && vc) {
      // Cores from z (S9-S12 hold; same-core operators are x-ordered, so the replay keeps them apart).
      for (int a = 0; a < in.n; ++a) {
        TaskSlot& slot = out.tasks[in.task[a]];
        slot.tensor_core = s.tensor_core[a];
        slot.vector_core = s.vector_core[a];
      }
      if (report != nullptr) report->cores_from_z = true;
    } else if (!assign_cores(problem, out)) {
      // Pairing check failed: enable both types and re-solve.
      if (report != nullptr) report->pairing_failed = true;
      if (resolves >= 2) throw std::logic_error("milp: more than two re-solves");
      tc = true;
      vc = true;
      continue;
    }
    out.feasible = true;
    out.proven_optimal = s.proven_optimal;
    summarize(problem, out);
    // Stopped by the time limit: an earlier phase's optimum (a relaxation's) or the exact solver's root
    // bound, whichever is larger, bounds the optimum from below.
    out.lower_bound_s = out.proven_optimal ? out.makespan_s : std::max(lower_bound, exact_lower_bound(problem));
    return out;
  }
}

}  // namespace detail

namespace {

class MilpSolver final : public Solver {
 public:
  explicit MilpSolver(double time_limit_s) { options_.time_limit_s = time_limit_s; }
  Schedule solve(const Problem& problem) override { return detail::solve_milp(problem, options_); }
  std::string_view name() const override { return "ilp"; }

 private:
  detail::MilpOptions options_;
};

}  // namespace

std::unique_ptr<Solver> make_milp_solver() {
  return std::make_unique<MilpSolver>(0);
}
std::unique_ptr<Solver> make_milp_solver(double time_limit_s) {
  return std::make_unique<MilpSolver>(time_limit_s);
}

}  // namespace phaze::schedule
