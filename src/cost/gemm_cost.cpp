// GEMM latency and energy on tensor cores (accelerator.md 5, "our model" of 5.7).
//
// A mapping splits the GEMM over cores (batch, M, N), unrolls two dimensions on each core's PE array
// (ceil tiling: a partly filled pass costs a full pass), tiles the per-core problem in the core's SRAM
// and the whole problem in the GLB, each with a loop order. Latency is the roofline maximum of the
// padded compute and the traffic of each boundary over its bandwidth; every level is tiled on its own.
//
// The search is exact over that space. Within a level, the traffic of each loop order is non-increasing
// in every tile extent, one extent does not matter at all (k for C-stationary, n for A-stationary, m for
// B-stationary; it is 1) and for each distinct size of a second extent the third is the largest that
// fits: so the Pareto-optimal tilings are O(√D) per order. Latency is a maximum over levels whose options
// are independent given the core split, so the minimum latency is the maximum of the per-level minima,
// and the minimum energy at that latency picks, per level, the cheapest option that is fast enough.

#include "cost/gemm_cost.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "util/divisors.h"
#include "util/hash_mix.h"

namespace phaze::cost {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/// Calls f(t) for every distinct tile size t = ⌈D/T⌉, T = 1..D (largest first).
template <class F>
void for_each_tile_size(int64_t extent, F&& f) {
  int64_t trips = 1;
  while (true) {
    const int64_t tile = ceil_div(extent, trips);
    f(tile);
    if (tile == 1) break;
    trips = ceil_div(extent, tile - 1);
  }
}

/// Elements crossing into one level for one GEMM instance.
struct Traffic {
  double a = 0, b = 0, c_write = 0, c_readback = 0;
};

Traffic level_traffic(int64_t M, int64_t N, int64_t K, const Tiling& t) {
  const double mk = static_cast<double>(M) * K, kn = static_cast<double>(K) * N, mn = static_cast<double>(M) * N;
  const double tm = static_cast<double>(ceil_div(M, t.m)), tn = static_cast<double>(ceil_div(N, t.n)),
               tk = static_cast<double>(ceil_div(K, t.k));
  switch (t.order) {
    case LoopOrder::CStationary: return Traffic{mk * tn, kn * tm, mn, 0};
    case LoopOrder::AStationary: return Traffic{mk, kn * tm, mn * tk, mn * (tk - 1)};
    case LoopOrder::BStationary: return Traffic{mk * tn, kn, mn * tk, mn * (tk - 1)};
  }
  return {};
}

/// Calls f(tiling) for every Pareto-optimal tiling of an M×N×K problem in a buffer of `capacity` words.
template <class F>
void for_each_tiling(int64_t M, int64_t N, int64_t K, double capacity, F&& f) {
  // Largest second extent y with x·y + x + y ≤ capacity (the third extent is 1), capped at `extent`.
  auto largest = [capacity](int64_t x, int64_t extent) -> int64_t {
    const double y = std::floor((capacity - static_cast<double>(x)) / static_cast<double>(x + 1));
    return y < 1 ? 0 : std::min<int64_t>(extent, static_cast<int64_t>(std::min(y, 9e18)));
  };
  bool any = false;
  for_each_tile_size(M, [&](int64_t m) {
    if (const int64_t n = largest(m, N); n > 0) {
      f(Tiling{m, n, 1, LoopOrder::CStationary});
      any = true;
    }
  });
  for_each_tile_size(M, [&](int64_t m) {
    if (const int64_t k = largest(m, K); k > 0) f(Tiling{m, 1, k, LoopOrder::AStationary});
  });
  for_each_tile_size(N, [&](int64_t n) {
    if (const int64_t k = largest(n, K); k > 0) f(Tiling{1, n, k, LoopOrder::BStationary});
  });
  if (!any) f(Tiling{1, 1, 1, LoopOrder::CStationary});  // nothing fits: stream element by element
}

/// One option of a level: its time on the critical resource, energy and words.
struct Option {
  double cycles = kInf, energy = kInf, words = kInf;
  Tiling tiling;
  Dataflow dataflow;
};

/// Among options no slower than `limit`, the cheapest (then the fewest words).
const Option* cheapest_within(const std::vector<Option>& options, double limit) {
  const Option* best = nullptr;
  for (const Option& o : options)
    if (o.cycles <= limit && (!best || o.energy < best->energy || (o.energy == best->energy && o.words < best->words)))
      best = &o;
  return best;
}

double fastest(const std::vector<Option>& options) {
  double best = kInf;
  for (const Option& o : options) best = std::min(best, o.cycles);
  return best;
}

/// A level's options reduced to what map_gemm asks of them: the fastest time, and for a time limit the cheapest
/// option within it (least energy, then fewest words, then the first enumerated, as cheapest_within picks).
/// `stairs` holds, in order of time, each option cheaper than all those before it in that order: the answer
/// for a limit is the last stair within it.
struct Level {
  std::vector<Option> stairs;
  double fastest() const { return stairs.empty() ? kInf : stairs.front().cycles; }
  const Option* cheapest_within(double limit) const {
    const auto after =
        std::upper_bound(stairs.begin(), stairs.end(), limit, [](double t, const Option& o) { return t < o.cycles; });
    return after == stairs.begin() ? nullptr : &*(after - 1);
  }
};

/// The stairs of `options` (in enumeration order, which breaks ties).
void make_stairs(const std::vector<Option>& options, Level& level) {
  // By time, then enumeration order: the order a stable sort by time gives, from a plain sort of (time,
  // index) pairs that holds its keys side by side: a GPT-3 sweep takes 3 % less CPU time than with a stable
  // sort of indices.
  thread_local std::vector<std::pair<double, uint32_t>> order;
  order.resize(options.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = {options[i].cycles, static_cast<uint32_t>(i)};
  std::sort(order.begin(), order.end());
  level.stairs.clear();
  uint32_t cheapest = 0;
  for (const auto& [cycles, i] : order) {
    const Option& o = options[i];
    const bool cheaper =
        level.stairs.empty() ||
        std::tie(o.energy, o.words, i) < std::tie(options[cheapest].energy, options[cheapest].words, cheapest);
    if (!cheaper) continue;
    cheapest = i;
    level.stairs.push_back(o);
  }
}

/// A level's identity: its kind (0: GLB, 1: SRAM) and what its options depend on (doubles by their bits).
using LevelKey = std::array<int64_t, 9>;
struct LevelKeyHash {
  size_t operator()(const LevelKey& key) const {
    uint64_t h = 0;
    for (const int64_t v : key) h = hash_mix(h, static_cast<uint64_t>(v));
    return static_cast<size_t>(h);
  }
};

struct PerCore {
  int64_t m, n, k, g;
  int64_t size(Dim d) const { return d == Dim::M ? m : d == Dim::N ? n : k; }
};

constexpr std::array<Dataflow, 6> kDataflows{{{Dim::K, Dim::N, Dim::M},
                                              {Dim::N, Dim::K, Dim::M},
                                              {Dim::M, Dim::N, Dim::K},
                                              {Dim::N, Dim::M, Dim::K},
                                              {Dim::M, Dim::K, Dim::N},
                                              {Dim::K, Dim::M, Dim::N}}};

/// PE-array option: padded compute and SRAM ↔ array traffic of one core.
Option array_option(const PerCore& p, const Dataflow& df, const hw::TensorCoreConfig& c, const CostParams& params,
                    double cores_used, double& compute_cycles) {
  const int64_t rows = p.size(df.rows), cols = p.size(df.cols), streamed = p.size(df.streamed);
  const int64_t row_passes = ceil_div(rows, c.depth), col_passes = ceil_div(cols, c.width);
  const double passes = static_cast<double>(p.g) * row_passes * col_passes;
  const double fill = static_cast<double>(c.width + c.depth);
  compute_cycles = passes * static_cast<double>(streamed);
  if (params.systolic_fill == SystolicFill::EveryPass) compute_cycles += passes * fill;
  if (params.systolic_fill == SystolicFill::Once) compute_cycles += fill;

  // The stationary operand spans rows × cols; each other operand spans the streamed dimension and one of
  // them, and is fed once per pass along the other.
  const bool a_stationary = (df.rows != Dim::N && df.cols != Dim::N);
  const bool b_stationary = (df.rows != Dim::M && df.cols != Dim::M);
  const bool c_stationary = !a_stationary && !b_stationary;
  const double stationary = static_cast<double>(rows) * cols;
  auto fed = [&](Dim spatial) {  // elements of streamed × spatial, once per pass along the other spatial dim
    return static_cast<double>(streamed) * p.size(spatial) * (spatial == df.rows ? col_passes : row_passes);
  };
  auto other_spatial = [&](Dim a, Dim b) {  // the spatial dimension among {a, b}
    return (a == df.rows || a == df.cols) ? a : b;
  };
  double reads = stationary, writes = 0;
  if (!a_stationary) reads += fed(other_spatial(Dim::M, Dim::K));
  if (!b_stationary) reads += fed(other_spatial(Dim::K, Dim::N));
  if (c_stationary) {
    writes = stationary;
  } else {
    const Dim kept = other_spatial(Dim::M, Dim::N);  // the output's spatial dimension; K is the other one
    const double passes_along_k = static_cast<double>(df.rows == Dim::K ? row_passes : col_passes);
    const double out = static_cast<double>(streamed) * p.size(kept);
    writes = out * passes_along_k;
    reads += out * (passes_along_k - 1);
  }
  reads *= p.g;
  writes *= p.g;
  const double port = static_cast<double>(c.width + c.depth);
  Option o;
  o.dataflow = df;
  o.cycles = std::max({compute_cycles, reads / port, writes / port});
  o.energy = cores_used * ((reads + writes) * params.sram_energy +
                           stationary * static_cast<double>(p.g) * params.register_write_energy);
  o.words = cores_used * (reads + writes);
  return o;
}

}  // namespace

struct GemmMappingMemo::Impl {
  CostParams params;
  mutable std::mutex mutex;
  std::unordered_map<LevelKey, std::shared_ptr<const Level>, LevelKeyHash> levels;
};

namespace {

/// The level `key` from the memo, or made in `here` from the options `enumerate` lists and kept in the memo;
/// without a memo nothing is returned (the level is in `here`).
template <class Enumerate>
std::shared_ptr<const Level> level_of(GemmMappingMemo::Impl* memo, const LevelKey& key, Level& here,
                                      Enumerate&& enumerate) {
  if (memo) {
    std::lock_guard lock(memo->mutex);
    if (const auto it = memo->levels.find(key); it != memo->levels.end()) return it->second;
  }
  thread_local std::vector<Option> options;
  options.clear();
  enumerate(options);
  make_stairs(options, here);
  if (!memo) return nullptr;
  auto made = std::make_shared<Level>();
  made->stairs.assign(here.stairs.begin(), here.stairs.end());  // no room to spare: many levels are kept
  std::lock_guard lock(memo->mutex);
  if (memo->levels.size() >= GemmMappingMemo::kMostLevels) memo->levels.clear();
  return memo->levels.emplace(key, std::move(made)).first->second;
}

}  // namespace

double GemmMapping::latency_s() const {
  return cycles / clock_hz;
}

void evaluate_mapping(const model::Gemm& gemm, const hw::TensorCoreConfig& c, const CostParams& params,
                      GemmMapping& mp) {
  const PerCore p{ceil_div(gemm.m, mp.split_m), ceil_div(gemm.n, mp.split_n), gemm.k, ceil_div(gemm.batch, mp.split_g)};
  const double used = static_cast<double>(mp.split_g * mp.split_m * mp.split_n);
  double compute = 0;
  const Option array = array_option(p, mp.dataflow, c, params, used, compute);

  const Traffic s = level_traffic(p.m, p.n, p.k, mp.sram);
  const double g = static_cast<double>(p.g);
  const double glb_reads = used * g * (s.a / mp.split_n + s.b / mp.split_m + s.c_readback);
  const double glb_writes = used * g * s.c_write;
  const double sram_fills = used * g * (s.a + s.b + s.c_readback + s.c_write);

  const Traffic h = level_traffic(gemm.m, gemm.n, gemm.k, mp.glb);
  const double hbm_words = c.on_chip ? 0.0 : static_cast<double>(gemm.batch) * (h.a + h.b + h.c_readback + h.c_write);
  const double hbm_words_per_cycle = c.hbm_bandwidth / c.clock_hz / 2.0;

  mp.compute_cycles = compute;
  mp.array_cycles = array.cycles;  // includes compute
  mp.glb_cycles = std::max(glb_reads, glb_writes) / params.glb_words_per_cycle;
  mp.hbm_cycles = hbm_words / hbm_words_per_cycle;
  mp.cycles = std::max({mp.array_cycles, mp.glb_cycles, mp.hbm_cycles});
  const double macs = static_cast<double>(gemm.macs());
  mp.energy_j = macs * (params.mac_energy + params.register_read_energy) + array.energy +
                (glb_reads + glb_writes) * params.glb_energy + sram_fills * params.sram_energy +
                hbm_words * (params.hbm_energy + params.glb_energy);
  mp.words_moved = array.words + glb_reads + glb_writes + hbm_words;
  mp.clock_hz = c.clock_hz;
}

GemmMappingMemo::GemmMappingMemo(const CostParams& params) : impl_(std::make_unique<Impl>()) {
  impl_->params = params;
}

GemmMappingMemo::~GemmMappingMemo() = default;

const CostParams& GemmMappingMemo::params() const {
  return impl_->params;
}

size_t GemmMappingMemo::levels() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->levels.size();
}

GemmMapping map_gemm(const model::Gemm& gemm, const hw::TensorCoreConfig& c, const CostParams& params,
                     GemmMappingMemo* memo) {
  GemmMapping best;
  best.clock_hz = c.clock_hz;
  if (gemm.m <= 0 || gemm.n <= 0 || gemm.k <= 0 || gemm.batch <= 0) return best;
  GemmMappingMemo::Impl* const kept = memo && memo->params() == params ? memo->impl_.get() : nullptr;
  const double macs = static_cast<double>(gemm.macs());
  const double word_bytes = 2.0 * params.double_buffering;

  // GLB level: independent of the core split.
  const double hbm_words_per_cycle = c.hbm_bandwidth / c.clock_hz / 2.0;
  Level glb_here;
  const LevelKey glb_key{0,
                         gemm.m,
                         gemm.n,
                         gemm.k,
                         gemm.batch,
                         c.glb_bytes,
                         std::bit_cast<int64_t>(c.hbm_bandwidth),
                         std::bit_cast<int64_t>(c.clock_hz),
                         0};
  const std::shared_ptr<const Level> glb_kept =
      c.on_chip ? nullptr : level_of(kept, glb_key, glb_here, [&](std::vector<Option>& out) {
        for_each_tiling(gemm.m, gemm.n, gemm.k, static_cast<double>(c.glb_bytes) / word_bytes, [&](const Tiling& t) {
          const Traffic h = level_traffic(gemm.m, gemm.n, gemm.k, t);
          const double words = static_cast<double>(gemm.batch) * (h.a + h.b + h.c_readback + h.c_write);
          out.push_back(
              Option{words / hbm_words_per_cycle, words * (params.hbm_energy + params.glb_energy), words, t, {}});
        });
      });
  // A product on chip has no GLB ↔ HBM level: one option that moves nothing.
  Level on_chip_level;
  on_chip_level.stairs.push_back(Option{0, 0, 0, Tiling{gemm.m, gemm.n, gemm.k, LoopOrder::CStationary}, {}});
  const Level& glb_level = c.on_chip ? on_chip_level : glb_kept ? *glb_kept : glb_here;
  const double hbm_floor = glb_level.fastest();

  // The core splits: batch, M and N split into divisors of the core count whose product divides it.
  struct Split {
    int64_t g, m, n;
    double cycles = kInf;                ///< the split's minimum latency; infinite when it cannot be the fastest
    double energy = kInf, words = kInf;  ///< of the cheapest options at that latency
    Dataflow dataflow;
    Tiling sram, glb;
  };
  std::vector<Split> splits;
  const std::vector<int64_t> divs = divisors(c.cores);
  for (int64_t sg : divs) {
    if (sg > gemm.batch) break;
    for (int64_t sm : divs) {
      if (sm > gemm.m || sg * sm > c.cores) break;
      if ((c.cores / sg) % sm != 0) continue;
      for (int64_t sn : divs) {
        if (sn > gemm.n || sg * sm * sn > c.cores) break;
        if ((c.cores / sg / sm) % sn != 0) continue;
        splits.push_back({sg, sm, sn, kInf, kInf, kInf, {}, {}, {}});
      }
    }
  }
  // The answer is the first split, in the order above, of least (latency, energy, words). First the least
  // latency: splits on more cores first, as they are usually the fastest, so that the bounds below skip most
  // of the others before their tilings are enumerated. A split's padded compute is at least its busiest
  // core's MACs over the array size, which is at least the GEMM's MACs spread over the cores it uses.
  std::vector<size_t> by_cores(splits.size());
  for (size_t i = 0; i < splits.size(); ++i) by_cores[i] = i;
  std::stable_sort(by_cores.begin(), by_cores.end(), [&](size_t a, size_t b) {
    return splits[a].g * splits[a].m * splits[a].n > splits[b].g * splits[b].m * splits[b].n;
  });
  const double array_size = static_cast<double>(c.width) * static_cast<double>(c.depth);
  double best_cycles = kInf;
  std::vector<Option> array_options;
  Level sram_here;
  for (size_t i : by_cores) {
    Split& s = splits[i];
    const int64_t cores_used = s.g * s.m * s.n;
    const double used = static_cast<double>(cores_used);
    if (std::max(macs / (used * array_size), hbm_floor) > best_cycles) continue;
    const PerCore p{ceil_div(gemm.m, s.m), ceil_div(gemm.n, s.n), gemm.k, ceil_div(gemm.batch, s.g)};
    array_options.clear();
    for (const Dataflow& df : kDataflows) {
      double compute = 0;
      array_options.push_back(array_option(p, df, c, params, used, compute));
    }
    const double array_floor = fastest(array_options);
    if (std::max(array_floor, hbm_floor) > best_cycles) continue;

    // The SRAM level depends on the per-core share, the split and the SRAM size only.
    const double g = static_cast<double>(p.g), sm = static_cast<double>(s.m), sn = static_cast<double>(s.n);
    const LevelKey sram_key{1, p.m, p.n, p.k, p.g, s.m, s.n, cores_used, c.sram_bytes};
    const std::shared_ptr<const Level> sram_kept = level_of(kept, sram_key, sram_here, [&](std::vector<Option>& out) {
      for_each_tiling(p.m, p.n, p.k, static_cast<double>(c.sram_bytes) / word_bytes, [&](const Tiling& t) {
        const Traffic tr = level_traffic(p.m, p.n, p.k, t);
        const double reads = used * g * (tr.a / sn + tr.b / sm + tr.c_readback), writes = used * g * tr.c_write;
        const double fills = used * g * (tr.a + tr.b + tr.c_readback + tr.c_write);
        out.push_back(Option{std::max(reads, writes) / params.glb_words_per_cycle,
                             (reads + writes) * params.glb_energy + fills * params.sram_energy,
                             reads + writes,
                             t,
                             {}});
      });
    });
    const Level& sram_level = sram_kept ? *sram_kept : sram_here;
    s.cycles = std::max({array_floor, sram_level.fastest(), hbm_floor});
    if (s.cycles > best_cycles) continue;
    best_cycles = s.cycles;
    const Option* a = cheapest_within(array_options, s.cycles);
    const Option* sr = sram_level.cheapest_within(s.cycles);
    const Option* h = glb_level.cheapest_within(s.cycles);
    s.energy = macs * (params.mac_energy + params.register_read_energy) + a->energy + sr->energy + h->energy;
    s.words = a->words + sr->words + h->words;
    s.dataflow = a->dataflow;
    s.sram = sr->tiling;
    s.glb = h->tiling;
  }

  // Then, among the splits of that latency in their order, the least energy, then the fewest words.
  double best_energy = kInf, best_words = kInf;
  for (const Split& s : splits) {
    if (s.cycles != best_cycles || !(s.energy < best_energy || (s.energy == best_energy && s.words < best_words)))
      continue;
    best_energy = s.energy;
    best_words = s.words;
    best.split_g = s.g;
    best.split_m = s.m;
    best.split_n = s.n;
    best.dataflow = s.dataflow;
    best.sram = s.sram;
    best.glb = s.glb;
  }
  evaluate_mapping(gemm, c, params, best);
  return best;
}

}  // namespace phaze::cost
