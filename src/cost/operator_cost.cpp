#include "cost/operator_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>

#include "cost/attention_cost.h"
#include "cost/collective_time.h"
#include "cost/gemm_cost.h"
#include "cost/vector_cost.h"
#include "util/hash_mix.h"
#include "util/run_on_threads.h"

namespace phaze::cost {

std::string gemm_cache_key(const model::Gemm& g, const hw::TensorCoreConfig& c, const CostParams& p) {
  return fmt::format(
      "gemm/v{}/{}x{}x{}x{}/tc{}x{}x{}/sram{}/glb{}/hbm{:.17g}/clk{:.17g}/e{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},"
      "{:.6g}/bw{:.17g}/b{:.6g}/f{}{}",
      kCostModelVersion, g.m, g.n, g.k, g.batch, c.cores, c.width, c.depth, c.sram_bytes, c.glb_bytes, c.hbm_bandwidth,
      c.clock_hz, p.mac_energy, p.register_read_energy, p.register_write_energy, p.sram_energy, p.glb_energy,
      p.hbm_energy, p.glb_words_per_cycle, p.double_buffering, static_cast<int>(p.systolic_fill),
      c.on_chip ? "/on-chip" : "");
}

Estimate Estimator::gemm(const model::Gemm& g, const hw::TensorCoreConfig& c) {
  // A GEMM met before is answered here: gemms() builds its batch's vectors and thread set-up even for one
  // job, which was about half of the estimator's time in an exhaustive search.
  if (auto it = memory_.find(key_of(g, c)); it != memory_.end()) return it->second;
  return gemms({{g, c}}, 1).front();
}

Estimator::GemmKey Estimator::key_of(const model::Gemm& g, const hw::TensorCoreConfig& c) {
  return GemmKey{g.m,
                 g.n,
                 g.k,
                 g.batch,
                 c.cores,
                 c.width,
                 c.depth,
                 c.sram_bytes,
                 c.glb_bytes,
                 std::bit_cast<uint64_t>(c.hbm_bandwidth),
                 std::bit_cast<uint64_t>(c.clock_hz),
                 c.on_chip};
}

size_t Estimator::GemmKeyHash::operator()(const GemmKey& key) const {
  uint64_t h = 0;
  for (const uint64_t v :
       {static_cast<uint64_t>(key.m), static_cast<uint64_t>(key.n), static_cast<uint64_t>(key.k),
        static_cast<uint64_t>(key.batch), static_cast<uint64_t>(key.cores), static_cast<uint64_t>(key.width),
        static_cast<uint64_t>(key.depth), static_cast<uint64_t>(key.sram_bytes), static_cast<uint64_t>(key.glb_bytes),
        key.hbm_bandwidth_bits, key.clock_bits, static_cast<uint64_t>(key.on_chip)})
    h = hash_mix(h, v);
  return static_cast<size_t>(h);
}

std::vector<Estimate> Estimator::gemms(const std::vector<std::pair<model::Gemm, hw::TensorCoreConfig>>& jobs,
                                       int threads) {
  std::vector<Estimate> results(jobs.size());
  std::vector<GemmKey> keys(jobs.size());
  std::vector<size_t> missing;
  for (size_t i = 0; i < jobs.size(); ++i) {
    keys[i] = key_of(jobs[i].first, jobs[i].second);
    if (auto it = memory_.find(keys[i]); it != memory_.end()) {
      results[i] = it->second;
    } else {
      missing.push_back(i);
    }
  }
  // The persistent cache is keyed by text (every parameter and the model version): made for misses only.
  std::vector<std::string> text_keys(jobs.size());
  if (cache_ && !missing.empty()) {
    std::vector<std::string> lookup;
    for (size_t i : missing) {
      text_keys[i] = gemm_cache_key(jobs[i].first, jobs[i].second, params_);
      lookup.push_back(text_keys[i]);
    }
    const auto found = cache_->find_many(lookup);
    std::vector<size_t> still;
    for (size_t j = 0; j < missing.size(); ++j) {
      if (found[j]) {
        results[missing[j]] = Estimate{found[j]->latency_s, found[j]->energy_j};
        memory_[keys[missing[j]]] = results[missing[j]];
      } else {
        still.push_back(missing[j]);
      }
    }
    missing.swap(still);
  }
  // Duplicates among the missing jobs are searched once.
  std::vector<size_t> unique;
  {
    std::unordered_map<GemmKey, size_t, GemmKeyHash> first;
    for (size_t i : missing)
      if (first.emplace(keys[i], i).second) unique.push_back(i);
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t u = next++; u < unique.size(); u = next++) {
      const size_t i = unique[u];
      const GemmMapping m = map_gemm(jobs[i].first, jobs[i].second, params_, mapping_memo_.get());
      results[i] = Estimate{m.latency_s(), m.energy_j};
    }
  };
  if (unique.size() == 1) {
    work();  // one search: no thread set-up
  } else if (!unique.empty()) {
    run_on_threads(std::min<int>(threads, static_cast<int>(unique.size())), work);
  }

  std::vector<std::pair<std::string, CachedEstimate>> fresh;
  for (size_t i : unique) {
    memory_[keys[i]] = results[i];
    if (cache_) fresh.emplace_back(text_keys[i], CachedEstimate{results[i].latency_s, results[i].energy_j});
  }
  for (size_t i : missing) results[i] = memory_[keys[i]];
  if (cache_ && !fresh.empty()) cache_->store_many(fresh);
  return results;
}

namespace {

/// Vector work of a fused operator on the vector cores paired with its tensor cores (min(num_tc, num_vc) of
/// them with all cores, else one): the time of all of it, the time of one output tile's share (what is left
/// when the tensor cores finish), and its energy.
struct PairedVectorWork {
  double all_s = 0, tile_s = 0, energy_j = 0;
};

PairedVectorWork paired_vector_work(const std::vector<model::VectorPass>& passes, const hw::Architecture& arch,
                                    bool all_cores, const CostParams& params) {
  hw::VectorCoreConfig vc = hw::vector_cores(arch, all_cores);
  vc.cores = all_cores ? std::min(arch.num_tc, arch.num_vc) : 1;
  const int64_t lanes = vc.lanes * vc.cores;
  std::vector<model::VectorPass> tile = passes;
  for (model::VectorPass& p : tile) p.elements = std::min(p.elements, arch.tc_width * arch.tc_depth);
  return PairedVectorWork{vector_compute_cycles(passes, lanes) / arch.clock_hz,
                          vector_compute_cycles(tile, lanes) / arch.clock_hz,
                          vector_cost(passes, 0.0, vc, params).energy_j};
}

}  // namespace

Estimate Estimator::fused(const model::Operator& op, const hw::Architecture& arch, bool all_cores) {
  if (op.attention) return attention(op, arch, all_cores);
  const hw::TensorCoreConfig tc = hw::tensor_cores(arch, all_cores);
  const Estimate g = gemm(*op.gemm, tc);
  if (op.passes.empty()) return g;
  // The epilogue runs on the paired vector core(s) while results stream out of the array; what is left
  // after the GEMM is the epilogue of one output tile.
  const PairedVectorWork epilogue = paired_vector_work(op.passes, arch, all_cores, params_);
  return Estimate{std::max(g.latency_s, epilogue.all_s) + epilogue.tile_s, g.energy_j + epilogue.energy_j};
}

Estimate Estimator::attention(const model::Operator& op, const hw::Architecture& arch, bool all_cores) {
  // The products one after another on the tensor cores, their operands and results in the GLB; the softmax on
  // the paired vector cores and the HBM traffic overlapped with them (accelerator.md 6.4).
  const model::AttentionCore& core = *op.attention;
  hw::TensorCoreConfig tc = hw::tensor_cores(arch, all_cores);
  tc.on_chip = true;
  // A causal kernel runs share() of each product, in blocks no smaller than the arrays want: priced as that
  // share of the full product.
  Estimate products;
  for (const model::Gemm& product : core.products()) {
    const Estimate e = gemm(product, tc);
    products.latency_s += core.share() * e.latency_s;
    products.energy_j += core.share() * e.energy_j;
  }
  const PairedVectorWork softmax = paired_vector_work(op.passes, arch, all_cores, params_);
  const double bytes = attention_hbm_bytes(core, std::min(tc.cores, core.heads), arch.glb_bytes, kWordBytes);
  const double hbm_s = bytes / arch.hbm_bandwidth;
  const double words = bytes / static_cast<double>(kWordBytes);
  return Estimate{std::max({products.latency_s, softmax.all_s, hbm_s}) + softmax.tile_s,
                  products.energy_j + softmax.energy_j + words * (params_.hbm_energy + params_.glb_energy)};
}

OperatorEstimate Estimator::estimate(const model::Operator& op, const hw::Architecture& arch) {
  switch (op.engine) {
    case model::Engine::Tensor:
    case model::Engine::Fused: return OperatorEstimate{fused(op, arch, false), fused(op, arch, true)};
    case model::Engine::Vector: {
      const double bytes = static_cast<double>(op.read_bytes + op.write_bytes);
      const VectorCost one = vector_cost(op.passes, bytes, hw::vector_cores(arch, false), params_);
      const VectorCost all = vector_cost(op.passes, bytes, hw::vector_cores(arch, true), params_);
      return OperatorEstimate{{one.cycles / arch.clock_hz, one.energy_j}, {all.cycles / arch.clock_hz, all.energy_j}};
    }
    case model::Engine::Comm: {
      // A tensor-parallel group (consecutive devices) or the ranks of an expert-parallel all-to-all (t or etp
      // apart), priced by the one rule of every execution model.
      const DeviceGroup group{op.collective->ranks, op.collective->stride};
      const double bytes = static_cast<double>(op.collective->bytes);
      const double seconds = op.collective->kind == model::Collective::Kind::AllToAll
                                 ? all_to_all_s(network_, group, bytes)
                                 : all_reduce_s(network_, group, bytes);
      return OperatorEstimate{{seconds, 0}, {seconds, 0}};
    }
    case model::Engine::None: return {};
  }
  return {};
}

}  // namespace phaze::cost
