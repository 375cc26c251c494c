#pragma once

#include <vector>

#include "cost/collective_time.h"
#include "placement/chain.h"
#include "placement/stage_memory.h"

namespace phaze::placement {

/// Load, memory and parameter figures of every contiguous stage [i, j) of a chain (placement.md,
/// "Stage load"), computed in O(n² + n·edges): a stage's forward finish times do not depend on where it
/// ends and its backward finish times do not depend on where it starts, so one forward pass per start
/// and one backward pass per end give every stage. With recomputation the backward pass is floored by
/// F0 = Σ forward times; in max-plus form that is R = max(F0 + Σ backward times, B).
class StageCosts {
 public:
  /// Computes every table for `chain` under `cluster`; reuses the buffers of earlier calls. When the chain
  /// and the pipeline link are those of the last call, only the memory figure (max_in_flight) is looked up
  /// again: the points of a design differ in HBM size and recomputation, which change nothing else. The
  /// memory figures are kept per memory footprint of the chain (its layers' bytes and edges) and memory
  /// settings, which designs share: they differ in the layers' times only.
  void compute(const Chain& chain, const Cluster& cluster);

  int size() const { return n_; }
  /// Load of stage [i, j) when `stages_from_here` stages (itself included) run from it to the end.
  double load(int i, int j, int64_t stages_from_here) const {
    return recompute_ && stages_from_here > 1 ? load_recompute_[at(i, j)] : load_plain_[at(i, j)];
  }
  /// Most micro-batches in flight that the stage's memory allows (stage_memory.h; 0: it never fits). Under
  /// 1F1B a stage holds one per stage from it to the end, so this is also the most stages from it on.
  int64_t max_in_flight(int i, int j) const { return in_flight_[in_flight_at_].table[at(i, j)]; }
  double parameter_bytes(int i, int j) const { return params_[at(i, j)]; }
  /// The same tables' row of the stages that start at i, indexed by the stage end j (i < j ≤ size()): the
  /// planners' inner loops read them without recomputing the index.
  const double* load_row(int i, int64_t stages_from_here) const {
    return &(recompute_ && stages_from_here > 1 ? load_recompute_ : load_plain_)[at(i, 0)];
  }
  const double* parameter_row(int i) const { return &params_[at(i, 0)]; }
  const int64_t* max_in_flight_row(int i) const { return &in_flight_[in_flight_at_].table[at(i, 0)]; }
  /// Devices of the stage per pipeline replica: t if it holds a tensor-parallel layer, else 1.
  int64_t devices(int i, int j) const { return any_tp_[at(i, j)] ? width_ : 1; }
  /// True when every stage has the same number of devices (no layer is split, or all are).
  bool uniform_devices() const { return uniform_; }
  /// The parts a load is made of, in seconds: the stage's forward finish F (waiting for its inputs), its
  /// backward finish B (waiting for the gradients of its outputs) and Σ backward times. load(i, j, 1) is
  /// F + B, and with recomputation load(i, j, s > 1) is F + max(B, Σ backward + Σ forward).
  double forward_finish(int i, int j) const { return forward_finish_[at(i, j)]; }
  double backward_finish(int i, int j) const { return backward_finish_[at(i, j)]; }
  double backward_sum(int i, int j) const { return backward_sum_[at(i, j)]; }

 private:
  size_t at(int i, int j) const { return static_cast<size_t>(i) * (n_ + 1) + j; }

  int n_ = 0;
  int64_t width_ = 1;
  bool recompute_ = false;
  bool uniform_ = true;
  std::vector<double> load_plain_, load_recompute_, params_;
  std::vector<double> forward_finish_, backward_finish_, backward_sum_;
  std::vector<char> any_tp_;
  // What the tables were computed for: the chain and its pipeline link (placement/links.h).
  Chain chain_;
  cost::GroupLink link_{-1, -1};
  /// The cluster figures that max_in_flight reads.
  struct MemoryKey {
    double memory_bytes = -1;
    int64_t devices = -1;
    bool recompute = false;
    Optimizer optimizer = Optimizer::Sgd;
    bool operator==(const MemoryKey&) const = default;
  };
  /// max_in_flight of every stage of the chains with one footprint (width, the layers' parameter and
  /// activation bytes and splits, the edges with their bytes, as `footprint`) under one MemoryKey.
  struct InFlightTable {
    MemoryKey key;
    std::vector<double> footprint;
    std::vector<int64_t> table;
  };
  /// The table of `chain` under `cluster`, computed when not kept; sets in_flight_at_.
  void use_in_flight_table(const Chain& chain, const Cluster& cluster);
  /// The tables kept take at most this many bytes (at least one table is kept; all are forgotten when full):
  /// a search's thread meets one per micro-batch size, width and memory setting of a model, GPT-3's sweep 96
  /// of 78 KB each.
  static constexpr size_t kInFlightBytes = size_t{8} << 20;
  std::vector<InFlightTable> in_flight_;
  size_t in_flight_at_ = 0;
  std::vector<double> footprint_;  // scratch: the footprint of the chain asked about
  // scratch
  std::vector<double> finish_, incoming_, outgoing_;
  std::vector<std::vector<std::pair<int, double>>> in_edges_;  // per position: (from, bytes)
  // Per position: the seconds of the sends of its entering (from, s) and leaving (to, s) edges.
  std::vector<std::vector<std::pair<int, double>>> in_sends_, out_sends_;
};

}  // namespace phaze::placement
