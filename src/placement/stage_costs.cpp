#include "placement/stage_costs.h"

#include <algorithm>

#include "placement/links.h"
#include "placement/stage_memory.h"

namespace phaze::placement {

namespace {

bool same_chain(const Chain& a, const Chain& b) {
  if (a.width != b.width || a.nodes.size() != b.nodes.size() || a.edges.size() != b.edges.size()) return false;
  for (size_t k = 0; k < a.nodes.size(); ++k) {
    const ChainNode &x = a.nodes[k], &y = b.nodes[k];
    if (x.forward_time != y.forward_time || x.backward_time != y.backward_time ||
        x.parameter_bytes != y.parameter_bytes || x.activation_bytes != y.activation_bytes ||
        x.tensor_parallel != y.tensor_parallel)
      return false;
  }
  for (size_t k = 0; k < a.edges.size(); ++k)
    if (a.edges[k].from != b.edges[k].from || a.edges[k].to != b.edges[k].to || a.edges[k].bytes != b.edges[k].bytes)
      return false;
  return true;
}

}  // namespace

void StageCosts::compute(const Chain& chain, const Cluster& cluster) {
  const cost::GroupLink link = pipeline_link(cluster, chain.width);
  recompute_ = cluster.recompute;
  if (link.bandwidth == link_.bandwidth && link.latency_s == link_.latency_s && same_chain(chain, chain_)) {
    use_in_flight_table(chain, cluster);
    return;
  }
  chain_ = chain;
  link_ = link;
  n_ = static_cast<int>(chain.nodes.size());
  width_ = chain.width;
  // Every stage [i, j), i < j, is written below; the cells j ≤ i are never read. So the buffers only grow,
  // without clearing (at 98 positions the clearing was a tenth of a call).
  const size_t cells = static_cast<size_t>(n_) * (n_ + 1);
  for (std::vector<double>* table :
       {&load_plain_, &load_recompute_, &params_, &forward_finish_, &backward_finish_, &backward_sum_})
    table->resize(cells);
  any_tp_.resize(cells);

  in_edges_.resize(n_);
  in_sends_.resize(n_);
  out_sends_.resize(n_);
  for (auto* lists : {&in_edges_, &in_sends_, &out_sends_})
    for (auto& list : *lists) list.clear();
  // Each edge's send, priced once: the loads below read it for every stage it crosses.
  for (const ChainEdge& e : chain.edges) {
    const double send_s = cost::transfer_s(link, e.bytes);
    in_edges_[e.to].emplace_back(e.from, e.bytes);
    in_sends_[e.to].emplace_back(e.from, send_s);
    out_sends_[e.from].emplace_back(e.to, send_s);
  }

  size_t tp_nodes = 0;
  for (const ChainNode& node : chain.nodes) tp_nodes += node.tensor_parallel ? 1 : 0;
  uniform_ = width_ == 1 || tp_nodes == 0 || tp_nodes == chain.nodes.size();

  // Forward passes, one per stage start i: F (in load_plain_), F0 (in load_recompute_), parameters.
  for (int i = 0; i < n_; ++i) {
    double finish = 0, f0 = 0, params = 0;
    bool tp = false;
    for (int v = i; v < n_; ++v) {
      double start = v > i ? finish : 0.0;
      for (const auto& [u, send_s] : in_sends_[v])
        if (u < i) start = std::max(start, send_s);
      const ChainNode& node = chain.nodes[v];
      finish = start + node.forward_time;
      f0 += node.forward_time;
      params += node.parameter_bytes;
      tp = tp || node.tensor_parallel;

      const size_t cell = at(i, v + 1);
      load_plain_[cell] = finish;
      forward_finish_[cell] = finish;
      load_recompute_[cell] = f0;
      params_[cell] = params;
      any_tp_[cell] = tp && width_ > 1;
    }
  }

  // Backward passes, one per stage end j: B, then the loads.
  for (int j = 1; j <= n_; ++j) {
    double finish = 0, backward_sum = 0;
    for (int v = j - 1; v >= 0; --v) {
      double start = v + 1 < j ? finish : 0.0;
      for (const auto& [w, send_s] : out_sends_[v])
        if (w >= j) start = std::max(start, send_s);
      finish = start + chain.nodes[v].backward_time;
      backward_sum += chain.nodes[v].backward_time;
      const size_t cell = at(v, j);
      const double forward = load_plain_[cell];
      const double f0 = load_recompute_[cell];
      backward_finish_[cell] = finish;
      backward_sum_[cell] = backward_sum;
      load_plain_[cell] = forward + finish;
      load_recompute_[cell] = forward + std::max(f0 + backward_sum, finish);
    }
  }
  use_in_flight_table(chain, cluster);
}

void StageCosts::use_in_flight_table(const Chain& chain, const Cluster& cluster) {
  const MemoryKey key{cluster.memory_bytes, cluster.devices, cluster.recompute, cluster.optimizer};
  footprint_.clear();
  footprint_.push_back(static_cast<double>(chain.width));
  for (const ChainNode& node : chain.nodes) {
    footprint_.push_back(node.parameter_bytes);
    footprint_.push_back(node.activation_bytes);
    footprint_.push_back(node.tensor_parallel ? 1.0 : 0.0);
  }
  for (const ChainEdge& e : chain.edges) {
    footprint_.push_back(static_cast<double>(e.from));
    footprint_.push_back(static_cast<double>(e.to));
    footprint_.push_back(e.bytes);
  }
  for (size_t k = 0; k < in_flight_.size(); ++k)
    if (in_flight_[k].key == key && in_flight_[k].footprint == footprint_) {
      in_flight_at_ = k;
      return;
    }
  const size_t cells = static_cast<size_t>(n_) * (n_ + 1);
  if (!in_flight_.empty() && (in_flight_.size() + 1) * cells * sizeof(int64_t) > kInFlightBytes) in_flight_.clear();
  InFlightTable& t = in_flight_.emplace_back();
  t.key = key;
  t.footprint = footprint_;
  t.table.resize(cells);
  // The stage's bytes, as the forward passes gather them: its parameters and activations, and what enters
  // it from earlier positions.
  for (int i = 0; i < n_; ++i) {
    double params = 0, acts = 0, entering = 0;
    for (int v = i; v < n_; ++v) {
      for (const auto& [u, bytes] : in_edges_[v])
        if (u < i) entering += bytes;
      params += chain.nodes[v].parameter_bytes;
      acts += chain.nodes[v].activation_bytes;
      t.table[at(i, v + 1)] = placement::max_in_flight(
          StageFootprint{params, acts, whole_stage_stash_bytes(acts, entering, cluster)}, cluster);
    }
  }
  in_flight_at_ = in_flight_.size() - 1;
}

void use_network(Cluster& cluster, const hw::Network& network) {
  cluster.pipeline_network = network;
  cluster.data_parallel_network = network;
}

}  // namespace phaze::placement
