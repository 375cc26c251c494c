// The per-layer scheduling MILP of layer-schedule.md (section 3) solved exactly with COIN-OR CBC, inside the
// two-phase scheme of section 4 (core-assignment constraints only when the replay needs them, then the
// pairing check).

#include "schedule/milp_solver.h"

#include <CbcHeuristic.hpp>
#include <CbcHeuristicFPump.hpp>
#include <CbcHeuristicLocal.hpp>
#include <CbcModel.hpp>
#include <CglPreProcess.hpp>
#include <CbcStrategy.hpp>
#include <CglPreProcess.hpp>
#include <CbcStrategy.hpp>
#include <CbcSolver.hpp>
#include <CglClique.hpp>
#include <CglFlowCover.hpp>
#include <CglGomory.hpp>
#include <CglKnapsackCover.hpp>
#include <CglMixedIntegerRounding2.hpp>
#include <CglProbing.hpp>
#include <CoinMessageHandler.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace phaze::schedule {

namespace detail {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// How an operator of V takes part in the model: Comm becomes Vector under Problem::comm_as_vector.
enum class Kind { Tensor, Vector, Fused, Link };

/// The preprocessed problem (layer-schedule.md 2): V, reachability, big-M, scale.
struct Instance {
  const Problem* problem = nullptr;
  int n = 0;                             ///< |V|
  std::vector<int> task;                 ///< V index -> task index
  std::vector<Kind> kind;                ///< per V index
  std::vector<double> single;            ///< ℓ, seconds
  std::vector<double> parallel;          ///< ℓ', seconds (= ℓ when y is forced 0)
  std::vector<char> may_parallel;        ///< y is free (compute operator, not a collective)
  std::vector<std::vector<char>> reach;  ///< reach[a][b]: b ∈ R(a), over V indices
  std::vector<int> full_order;           ///< topological order of all tasks
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

bool bad_latency(double v) {
  return !std::isfinite(v) || v < 0;
}

/// Structural checks the model relies on (indices, self-loops, cycles); returns the topological order.
std::vector<int> topological_order(const Problem& problem, std::vector<std::vector<int>>& succs,
                                   std::vector<std::vector<int>>& preds) {
  const int count = static_cast<int>(problem.tasks.size());
  succs.assign(count, {});
  preds.assign(count, {});
  std::vector<int> indegree(count, 0);
  for (const auto& [from, to] : problem.edges) {
    if (from < 0 || from >= count || to < 0 || to >= count)
      throw std::invalid_argument("milp: edge (" + std::to_string(from) + ", " + std::to_string(to) +
                                  ") names a task that does not exist");
    if (from == to) throw std::invalid_argument("milp: task '" + problem.tasks[from].id + "' depends on itself");
    succs[from].push_back(to);
    preds[to].push_back(from);
    ++indegree[to];
  }
  std::vector<int> order;
  order.reserve(count);
  for (int u = 0; u < count; ++u)
    if (indegree[u] == 0) order.push_back(u);
  for (size_t head = 0; head < order.size(); ++head)
    for (int v : succs[order[head]])
      if (--indegree[v] == 0) order.push_back(v);
  if (static_cast<int>(order.size()) != count) throw std::invalid_argument("milp: the task graph has a cycle");
  return order;
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
  double largest = 0;
  for (int u = 0; u < count; ++u) {
    const Task& t = problem.tasks[u];
    if (t.kind == TaskKind::None) continue;
    index[u] = in.n++;
    in.task.push_back(u);
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
    in.single.push_back(t.single_s);
    in.parallel.push_back(par ? t.parallel_s : t.single_s);
    in.big_m += std::min(in.single.back(), in.parallel.back());
    largest = std::max({largest, in.single.back(), in.parallel.back()});
  }
  in.scale = largest > 0 ? 1.0 / largest : 1.0;
  in.tolerance = 1e-12 * in.big_m;

  // R(u) over the full DAG (paths through NOPs), restricted to V.
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
  return in;
}

/// A solution of one MILP, rounded.
struct PhaseSolution {
  bool found = false;
  bool proven_optimal = false;
  double objective_s = 0;
  std::vector<char> y;
  std::vector<std::vector<char>> x;
  std::vector<int64_t> tensor_core;  ///< from z^TC when enabled, else -1
  std::vector<int64_t> vector_core;
  int rows = 0;
  int columns = 0;
  double seconds = 0;
};

/// Builds the MILP of section 3 with S1-S8 and, per enabled type, S9-S11 (S12 when both are enabled).
class MilpBuilder {
 public:
  MilpBuilder(const Instance& in, bool tc, bool vc) : in_(in), tc_(tc), vc_(vc) {
    const int n = in.n;
    col_t_.resize(n);
    col_y_.resize(n);
    col_x_.assign(n, std::vector<int>(n, -1));
    col_ztc_.assign(n, {});
    col_zvc_.assign(n, {});
    col_makespan_ = add_column(0, kInfinity, 1, false);
    for (int a = 0; a < n; ++a) col_t_[a] = add_column(0, kInfinity, 0, false);
    for (int a = 0; a < n; ++a) col_y_[a] = add_column(0, in.may_parallel[a] ? 1 : 0, 0, true);
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        if (a == b) continue;
        // S5: x_ab = 1, x_ba = 0 for b ∈ R(a), as bounds.
        const double lo = in.reach[a][b] ? 1 : 0;
        const double hi = in.reach[b][a] ? 0 : 1;
        col_x_[a][b] = add_column(lo, hi, 0, true);
      }
    // S10 by omission: z^X_ac exists only when a uses X.
    for (int a = 0; a < n; ++a) {
      if (tc_ && in.uses_tc(a))
        for (int64_t c = 0; c < in.n_tc; ++c) col_ztc_[a].push_back(add_column(0, 1, 0, true));
      if (vc_ && in.uses_vc(a))
        for (int64_t c = 0; c < in.n_vc; ++c) col_zvc_[a].push_back(add_column(0, 1, 0, true));
    }
    add_rows();
  }

  PhaseSolution solve(const MilpOptions& options) const;

 private:
  int add_column(double lo, double hi, double cost, bool integer) {
    col_lo_.push_back(lo);
    col_hi_.push_back(hi);
    cost_.push_back(cost);
    integer_.push_back(integer ? 1 : 0);
    return static_cast<int>(col_lo_.size()) - 1;
  }

  void add_row(double lo, double hi, const std::vector<std::pair<int, double>>& terms) {
    for (const auto& [col, value] : terms) {
      if (value == 0) continue;
      index_.push_back(col);
      value_.push_back(value);
    }
    starts_.push_back(static_cast<CoinBigIndex>(index_.size()));
    row_lo_.push_back(lo);
    row_hi_.push_back(hi);
  }

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
    // S3: x_ab + x_ba ≤ 1 (for comparable pairs implied by the S5 bounds).
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b)
        if (!fixed(a, b)) add_row(-kInfinity, 1, {{col_x_[a][b], 1}, {col_x_[b][a], 1}});
    // S4: x_ac ≥ x_ab + x_bc − 1; rows implied by the S5 bounds (x_ac fixed 1, x_ab or x_bc fixed 0) are
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
        if (in.kind[a] == Kind::Fused)
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

  /// The serial schedule (topological order, each operator with its faster variant, on core 0): always
  /// feasible, objective H; handed to CBC as the first incumbent.
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
      const bool par = in.may_parallel[a] && in.parallel[a] < in.single[a];
      sol[col_t_[a]] = now;
      sol[col_y_[a]] = par ? 1 : 0;
      now += in.duration(a, par) * in.scale;
      if (!col_ztc_[a].empty() && !par) sol[col_ztc_[a][0]] = 1;
      if (!col_zvc_[a].empty() && !par) sol[col_zvc_[a][0]] = 1;
    }
    for (int a = 0; a < in.n; ++a)
      for (int b = 0; b < in.n; ++b)
        if (a != b) sol[col_x_[a][b]] = rank[a] < rank[b] ? 1 : 0;
    sol[col_makespan_] = now;
    return sol;
  }

  const Instance& in_;
  bool tc_;
  bool vc_;
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

PhaseSolution MilpBuilder::solve(const MilpOptions& options) const {
  const auto started = std::chrono::steady_clock::now();
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

  CbcModel model(lp);
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  model.solver()->messageHandler()->setLogLevel(0);
  model.setAllowableGap(0);
  model.setAllowableFractionGap(0);
  model.setAllowablePercentageGap(0);
  model.setIntegerTolerance(1e-9);
  model.setNumberThreads(1);
  model.setRandomSeed(1);
  if (options.time_limit_s > 0) model.setMaximumSeconds(options.time_limit_s);

  CglProbing probing;
  probing.setUsingObjective(true);
  probing.setMaxPass(1);
  probing.setMaxPassRoot(5);
  probing.setMaxProbe(10);
  probing.setMaxProbeRoot(1000);
  probing.setMaxLook(50);
  probing.setMaxLookRoot(500);
  probing.setMaxElements(200);
  probing.setRowCuts(3);
  CglGomory gomory;
  gomory.setLimit(300);
  CglKnapsackCover knapsack;
  CglClique clique;
  clique.setStarCliqueReport(false);
  clique.setRowCliqueReport(false);
  CglMixedIntegerRounding2 rounding_cuts;
  CglFlowCover flow;
  model.addCutGenerator(&probing, -1, "Probing");
  model.addCutGenerator(&gomory, -1, "Gomory");
  model.addCutGenerator(&knapsack, -1, "Knapsack");
  model.addCutGenerator(&clique, -1, "Clique");
  model.addCutGenerator(&rounding_cuts, -1, "MIR2");
  model.addCutGenerator(&flow, -1, "FlowCover");
  CbcRounding rounding(model);
  model.addHeuristic(&rounding);
  CbcHeuristicLocal local(model);
  model.addHeuristic(&local);

  std::vector<double> serial = serial_solution();
  if (std::getenv("MILP_START")) {
    const Instance& in = in_;
    Schedule e = make_exact_solver()->solve(*in.problem);
    std::vector<double> sol(col_lo_.size(), 0);
    for (int a = 0; a < in.n; ++a) {
      const TaskSlot& sa = e.tasks[in.task[a]];
      sol[col_t_[a]] = sa.start_s * in.scale;
      sol[col_y_[a]] = sa.parallel ? 1 : 0;
      if (!col_ztc_[a].empty() && sa.tensor_core >= 0) sol[col_ztc_[a][sa.tensor_core]] = 1;
      if (!col_zvc_[a].empty() && sa.vector_core >= 0) sol[col_zvc_[a][sa.vector_core]] = 1;
      for (int b = 0; b < in.n; ++b) {
        if (a == b) continue;
        const TaskSlot& sb = e.tasks[in.task[b]];
        bool key = std::make_tuple(sa.start_s, sa.finish_s, a) < std::make_tuple(sb.start_s, sb.finish_s, b);
        sol[col_x_[a][b]] = (sa.finish_s <= sb.start_s && key) ? 1 : 0;
      }
    }
    sol[col_makespan_] = e.makespan_s * in.scale;
    serial = sol;
  }
  model.setBestSolution(serial.data(), columns, serial[col_makespan_], true);

  std::vector<int> prio;
  if (const char* pr = std::getenv("MILP_PRIO")) {
    const std::string order = pr;  // e.g. "yxz": first letter branched first
    auto rank = [&](char c) { return static_cast<int>(order.find(c)) + 1; };
    for (int c = 0; c < columns; ++c) {
      if (!integer_[c]) continue;
      char kind = 'z';
      for (int a = 0; a < in_.n; ++a)
        if (col_y_[a] == c) kind = 'y';
      for (int a = 0; a < in_.n; ++a)
        for (int b = 0; b < in_.n; ++b)
          if (col_x_[a][b] == c) kind = 'x';
      prio.push_back(rank(kind));
    }
  }
  CbcModel m2(lp);
  if (!prio.empty()) {
    m2.findIntegers(true);
    m2.passInPriorities(prio.data(), false);
    model.findIntegers(true);
    model.passInPriorities(prio.data(), false);
  }
  CbcModel* used = &model;
  if (std::getenv("MILP_MAIN")) {
    used = &m2;
    m2.messageHandler()->setLogLevel(0);
    m2.setBestSolution(serial.data(), columns, serial[col_makespan_], true);
    std::fprintf(stderr, "start objective %g (serial/exact), accepted %g\n", serial[col_makespan_], m2.getObjValue());
    CbcSolverUsefulData data;
    data.noPrinting_ = true;
    data.useSignalHandler_ = false;
    CbcMain0(m2, data);
    std::vector<std::string> args = {"phaze", "-log", "0", "-ratio", "0", "-allow", "0", "-integerT", "1e-9"};
    if (const char* extra = std::getenv("MILP_ARGS")) {
      std::string e = extra;
      size_t pos = 0;
      while (pos < e.size()) {
        size_t q = e.find(' ', pos);
        if (q == std::string::npos) q = e.size();
        if (q > pos) args.push_back(e.substr(pos, q - pos));
        pos = q + 1;
      }
    }
    args.push_back("-solve");
    args.push_back("-quit");
    std::vector<const char*> argv;
    for (auto& a : args) argv.push_back(a.c_str());
    CbcMain1(
        static_cast<int>(argv.size()), argv.data(), m2, [](CbcModel*, int) { return 0; }, data);
  } else if (std::getenv("MILP_STRAT")) {
    const int mode = std::atoi(std::getenv("MILP_STRAT"));
    CbcStrategyDefault strategy(mode & 1 ? 1 : 0, 5, 5, 0);
    strategy.setupPreProcessing(mode & 2 ? 1 : 0, 10);
    model.setStrategy(strategy);
    model.branchAndBound();
  } else if (std::getenv("MILP_PRE")) {
    CglPreProcess process;
    process.messageHandler()->setLogLevel(0);
    OsiSolverInterface* pre = process.preProcess(lp, false, 10);
    if (!pre) { std::fprintf(stderr, "preprocess infeasible\n"); }
    CbcModel m3(*pre);
    m3.setLogLevel(0);
    m3.messageHandler()->setLogLevel(0);
    m3.solver()->messageHandler()->setLogLevel(0);
    m3.setAllowableGap(0);
    m3.setAllowableFractionGap(0);
    m3.setAllowablePercentageGap(0);
    m3.setIntegerTolerance(1e-9);
    m3.addCutGenerator(&probing, -1, "Probing");
    m3.addCutGenerator(&gomory, -1, "Gomory");
    m3.addCutGenerator(&knapsack, -1, "Knapsack");
    m3.addCutGenerator(&clique, -1, "Clique");
    m3.addCutGenerator(&rounding_cuts, -1, "MIR2");
    m3.addCutGenerator(&flow, -1, "FlowCover");
    CbcRounding r3(m3);
    m3.addHeuristic(&r3);
    m3.branchAndBound();
    process.postProcess(*m3.solver());
    const double* b = process.originalModel()->getColSolution();
    static std::vector<double> keep;
    keep.assign(b, b + columns);
    model.setBestSolution(keep.data(), columns, keep[col_makespan_], false);
    std::fprintf(stderr, "pre: opt %d obj %g\n", m3.isProvenOptimal(), keep[col_makespan_]);
  } else
    model.branchAndBound();

  PhaseSolution out;
  out.rows = rows;
  out.columns = columns;
  const double* sol = used->bestSolution();
  if (sol != nullptr) {
    const Instance& in = in_;
    out.found = true;
    out.proven_optimal = used->isProvenOptimal();
    out.objective_s = sol[col_makespan_] / in.scale;
    out.y.resize(in.n);
    out.x.assign(in.n, std::vector<char>(in.n, 0));
    out.tensor_core.assign(in.n, -1);
    out.vector_core.assign(in.n, -1);
    for (int a = 0; a < in.n; ++a) {
      out.y[a] = sol[col_y_[a]] > 0.5 ? 1 : 0;
      for (int b = 0; b < in.n; ++b)
        if (a != b) out.x[a][b] = sol[col_x_[a][b]] > 0.5 ? 1 : 0;
      for (size_t c = 0; c < col_ztc_[a].size(); ++c)
        if (sol[col_ztc_[a][c]] > 0.5) out.tensor_core[a] = static_cast<int64_t>(c);
      for (size_t c = 0; c < col_zvc_[a].size(); ++c)
        if (sol[col_zvc_[a][c]] > 0.5) out.vector_core[a] = static_cast<int64_t>(c);
    }
  }
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
  std::vector<int> indegree(n, 0);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b && x[a][b]) ++indegree[b];
  std::vector<int> order;
  for (int a = 0; a < n; ++a)
    if (indegree[a] == 0) order.push_back(a);
  for (size_t head = 0; head < order.size(); ++head) {
    const int a = order[head];
    r.finish[a] = r.start[a] + in.duration(a, y[a]);
    r.makespan = std::max(r.makespan, r.finish[a]);
    for (int b = 0; b < n; ++b)
      if (b != a && x[a][b]) {
        r.start[b] = std::max(r.start[b], r.finish[a]);
        if (--indegree[b] == 0) order.push_back(b);
      }
  }
  if (static_cast<int>(order.size()) != n) throw std::logic_error("milp: the order x of a solution has a cycle");

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
  for (int a = 0; a < in.n; ++a) y[a] = in.may_parallel[a] && in.parallel[a] < in.single[a] ? 1 : 0;
  fill_slots(in, y, zero, zero, out);
  for (int a = 0; a < in.n; ++a) {
    if (y[a]) continue;
    TaskSlot& slot = out.tasks[in.task[a]];
    if (in.uses_tc(a)) slot.tensor_core = 0;
    if (in.uses_vc(a)) slot.vector_core = 0;
  }
  out.feasible = true;
  out.proven_optimal = true;
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

  bool tc = false;
  bool vc = false;
  for (int resolves = 0;; ++resolves) {
    const PhaseSolution s = MilpBuilder(in, tc, vc).solve(options);
    if (!s.found) throw std::runtime_error("milp: CBC returned no solution");  // the serial one is always there
    const Replay r = replay(in, s.y, s.x);
    if (report != nullptr)
      report->phases.push_back(MilpPhase{tc, vc, s.objective_s, r.makespan, r.tc_peak, r.vc_peak, s.proven_optimal,
                                         s.columns, s.rows, s.seconds});
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
    return out;
  }
}

}  // namespace detail

namespace {

class MilpSolver final : public Solver {
 public:
  Schedule solve(const Problem& problem) override { return detail::solve_milp(problem); }
  std::string_view name() const override { return "ilp"; }
};

}  // namespace

std::unique_ptr<Solver> make_milp_solver() {
  return std::make_unique<MilpSolver>();
}

}  // namespace phaze::schedule
