#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace phaze::placement {

/// One layer of the chain for one tensor-parallel width. Our pipeline uses seconds and bytes; the
/// compatibility format takes whatever units its file uses.
struct ChainNode {
  double forward_time = 0;       ///< seconds: the layer's forward pass on its device group
  double backward_time = 0;      ///< seconds: the layer's backward pass
  double parameter_bytes = 0;    ///< per device
  double activation_bytes = 0;   ///< stashed for one micro-batch, per device
  bool tensor_parallel = false;  ///< the layer is split over t devices
};

/// A dataflow edge between chain positions `from` < `to`, carrying `bytes` per micro-batch.
struct ChainEdge {
  int from = 0;
  int to = 0;
  double bytes = 0;
};

/// The layer graph of one width, its nodes in the unique topological order (every consecutive pair is
/// joined by an edge; further "skip" edges may jump ahead).
struct Chain {
  int64_t width = 1;  ///< t
  std::vector<ChainNode> nodes;
  std::vector<ChainEdge> edges;
};

enum class Optimizer { Sgd, Adam };

/// The cluster and training settings of one placement question.
struct Cluster {
  int64_t devices = 1;        ///< K
  double memory_bytes = 0;    ///< per device (M)
  double bandwidth = 1;       ///< bytes per second of every link
  int64_t micro_batches = 1;  ///< N, micro-batches in one global batch
  bool recompute = false;     ///< recompute activations (true) or stash them
  Optimizer optimizer = Optimizer::Sgd;
};

/// A contiguous range of chain positions [first, last) run on `devices` devices per pipeline replica.
struct Stage {
  int first = 0;
  int last = 0;
  int64_t devices = 1;
};

/// A placement: stages (first stage first), data-parallel degree and width, and the time per batch.
struct Plan {
  bool feasible = false;
  std::vector<Stage> stages;
  int64_t data_parallel = 0;
  int64_t width = 0;
  double time_per_batch = 0;  ///< seconds (or the unit of the input)
};

}  // namespace phaze::placement
