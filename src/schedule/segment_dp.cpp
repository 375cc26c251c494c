// Exact scheduling by dynamic programming over the ideals of the DAG (sets closed under predecessors).
//
// When an intra-operator-parallel run excludes every other operator and nothing runs on the link, a
// schedule splits at its parallel runs: between two of them (and before the first, after the last) lies a
// segment of single-core runs, none of which crosses a parallel run. What has finished when a segment or
// a parallel run begins is an ideal, and every core is free then. So the shortest completion from an
// ideal I, f(I), is the least of
//   ℓ'_v + f(I ∪ {v})      for an operator v ready at I, run parallel, and
//   OPT(S) + f(I ∪ S)      for a set S of single-core runs with I ∪ S an ideal,
// where OPT(S) is the shortest single-core schedule of S alone, from all cores free; f(V) = 0.
//
// A segment can only matter if it beats running its operators parallel one after another, which is also
// a way from I to I ∪ S. OPT(S) ≥ LB(S) = max(longest chain, work of each core type / its cores), so S
// needs LB(S) < Σ_S ℓ'. Segments are enumerated per ideal by deciding the operators in topological
// order (in or out; one left out leaves out its descendants). A branch stops once LB(S) + f(the largest
// ideal it can still reach) is no better than the best way from I found so far: LB only grows with S and
// f only shrinks as the ideal grows. OPT(S) comes from the caller's exact single-core search, only for the
// few segments that pass these tests, and only below the value that would make the segment worth it.

#include "schedule/segment_dp.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <unordered_map>
#include <vector>

namespace phaze::schedule::detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Ideals of the DAG beyond which the dynamic program is not tried (the exact search takes over).
constexpr size_t kMaxIdeals = size_t{1} << 15;

/// Branches of the segment enumeration, over all ideals, beyond which the exact search takes over.
constexpr int64_t kMaxBranches = int64_t{1} << 21;

/// Single-core schedules of segments computed, beyond which the exact search takes over.
constexpr int kMaxSegmentSolves = 1 << 14;

/// The dynamic program is tried only when at most this share of the operators must run single-core (no
/// faster parallel run): each of them makes every segment holding it worth a single-core schedule, and
/// with many of them the layer is mostly one long segment, which the exact search handles directly.
constexpr double kMaxSingleOnlyShare = 0.5;

uint64_t bit(int v) {
  return uint64_t{1} << v;
}

/// Ideal → its index, by open addressing (the enumeration looks it up at every branch).
class IdealTable {
 public:
  IdealTable() { rehash(1024); }
  int find(uint64_t key) const {
    for (size_t h = slot(key);; h = (h + 1) & mask_) {
      if (slots_[h].index < 0) return -1;
      if (slots_[h].key == key) return slots_[h].index;
    }
  }
  /// The index of `key`, entered with `value` when absent (then `inserted` is set).
  int find_or_insert(uint64_t key, int value, bool& inserted) {
    if (2 * (size_ + 1) > slots_.size()) rehash(2 * slots_.size());
    size_t h = slot(key);
    for (; slots_[h].index >= 0; h = (h + 1) & mask_)
      if (slots_[h].key == key) {
        inserted = false;
        return slots_[h].index;
      }
    slots_[h] = Slot{key, value};
    ++size_;
    inserted = true;
    return value;
  }

 private:
  struct Slot {
    uint64_t key = 0;
    int index = -1;
  };
  size_t slot(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }
  void rehash(size_t capacity) {
    const std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64 - std::countr_zero(capacity);
    for (const Slot& e : old)
      if (e.index >= 0) {
        size_t h = slot(e.key);
        while (slots_[h].index >= 0) h = (h + 1) & mask_;
        slots_[h] = e;
      }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0, size_ = 0;
  int shift_ = 64;
};

/// What the shortest single-core schedule of a segment is known to be.
struct SegmentMemo {
  double makespan = kInf;  ///< exact, when found
  double at_least = 0;     ///< proven: no schedule is shorter
  Schedule schedule;
};

class SegmentDp {
 public:
  SegmentDp(const Problem& p, const Prepared& q, const SegmentSolver& solve)
      : p_(p), q_(q), solve_(solve), n_(static_cast<int>(q.task.size())) {
    all_ = n_ == 64 ? ~uint64_t{0} : bit(n_) - 1;
    n_tc_ = static_cast<double>(p.tensor_cores);
    n_vc_ = static_cast<double>(p.vector_cores);
    chain_.assign(n_, 0);
  }

  std::optional<Schedule> run() {
    if (!enumerate_ideals()) return std::nullopt;
    f_.assign(ideals_.size(), kInf);
    decision_.assign(ideals_.size(), Decision{});
    // The breadth-first enumeration lists the ideals by size: taken backwards, f of every ideal above I
    // is known when I is reached.
    for (int k = static_cast<int>(ideals_.size()) - 1; k >= 0; --k) {
      solve_ideal(k);
      if (aborted_) return std::nullopt;
    }
    return assemble();
  }

 private:
  struct Decision {
    int parallel = -1;     ///< the operator run parallel, or -1
    uint64_t segment = 0;  ///< else the single-core segment
  };

  // Breadth first from the empty ideal, so the list is ordered by size; each ideal keeps the operators
  // ready at it and, per ready operator, the ideal that running it leads to.
  bool enumerate_ideals() {
    ideals_.reserve(1024);
    ready_.reserve(1024);
    moves_.reserve(4096);
    moves_begin_.reserve(1024);
    ideals_.assign(1, 0);
    ready_.assign(1, 0);
    for (int v = 0; v < n_; ++v)
      if (!q_.pred_mask[v]) ready_[0] |= bit(v);
    bool empty_entered = false;
    table_.find_or_insert(0, 0, empty_entered);
    moves_begin_.assign(1, 0);
    for (size_t k = 0; k < ideals_.size(); ++k) {
      const uint64_t ideal = ideals_[k];
      for (uint64_t m = ready_[k]; m; m &= m - 1) {
        const int v = std::countr_zero(m);
        const uint64_t next = ideal | bit(v);
        bool inserted = false;
        const int index = table_.find_or_insert(next, static_cast<int>(ideals_.size()), inserted);
        if (inserted) {
          if (ideals_.size() == kMaxIdeals) return false;
          ideals_.push_back(next);
          uint64_t ready = ready_[k] & ~bit(v);
          for (uint64_t s = q_.successor_mask[v]; s; s &= s - 1)
            if (!(q_.pred_mask[std::countr_zero(s)] & ~next)) ready |= uint64_t{1} << std::countr_zero(s);
          ready_.push_back(ready);
        }
        moves_.push_back(Move{v, index});
      }
      moves_begin_.push_back(moves_.size());
    }
    return true;
  }

  double f(uint64_t ideal) const { return f_[table_.find(ideal)]; }

  /// The operator and every operator after it: what leaving it out of a segment leaves out.
  uint64_t down(int v) const { return q_.descendants[v] | bit(v); }

  void solve_ideal(int k) {
    ideal_ = ideals_[k];
    if (ideal_ == all_) {
      f_[k] = 0;
      return;
    }
    best_ = kInf;
    best_decision_ = Decision{};
    for (size_t i = moves_begin_[k]; i < moves_begin_[k + 1]; ++i) {
      const auto [v, next] = moves_[i];
      const double via = q_.parallel[v] + f_[next];
      if (via < best_) {
        best_ = via;
        best_decision_ = Decision{v, 0};
      }
    }
    // Segments by their first operator (the lowest index, ready at I); those before it stay out.
    rest_ = all_ & ~ideal_;
    excluded_ = 0;
    for (uint64_t m = ready_[k]; m; m &= m - 1) {
      const int v = std::countr_zero(m);
      if (excluded_ >> v & 1) continue;
      segment_ = 0;
      work_tc_ = work_vc_ = longest_ = parallel_sum_ = through_ = 0;
      include(v, f(all_ & ~excluded_));
      if (aborted_) return;
      excluded_ |= down(v);
    }
    f_[k] = best_;
    decision_[k] = best_decision_;
  }

  // Adds v to the segment (every predecessor outside I is in it), goes on, and takes it out again.
  void include(int v, double after) {
    const double work_tc = work_tc_, work_vc = work_vc_, longest = longest_, parallel_sum = parallel_sum_,
                 through = through_;
    double before = 0;
    for (uint64_t m = q_.pred_mask[v] & segment_; m; m &= m - 1) before = std::max(before, chain_[std::countr_zero(m)]);
    chain_[v] = before + q_.single[v];
    longest_ = std::max(longest_, chain_[v]);
    through_ = std::max(through_, chain_[v] + q_.after[v]);
    if (q_.use[v] & kTc) work_tc_ += q_.single[v];
    if (q_.use[v] & kVc) work_vc_ += q_.single[v];
    parallel_sum_ += q_.parallel[v];
    segment_ |= bit(v);
    branch(v + 1, after);
    segment_ &= ~bit(v);
    work_tc_ = work_tc;
    work_vc_ = work_vc;
    longest_ = longest;
    parallel_sum_ = parallel_sum;
    through_ = through;
  }

  // A non-empty segment with the operators below `from` decided; `after` = f(all not left out).
  void branch(int from, double after) {
    if (++branches_ > kMaxBranches) aborted_ = true;
    if (aborted_) return;
    const double lb = std::max({work_tc_ / n_tc_, work_vc_ / n_vc_, longest_});
    if (lb + after >= best_ || through_ >= best_) return;
    const uint64_t open = from >= 64 ? 0 : rest_ & ~excluded_ & ~segment_ & ~(bit(from) - 1);
    if (!open) {
      if (lb < parallel_sum_) try_segment(after);  // I ∪ S is everything not left out
      return;
    }
    const int v = std::countr_zero(open);
    const uint64_t excluded = excluded_;
    excluded_ |= down(v);
    branch(v + 1, f(all_ & ~excluded_));
    excluded_ = excluded;
    include(v, after);
  }

  // The segment S = segment_ followed by the best way on from I ∪ S (taking `after`).
  void try_segment(double after) {
    const double cutoff = std::min(parallel_sum_, best_ - after);
    const double makespan = segment_makespan(segment_, cutoff);
    if (makespan < cutoff) {
      best_ = makespan + after;
      best_decision_ = Decision{-1, segment_};
    }
  }

  // OPT(S) when it is below the cutoff, else infinity.
  double segment_makespan(uint64_t s, double cutoff) {
    SegmentMemo& memo = memo_[s];
    if (memo.makespan < kInf) return memo.makespan < cutoff ? memo.makespan : kInf;
    if (memo.at_least >= cutoff) return kInf;
    if (++segment_solves_ > kMaxSegmentSolves) {
      aborted_ = true;
      return kInf;
    }
    Problem segment;
    segment.tensor_cores = p_.tensor_cores;
    segment.vector_cores = p_.vector_cores;
    segment.comm_as_vector = p_.comm_as_vector;
    std::vector<int> local(n_, -1);
    for (uint64_t m = s; m; m &= m - 1) {
      const int v = std::countr_zero(m);
      local[v] = static_cast<int>(segment.tasks.size());
      Task t = p_.tasks[q_.task[v]];
      t.parallel_s = t.single_s;  // single-core runs only
      t.parallel_energy_j = t.single_energy_j;
      segment.tasks.push_back(std::move(t));
      for (uint64_t pm = q_.pred_mask[v] & s; pm; pm &= pm - 1)
        segment.edges.emplace_back(local[std::countr_zero(pm)], local[v]);
    }
    const SegmentSchedule result = solve_(segment, cutoff);
    if (!result.proven) {
      aborted_ = true;
      return kInf;
    }
    if (!result.found) {
      memo.at_least = std::max(memo.at_least, cutoff);
      return kInf;
    }
    memo.makespan = result.schedule.makespan_s;
    memo.schedule = result.schedule;
    return memo.makespan < cutoff ? memo.makespan : kInf;
  }

  Schedule assemble() const {
    Schedule out;
    out.feasible = true;
    out.tasks.assign(p_.tasks.size(), TaskSlot{});
    uint64_t ideal = 0;
    double now = 0;
    while (ideal != all_) {
      const Decision& dec = decision_[table_.find(ideal)];
      if (dec.parallel >= 0) {
        const int v = dec.parallel;
        out.tasks[q_.task[v]] = TaskSlot{now, now + q_.parallel[v], true, -1, -1};
        now += q_.parallel[v];
        ideal |= bit(v);
        continue;
      }
      const SegmentMemo& memo = memo_.at(dec.segment);
      int local = 0;
      for (uint64_t m = dec.segment; m; m &= m - 1, ++local) {
        TaskSlot slot = memo.schedule.tasks[local];
        slot.start_s += now;
        slot.finish_s += now;
        out.tasks[q_.task[std::countr_zero(m)]] = slot;
      }
      now += memo.makespan;
      ideal |= dec.segment;
    }
    out.makespan_s = now;
    return out;
  }

  const Problem& p_;
  const Prepared& q_;
  const SegmentSolver& solve_;
  int n_;
  uint64_t all_ = 0;
  double n_tc_ = 1, n_vc_ = 1;
  struct Move {
    int task, ideal;  // run `task` parallel, reaching ideals_[ideal]
  };
  std::vector<uint64_t> ideals_;
  std::vector<uint64_t> ready_;  // per ideal: the operators whose predecessors it holds
  std::vector<Move> moves_;
  std::vector<size_t> moves_begin_;  // per ideal, where its moves start (and end, at the next one's)
  IdealTable table_;
  std::vector<double> f_;
  std::vector<Decision> decision_;
  std::unordered_map<uint64_t, SegmentMemo> memo_;
  bool aborted_ = false;
  int64_t branches_ = 0;
  int segment_solves_ = 0;
  // The ideal being solved and the enumeration of its segments.
  uint64_t ideal_ = 0, segment_ = 0, excluded_ = 0;
  double best_ = kInf;
  Decision best_decision_;
  uint64_t rest_ = 0;          // operators outside I
  std::vector<double> chain_;  // longest single-core chain within the segment ending at each operator
  double work_tc_ = 0, work_vc_ = 0, longest_ = 0, parallel_sum_ = 0;
  // A chain through the segment and on after it: the longest single-core chain to an operator of the
  // segment, then the fastest variants of what follows it (a bound on the segment and all that follows).
  double through_ = 0;
};

}  // namespace

bool segments_apply(const Problem& problem) {
  if (problem.overlap_across_types) return false;
  return std::none_of(problem.tasks.begin(), problem.tasks.end(),
                      [&](const Task& t) { return t.kind == TaskKind::Comm && !problem.comm_as_vector; });
}

std::optional<Schedule> solve_by_segments(const Problem& problem, const Prepared& q,
                                          const SegmentSolver& solve_segment) {
  if (!segments_apply(problem)) return std::nullopt;
  const auto single_only = std::count(q.parallel.begin(), q.parallel.end(), kInf);
  if (static_cast<double>(single_only) > kMaxSingleOnlyShare * static_cast<double>(q.task.size())) return std::nullopt;
  return SegmentDp(problem, q, solve_segment).run();
}

}  // namespace phaze::schedule::detail
