#include "search/plan_cache.h"

#include <bit>

#include "util/hash_mix.h"

namespace phaze::search {

namespace {

void add(std::vector<uint64_t>& key, double x) {
  key.push_back(std::bit_cast<uint64_t>(x));
}
void add(std::vector<uint64_t>& key, int64_t x) {
  key.push_back(static_cast<uint64_t>(x));
}

void add(std::vector<uint64_t>& key, const hw::NetworkTier& tier) {
  // Every field the planner reads of a link: its bandwidths and latency (the name does not count).
  add(key, tier.bandwidth);
  add(key, tier.latency_s);
  add(key, tier.efficiency);
  add(key, tier.members);
  add(key, static_cast<int64_t>(tier.torus.has_value()));
  if (tier.torus)
    for (const hw::TorusDims& d : {tier.torus->cube, tier.torus->pod, tier.torus->slice})
      for (int64_t x : d) add(key, x);
}

void add(std::vector<uint64_t>& key, const hw::Network& network) {
  add(key, static_cast<int64_t>(network.tiers.size()));
  for (const hw::NetworkTier& tier : network.tiers) add(key, tier);
}

/// Everything the planner's answer depends on, as bit patterns: the graph (its layers' bytes and edges),
/// the passes' makespans and every field of the cluster. A key equal bit for bit means the same plan.
void make_key(const model::LayerGraph& graph, const LayerSchedules& schedules, const placement::Cluster& c,
              std::vector<uint64_t>& key) {
  key.clear();
  key.push_back(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&graph)));
  for (const LayerSchedules::Passes& p : schedules.layers) {
    add(key, p.forward.makespan_s);
    add(key, p.backward.makespan_s);
  }
  add(key, c.devices);
  add(key, c.memory_bytes);
  add(key, c.pipeline_network);
  add(key, c.data_parallel_network);
  add(key, c.micro_batches);
  add(key, static_cast<int64_t>(c.recompute));
  add(key, static_cast<int64_t>(c.optimizer));
  add(key, static_cast<int64_t>(c.corrected.enabled));
  add(key, c.corrected.optimizer_seconds_per_byte);
}

uint64_t hash_of(const std::vector<uint64_t>& key) {
  uint64_t h = 0;
  for (uint64_t v : key) h = hash_mix(h, v);
  return h;
}

}  // namespace

placement::Plan PlanCache::solve(const model::LayerGraph& graph, const LayerSchedules& schedules,
                                 const placement::Chain& chain, const placement::Cluster& cluster,
                                 placement::CorrectedPlanner& planner) {
  make_key(graph, schedules, cluster, key_);
  const uint64_t h = hash_of(key_);
  auto& bucket = buckets_[h];
  for (const Entry& e : bucket)
    if (e.key == key_) {
      ++hits_;
      return e.plan;
    }
  ++misses_;
  placement::Plan plan = planner.solve(chain, cluster);
  if (size_ >= capacity_) {
    buckets_.clear();
    size_ = 0;
  }
  buckets_[h].push_back({key_, plan});
  ++size_;
  return plan;
}

}  // namespace phaze::search
