#pragma once

// Piper's planning problem (Tarnawski et al., NeurIPS 2021; docs/piper.md): a DAG of layers, each with
// tensor-model-parallel configurations (TMPCs) per tensor-parallel width, to be cut into pipeline stages
// that each get their own width t and data-parallel degree d. Plain data: the input reader
// (io/piper_json.h) fills it, the planner (piper/planner.h) reads it.

#include <cstdint>
#include <string>
#include <vector>

namespace phaze::piper {

/// One tensor-model-parallel configuration of a layer at one width (e.g. "vanilla", "activation recomp").
struct Tmpc {
  std::string id;
  double time_per_sample_s = 0;           ///< p: forward + backward of one micro-batch on the t devices of a group
  double parameter_bytes = 0;             ///< w: what the data-parallel resynchronisation moves
  double memory_per_in_flight_bytes = 0;  ///< a: memory grows by a per micro-batch in flight
  double memory_fixed_bytes = 0;          ///< b
  /// Bytes added to each incoming edge when it crosses a stage boundary, in the order of Node::in_edges.
  std::vector<double> sync_in_bytes;
  /// Bytes added to each outgoing edge when it crosses a stage boundary, in the order of Node::out_edges.
  std::vector<double> sync_out_bytes;
};

struct Node {
  int64_t id = 0;    ///< as in the input
  std::string name;  ///< optional label
  /// Options per width: tmpcs[w] holds the TMPCs at width widths[w] of the problem (empty: not supported).
  std::vector<std::vector<Tmpc>> tmpcs;
  std::vector<int> in_edges;   ///< indices into Problem::edges, in input order
  std::vector<int> out_edges;  ///< indices into Problem::edges, in input order
};

struct Edge {
  int from = 0;      ///< node index
  int to = 0;        ///< node index
  double bytes = 0;  ///< activation per micro-batch crossing the edge
};

struct Problem {
  double memory_per_device_bytes = 0;  ///< M
  int64_t devices = 1;                 ///< K
  double bandwidth_bytes_per_s = 1;    ///< B, per device
  int64_t micro_batches = 1;           ///< N, micro-batches per batch
  std::vector<int64_t> widths;         ///< every width any node has, ascending
  std::vector<Node> nodes;             ///< in input order (index = position)
  std::vector<Edge> edges;             ///< in input order
};

/// Largest accepted inputs (docs/piper.md of the repository, "Bounds").
namespace piper_limits {
inline constexpr int64_t kDevices = int64_t{1} << 20;       ///< K
inline constexpr int64_t kMicroBatches = int64_t{1} << 20;  ///< N
inline constexpr int64_t kNodes = 4096;
inline constexpr int64_t kEdges = 65536;
inline constexpr int64_t kWidth = int64_t{1} << 20;
inline constexpr int64_t kTmpcsPerWidth = 64;
inline constexpr int64_t kDownsets = 100000;         ///< contiguous-cut states of the DAG
inline constexpr int64_t kStagePairs = 20000000;     ///< (downset, sub-downset) pairs: candidate stages
inline constexpr int64_t kStageNodes = 1000000000;   ///< Σ over the candidate stages of their nodes
inline constexpr int64_t kStageChoices = 100000;     ///< TMPC choices kept for one stage at one width
inline constexpr int64_t kPartialChoices = 1000000;  ///< partial choices of one stage while groups merge
inline constexpr int64_t kDownsetWork = 2000000000;  ///< node visits while enumerating downsets and their pairs
inline constexpr int64_t kThreads = 1024;            ///< threads building the candidate stages' choices
}  // namespace piper_limits

}  // namespace phaze::piper
