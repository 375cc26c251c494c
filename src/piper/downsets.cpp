#include "piper/downsets.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "util/input_error.h"

namespace phaze::piper {

namespace {

using Bits = std::vector<uint64_t>;

bool has(const Bits& b, int v) {
  return (b[static_cast<size_t>(v) / 64] >> (static_cast<size_t>(v) % 64)) & 1;
}
void set(Bits& b, int v, bool on) {
  const uint64_t bit = uint64_t{1} << (static_cast<size_t>(v) % 64);
  if (on) {
    b[static_cast<size_t>(v) / 64] |= bit;
  } else {
    b[static_cast<size_t>(v) / 64] &= ~bit;
  }
}

/// The walk over a graph's downsets, with its budget of node visits: bounded so that a wide graph is refused
/// quickly rather than enumerated for hours.
class DownsetWalk {
 public:
  explicit DownsetWalk(const Problem& problem) : problem_(problem), n_(static_cast<int>(problem.nodes.size())) {}

  /// Every downset, breadth first from ∅ by size: each level's downsets grow by one node.
  std::vector<Bits> all() {
    const size_t words = (static_cast<size_t>(n_) + 63) / 64;
    std::vector<Bits> level{Bits(words, 0)}, all{level};
    while (!level.empty()) {
      std::map<Bits, int> next;
      for (const Bits& b : level) {
        count_work();
        for (int v = 0; v < n_; ++v)
          if (!has(b, v) && successors_in(b, v)) {
            Bits grown = b;
            set(grown, v, true);
            next.emplace(std::move(grown), 0);
          }
      }
      level.clear();
      for (auto& [b, unused] : next) level.push_back(b);
      all.insert(all.end(), level.begin(), level.end());
      if (static_cast<int64_t>(all.size()) > piper_limits::kDownsets)
        throw InputError(
            fmt::format("the graph has more than {} downsets (cuts into an earlier and a later part): too "
                        "wide to plan exhaustively",
                        piper_limits::kDownsets));
    }
    return all;
  }

  /// The removals of downset `d` of `sets` (Downsets::removals).
  std::vector<std::pair<int, int>> removals(const std::vector<Bits>& sets, const std::map<Bits, int>& index, size_t d) {
    std::vector<std::pair<int, int>> out;
    const Bits& b = sets[d];
    count_work();
    Bits smaller = b;
    for (int v = 0; v < n_; ++v)
      if (has(b, v) && predecessors_out(b, v)) {
        set(smaller, v, false);
        out.emplace_back(v, index.at(smaller));
        set(smaller, v, true);
      }
    return out;
  }

  /// The downsets below downset `d`: its removals, closed transitively; sorted. `seen` holds a stamp per
  /// downset, `stamp` one not used before.
  std::vector<int> below(const std::vector<std::vector<std::pair<int, int>>>& removals, size_t d,
                         std::vector<int64_t>& seen, int64_t stamp) {
    std::vector<int> out, stack{static_cast<int>(d)};
    while (!stack.empty()) {
      const int top = stack.back();
      stack.pop_back();
      for (const auto& [v, k] : removals[static_cast<size_t>(top)]) {
        if (seen[static_cast<size_t>(k)] == stamp) continue;
        seen[static_cast<size_t>(k)] = stamp;
        out.push_back(k);
        stack.push_back(k);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  // A node may join a downset once all its successors are in it; it may leave one (keeping it a downset)
  // when none of its predecessors is in it.
  bool successors_in(const Bits& b, int v) const {
    for (int e : problem_.nodes[static_cast<size_t>(v)].out_edges)
      if (!has(b, problem_.edges[static_cast<size_t>(e)].to)) return false;
    return true;
  }
  bool predecessors_out(const Bits& b, int v) const {
    for (int e : problem_.nodes[static_cast<size_t>(v)].in_edges)
      if (has(b, problem_.edges[static_cast<size_t>(e)].from)) return false;
    return true;
  }
  void count_work() {
    work_ += n_;
    if (work_ > piper_limits::kDownsetWork)
      throw InputError(
          fmt::format("enumerating the graph's downsets takes more than {} node visits: too wide to plan "
                      "exhaustively",
                      piper_limits::kDownsetWork));
  }

  const Problem& problem_;
  int n_;
  int64_t work_ = 0;  // node visits so far
};

}  // namespace

Downsets enumerate_downsets(const Problem& problem) {
  DownsetWalk walk(problem);
  Downsets out;
  out.sets = walk.all();
  std::map<Bits, int> index;
  for (size_t i = 0; i < out.sets.size(); ++i) {
    index.emplace(out.sets[i], static_cast<int>(i));
    int size = 0;
    for (uint64_t w : out.sets[i]) size += __builtin_popcountll(w);
    out.sizes.push_back(size);
  }
  out.full = static_cast<int>(out.sets.size()) - 1;
  out.removals.resize(out.sets.size());
  for (size_t d = 0; d < out.sets.size(); ++d) out.removals[d] = walk.removals(out.sets, index, d);
  out.below.resize(out.sets.size());
  std::vector<int64_t> seen(out.sets.size(), -1);
  for (size_t d = 0; d < out.sets.size(); ++d) {
    out.below[d] = walk.below(out.removals, d, seen, static_cast<int64_t>(d));
    out.pairs += static_cast<int64_t>(out.below[d].size());
    for (int k : out.below[d]) out.stage_node_count += out.sizes[d] - out.sizes[static_cast<size_t>(k)];
    if (out.stage_node_count > piper_limits::kStageNodes)
      throw InputError(
          fmt::format("the graph's candidate stages hold more than {} nodes in all: too large to plan "
                      "exhaustively",
                      piper_limits::kStageNodes));
    if (out.pairs > piper_limits::kStagePairs)
      throw InputError(
          fmt::format("the graph has more than {} pairs of nested downsets (candidate stages): too wide "
                      "to plan exhaustively",
                      piper_limits::kStagePairs));
  }
  return out;
}

std::vector<int> stage_nodes(const Downsets& downsets, int outer, int inner) {
  std::vector<int> out;
  const auto& a = downsets.sets[static_cast<size_t>(outer)];
  const auto& b = downsets.sets[static_cast<size_t>(inner)];
  for (size_t w = 0; w < a.size(); ++w) {
    uint64_t bits = a[w] & ~b[w];
    while (bits) {
      out.push_back(static_cast<int>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits))));
      bits &= bits - 1;
    }
  }
  return out;
}

}  // namespace phaze::piper
