#pragma once

// The state of the exact solver's branch and bound, shared by its parts: the search over sequences with its
// dominance rules (exact_search.cpp), its lower bounds (exact_bounds.cpp), and the greedy dives that give
// the incumbent and turn a sequence into a schedule (exact_dives.cpp). Internal to the exact solver
// (exact_solver.cpp).

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <vector>

#include "schedule/prepared.h"
#include "schedule/problem.h"
#include "schedule/set_table.h"

namespace phaze::schedule::detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

/// Relative slack for rounding when a bound is compared with the incumbent (far below the 1e-9 to which
/// makespans are compared anywhere).
inline constexpr double kBoundTolerance = 1e-12;

/// The convex combinations λ·(tensor) + (1 − λ)·(vector) of the lower bound on parallel and single-core work.
inline constexpr double kLambdas[] = {0.25, 0.5, 0.75};

/// A set of identical cores: paired (tensor core c with vector core c) or unpaired of one type.
struct Group {
  double tc_free = 0, vc_free = 0;  // an unpaired core keeps its free time in the field of its type
  int64_t count = 0;
  uint8_t kind = 0;  // kTc | kVc: a pair; kTc: unpaired tensor cores; kVc: unpaired vector cores
};

/// One decision of the search: which task, in which mode, on which group of cores.
struct Choice {
  int task = -1;
  bool parallel = false;
  int group = -1;          // index of the group the core came from (-1: none or all cores)
  uint8_t group_kind = 0;  // paired (kTc | kVc) or unpaired (kTc or kVc)
  double other_free = -1;  // free time of the unused side of a pair, clamped to the start
  double start = 0, finish = 0;
};

/// The branch and bound over sequences of tasks (one object per search; a greedy one dives once).
class ExactSearch {
 public:
  ExactSearch(const Problem& p, const Prepared& q, int64_t node_limit, bool greedy);
  // Not copied: the parts' memo may point into the object itself.
  ExactSearch(const ExactSearch&) = delete;
  ExactSearch& operator=(const ExactSearch&) = delete;

  void set_incumbent(double makespan) { best_ = makespan; }
  /// The exclusive-time bound splits a set at a task into its ancestors and its descendants; parts of 2 to
  /// `tasks` tasks are then scheduled exactly on their own (solve_part, within `nodes` search nodes each),
  /// which bounds the time they take in any schedule of the whole. 0 tasks: never.
  void set_exact_parts(int tasks, int64_t nodes) {
    exact_part_tasks_ = tasks;
    exact_part_nodes_ = nodes;
  }
  /// Keeps the parts' optima in `memo` (by task set), shared by the searches of one problem.
  void share_exact_parts(SetTable<double>& memo) { exact_memo_ = &memo; }
  /// The bound of the empty schedule: no schedule is shorter (call before run).
  double root_bound() const { return lower_bound(0, 0.0); }
  /// A dive that runs every task that can be intra-operator parallel that way.
  void set_parallel_only() { parallel_only_ = true; }
  /// The search ends at the first schedule shorter than the incumbent (it then shows only that one exists).
  void set_first_only() { first_only_ = true; }
  void run() { dive(0, 0.0, -1, 0.0, 0.0); }
  bool complete() const { return nodes_ <= node_limit_; }
  int64_t nodes() const { return nodes_; }
  double best() const { return best_; }
  const std::vector<Choice>& best_path() const { return best_path_; }

 private:
  // The search (exact_search.cpp).
  double conflict_floor(uint8_t use, bool parallel) const;
  void options(uint64_t done, double last_start, int last_task, double last_task_start, std::vector<Choice>& out);
  bool interacts(int s, bool parallel, int group) const;
  void state_times(uint64_t done, std::vector<double>& t) const;
  bool dominated(uint64_t done, double last_start);
  bool lonely_single(double last_start) const;
  bool closed_phase_dominated() const;
  void dive(uint64_t done, double last_start, int last_task, double last_task_start, double parent_bound);
  void apply(const Choice& c);
  void undo(const Choice& c);

  // The lower bounds (exact_bounds.cpp).
  double lower_bound(uint64_t done, double last_start) const;
  bool packing_proves(uint64_t rest, double last_start, double target) const;
  bool packing_proves(uint64_t rest, uint64_t parallel_set, double t0, double target, int depth) const;
  bool packing_proves_once(uint64_t rest, uint64_t parallel_set, double t0, double target, int depth) const;
  bool packing_fits(uint64_t rest, uint64_t parallel_set, double t0, double span) const;
  /// packing_fits' releases (release_) and tails (tail_) of the rest's tasks, times relative to t0.
  void set_releases_and_tails(uint64_t rest, uint64_t parallel_set) const;
  /// packing_fits for the tasks of packing_items_ that share a core with no other: each takes a core of
  /// free_ (removed from it); the others go to shared_.
  bool lone_tasks_fit(int64_t cores, double span) const;
  /// packing_fits for the tasks of shared_ on the cores left in free_.
  bool shared_tasks_fit(double span) const;
  double exclusive_bound(uint64_t set) const;
  double split_exclusive_bound(uint64_t set) const;
  double cached_base(uint64_t set) const;
  double part_bound(uint64_t set) const;
  double exact_part(uint64_t set) const;
  double compute_exclusive_bound(uint64_t set) const;
  /// What compute_exclusive_bound gathers of a set besides its items (items_).
  struct ExclusiveSet {
    double all_parallel = 0;               // Σ ℓ' of the items
    double forced_work[4] = {0, 0, 0, 0};  // single-core work of the tasks that run only so, by core use
    double forced_longest = 0;             // the longest of those
    bool forced = false;                   // whether there are any
  };
  ExclusiveSet collect_exclusive_items(uint64_t set) const;
  /// The longest chain of the set and the two unit flows through it (path_length_, path_prev_, flow_).
  void set_chain_flows(uint64_t set) const;
  /// The least bound over the classes (classes_) and the mixes: a fractional knapsack per pair.
  double knapsack_bound(const ExclusiveSet& e, double no_single) const;
  double after_link_task(int c, uint64_t rest) const;

  // A state is what the rest of the schedule depends on, all times seen from the last start on: the
  // finishes still awaited by unscheduled tasks, the link, the ends that exclusivity refers to, and the
  // cores. With starts raised to the last start the rule is monotone, so a state that is no later in
  // every respect than one already explored (same scheduled set) cannot lead to a better schedule.
  // The states kept lie in three arenas, so that keeping one seldom allocates: each state's times (as many as
  // state_times gives for its set) and groups are slices of memo_times_ and memo_groups_, and the states of a
  // set are linked in the order they were kept.
  struct Memo {
    double last_start, makespan;
    size_t times_at, groups_at, groups;  // groups normalised at last_start
    size_t next;                         // the set's next state; kNoMemo after its last
  };
  static constexpr size_t kNoMemo = ~size_t{0};
  struct MemoList {
    size_t first = kNoMemo, last = kNoMemo;
    int count = 0;
  };

  struct Saved {
    double makespan, link_end, compute_end[4], parallel_end[4], remaining_tc, remaining_vc, remaining_link;
    Choice last;
    int phase_begin, closed_begin, closed_end;
    double phase_end;
    int new_group;
    Group old_group;
  };
  std::vector<Saved> saved_;
  // The parts of apply: the phase of single-core tasks the choice closes or extends; the cores, ends and
  // remaining work it takes (its old group saved in `sv`); the single-core tasks it overlaps.
  void update_phase(const Choice& c);
  void occupy_cores(const Choice& c, Saved& sv);
  void record_overlaps(const Choice& c);

  const Problem& p_;
  const Prepared& q_;
  int n_;
  int64_t node_limit_;
  bool greedy_;
  bool parallel_only_ = false;
  bool first_only_ = false;
  int64_t nodes_ = 0;
  uint64_t all_ = 0;
  uint64_t compute_mask_ = 0;  // tasks on cores (not on the link, not layout)
  // Per λ of kLambdas and task: the cheaper of its parallel run and its single-core work shared by the
  // types, min(ℓ', (λ/n_TC [uses TC] + (1 − λ)/n_VC [uses VC])·ℓ), which the bound sums over the rest.
  std::vector<double> cheaper_share_[std::size(kLambdas)];
  struct Item {
    double single, parallel;
    uint8_t use;
    int task;
  };
  mutable SetTable<double> exclusive_memo_;  // by task set
  mutable SetTable<double> base_memo_;       // the same without splitting
  mutable SetTable<double> own_exact_memo_;  // exact_part by task set
  SetTable<double>* exact_memo_ = &own_exact_memo_;
  int exact_part_tasks_ = 0;
  int64_t exact_part_nodes_ = 0;
  mutable std::vector<double> flow_[2];
  mutable std::vector<double> classes_, weights_;
  mutable std::vector<int> orders_;
  mutable std::vector<double> path_length_;
  mutable std::vector<int> path_prev_;
  mutable std::vector<Item> items_;
  double best_ = kInf;
  std::vector<Choice> path_, best_path_;
  struct Key {
    uint8_t kind;
    double start, other;
    bool operator==(const Key&) const = default;
  };
  std::vector<Key> seen_;
  SetTable<MemoList> memo_;
  std::vector<Memo> memos_;
  std::vector<double> memo_times_;
  std::vector<Group> memo_groups_;
  std::vector<double> times_;                      // work space of dominated()
  std::vector<Group> mine_, theirs_;               // work space of dominated()
  std::vector<std::vector<Choice>> choice_lists_;  // per depth of the dive
  std::vector<uint64_t> awaited_by_;               // successors of each task (search indices)
  std::vector<int> open_singles_;                  // single-core compute tasks in sequence order
  // The current phase: a maximal run of overlapping single-core compute tasks (path_ indices from
  // phase_begin_), ending at phase_end_; closed_begin_/closed_end_ name the phase the last task closed.
  int phase_begin_ = -1;
  double phase_end_ = 0;
  int closed_begin_ = -1, closed_end_ = -1;
  std::vector<int> overlaps_;     // compute tasks overlapping each task
  std::vector<int> overlap_log_;  // increments of overlaps_, for undo
  std::vector<size_t> overlap_marks_;
  mutable std::vector<double> est_;
  // Work space of the packing bound.
  mutable double packing_wait_ = 0, packing_all_free_ = 0;
  mutable std::vector<double> done_release_;  // per remaining task: latest finish of its scheduled predecessors
  mutable std::vector<double> release_, tail_, free_, lengths_, releases_, tails_, latest_starts_;
  mutable std::vector<int> packing_items_, shared_;
  // What packing_proves found for each set of tasks run parallel, within one call from lower_bound: the
  // recursion reaches a set once per order of its tasks. Open addressing; an entry counts only when its
  // stamp is the current call's.
  struct PackingMemo {
    uint64_t parallel_set;
    uint32_t stamp;
    bool proves;
  };
  mutable std::vector<PackingMemo> packing_memo_;
  mutable uint32_t packing_stamp_ = 0;
  mutable size_t packing_memo_used_ = 0;  // entries of the current call
  mutable std::vector<char> taken_;
  std::vector<Group> groups_;
  std::vector<std::vector<Group>> saved_groups_;  // groups before each parallel run on the path (a stack)
  size_t saved_groups_used_ = 0;
  std::vector<double> start_, finish_;
  double makespan_ = 0, link_end_ = 0;
  double compute_end_[4] = {0, 0, 0, 0};   // [0] any compute, [1] tensor, [2] vector
  double parallel_end_[4] = {0, 0, 0, 0};  // [0] any parallel, [1] using tensor, [2] using vector, [3] fused
  double remaining_tc_ = 0, remaining_vc_ = 0, remaining_link_ = 0;
  Choice last_;
};

/// A greedy dive: free modes (earliest finish first), or every task parallel (earliest start first).
struct Dive {
  double makespan = kInf;
  std::vector<Choice> path;
};
Dive greedy_dive(const Problem& problem, const Prepared& q, bool parallel_only);

/// The search of a layer that the first search did not prove (exact_solver.cpp): probes with exact parts, on
/// `node_budget` nodes. `incumbent` is replaced by a strictly shorter schedule when one is found and
/// `root_bound` raised to the probes' root bound; returns whether the incumbent is then proven optimal.
bool probe_search(const Problem& problem, const Prepared& q, int64_t node_budget, Dive& incumbent, double& root_bound);

/// Turns the decisions into a schedule with concrete core indices (replaying the group choices); an
/// infeasible Schedule when the replay finds no core, for the caller to fall back to assign_cores.
Schedule build_schedule(const Problem& p, const Prepared& q, const std::vector<Choice>& path);

/// The exact search alone (no segments, no exact parts) on `problem` within `node_budget` nodes: the optimum
/// of a part of a layer when proven, else the part's root bound (exact_solver.cpp).
Schedule solve_part(const Problem& problem, int64_t node_budget);

/// Places the layout tasks (no time) at the latest finish of their predecessors and sets the makespan.
void place_layout_tasks(const Problem& p, Schedule& s);

}  // namespace phaze::schedule::detail
