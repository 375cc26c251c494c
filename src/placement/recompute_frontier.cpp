#include "placement/recompute_frontier.h"

#include <algorithm>

namespace phaze::placement {

void RecomputeFrontier::start(bool allowed, bool track) {
  allowed_ = allowed;
  track_ = track;
  kept_.assign(1, RecomputeOption{});
  recomputed_.clear();
  all_ = kept_;
}

void RecomputeFrontier::prune(std::vector<RecomputeOption>& options) {
  std::stable_sort(options.begin(), options.end(), [](const RecomputeOption& a, const RecomputeOption& b) {
    return a.reforward_s < b.reforward_s || (a.reforward_s == b.reforward_s && a.stash_bytes < b.stash_bytes);
  });
  size_t kept = 0;
  for (size_t k = 0; k < options.size(); ++k)
    if (kept == 0 || options[k].stash_bytes < options[kept - 1].stash_bytes) {
      if (kept != k) options[kept] = std::move(options[k]);
      ++kept;
    }
  options.resize(kept);
}

void RecomputeFrontier::add(int position, double forward_s, double activation_bytes, double input_bytes) {
  // Keeping the layer stashes its activations whatever came before.
  next_kept_.clear();
  for (const auto* from : {&kept_, &recomputed_})
    for (const RecomputeOption& o : *from) {
      RecomputeOption& n = next_kept_.emplace_back(o);
      n.stash_bytes = o.stash_bytes + activation_bytes;
    }
  prune(next_kept_);

  // Recomputing it re-runs its forward pass; it starts a run (a new checkpoint: its input) unless the layer
  // before it in the stage is recomputed too. The stage's first layer always starts a run.
  next_recomputed_.clear();
  if (allowed_) {
    for (const RecomputeOption& o : recomputed_) {
      RecomputeOption& n = next_recomputed_.emplace_back(o);
      n.reforward_s = o.reforward_s + forward_s;
    }
    for (const RecomputeOption& o : kept_) {
      RecomputeOption& n = next_recomputed_.emplace_back(o);
      n.reforward_s = o.reforward_s + forward_s;
      n.stash_bytes = o.stash_bytes + input_bytes;
    }
    if (track_)
      for (RecomputeOption& n : next_recomputed_) n.layers.push_back(position);
    prune(next_recomputed_);
  }
  kept_.swap(next_kept_);
  recomputed_.swap(next_recomputed_);

  all_ = kept_;
  all_.insert(all_.end(), recomputed_.begin(), recomputed_.end());
  prune(all_);
}

}  // namespace phaze::placement
