#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cost/cost_params.h"
#include "cost/estimate_cache.h"
#include "cost/gemm_cost.h"
#include "hw/architecture.h"
#include "hw/network.h"
#include "hw/system.h"
#include "model/operator_graph.h"

namespace phaze::cost {

struct Estimate {
  double latency_s = 0;
  double energy_j = 0;
};

/// An operator's two answers: on one core of its kind, and intra-operator parallel over all of them.
struct OperatorEstimate {
  Estimate single;
  Estimate all;
};

/// Signature of a GEMM estimate: dimensions, core configuration, model version and parameters.
std::string gemm_cache_key(const model::Gemm& gemm, const hw::TensorCoreConfig& config, const CostParams& params);

/// Estimates operators on architectures joined by `network`. GEMM searches are remembered in memory and,
/// when a cache is given, in the persistent cache shared with other runs and processes. Results do not
/// depend on the thread count. A tensor-parallel collective over t ranks runs on the innermost tier of the
/// network whose groups hold t devices (the ranks of a group are neighbours), at that tier's effective
/// bandwidth and with its latency per ring step. The default network is the tpuv4-like system's one link.
class Estimator {
 public:
  explicit Estimator(CostParams params = {}, hw::Network network = hw::tpuv4_like_system().network,
                     EstimateCache* cache = nullptr)
      : params_(params),
        network_(std::move(network)),
        cache_(cache),
        mapping_memo_(std::make_shared<GemmMappingMemo>(params_)) {}

  OperatorEstimate estimate(const model::Operator& op, const hw::Architecture& arch);

  /// Latency and energy of many GEMMs, computed on `threads` threads (cache lookups and stores batched).
  std::vector<Estimate> gemms(const std::vector<std::pair<model::Gemm, hw::TensorCoreConfig>>& jobs, int threads);

  const CostParams& params() const { return params_; }
  const hw::Network& network() const { return network_; }

  /// Forgets the GEMM estimates in memory, which grow with every core configuration met; keeps the mapping
  /// search's levels, which are bounded and recur across configurations.
  void forget_estimates() { memory_.clear(); }

 private:
  Estimate gemm(const model::Gemm& gemm, const hw::TensorCoreConfig& config);
  Estimate fused(const model::Operator& op, const hw::Architecture& arch, bool all_cores);
  /// A fused attention core (model::AttentionCore).
  Estimate attention(const model::Operator& op, const hw::Architecture& arch, bool all_cores);

  /// What a GEMM estimate depends on besides the estimator's parameters: the GEMM and the core
  /// configuration, doubles by their bits.
  struct GemmKey {
    int64_t m, n, k, batch, cores, width, depth, sram_bytes, glb_bytes;
    uint64_t hbm_bandwidth_bits, clock_bits;
    bool on_chip;
    bool operator==(const GemmKey&) const = default;
  };
  struct GemmKeyHash {
    size_t operator()(const GemmKey& key) const;
  };
  static GemmKey key_of(const model::Gemm& gemm, const hw::TensorCoreConfig& config);

  CostParams params_;
  hw::Network network_;
  EstimateCache* cache_;
  std::unordered_map<GemmKey, Estimate, GemmKeyHash> memory_;
  std::shared_ptr<GemmMappingMemo> mapping_memo_;  // shared by copies, which map on the same parameters
};

}  // namespace phaze::cost
