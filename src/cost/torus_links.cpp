#include "cost/torus_links.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "util/checked_int.h"

namespace phaze::cost {

namespace {

const hw::Torus& torus_of(const hw::NetworkTier& tier) {
  if (!tier.torus) throw std::logic_error("torus links on a tier that is not a torus");
  return *tier.torus;
}

/// Bytes/s of one member along an axis: a link each way on a ring, one on a line, shared by the groups
/// between its members.
double axis_bandwidth(const hw::NetworkTier& tier, const TorusAxisSpan& a) {
  return tier.effective_bandwidth() * (a.ring ? 2.0 : 1.0) / static_cast<double>(a.step);
}

/// A group that is no block of the slice (a wrap from one line into the next): a line of one link, shared by
/// the `stride` groups interleaved with it.
double fallback_bandwidth(const hw::NetworkTier& tier, DeviceGroup group) {
  return tier.effective_bandwidth() / static_cast<double>(std::max<int64_t>(group.stride, 1));
}

}  // namespace

namespace {

/// The group's span on each axis of `slice` taken in the order `axes` (the device order's x first), or nothing
/// when it is no block of it.
std::optional<std::array<TorusAxisSpan, 3>> spans_in_order(const hw::TorusDims& slice, bool wraps,
                                                           const std::array<size_t, 3>& axes, DeviceGroup group) {
  std::array<TorusAxisSpan, 3> out{};
  int64_t members = group.size, stride = group.stride;
  for (size_t k : axes) {
    if (members <= 1) break;
    const int64_t length = slice[k];
    if (stride >= length) {
      if (stride % length != 0) return std::nullopt;
      stride /= length;
      continue;
    }
    if (length % stride != 0) return std::nullopt;
    const int64_t room = length / stride;
    const int64_t extent = std::min(members, room);
    if (members % extent != 0) return std::nullopt;
    out[k] = TorusAxisSpan{extent, stride, wraps && extent == room};
    members /= extent;
    stride = 1;
  }
  if (members != 1) return std::nullopt;
  return out;
}

/// Seconds of the reduce-scatter of `bytes` over a group with these spans, without latency.
double spans_reduce_scatter_s(const hw::NetworkTier& tier, const std::array<TorusAxisSpan, 3>& spans, double bytes) {
  std::array<size_t, 3> axes{};
  size_t d = 0;  // the axes the group spans
  for (size_t k = 0; k < 3; ++k)
    if (spans[k].extent > 1) axes[d++] = k;
  // Each part of bytes / D goes round the spanned axes in its own rotation; the parts run at once, so each
  // axis carries what every part sends along it.
  std::array<double, 3> load{};
  for (size_t first = 0; first < d; ++first) {
    double part = bytes / static_cast<double>(d);
    for (size_t i = 0; i < d; ++i) {
      const size_t k = axes[(first + i) % d];
      const double e = static_cast<double>(spans[k].extent);
      load[k] += (e - 1) / e * part;
      part /= e;
    }
  }
  double seconds = 0;
  for (size_t i = 0; i < d; ++i) seconds = std::max(seconds, load[axes[i]] / axis_bandwidth(tier, spans[axes[i]]));
  return seconds;
}

double ring_steps(const std::array<TorusAxisSpan, 3>& spans) {
  double steps = 0;
  for (const TorusAxisSpan& a : spans) steps += static_cast<double>(a.extent - 1);
  return steps;
}

}  // namespace

std::optional<std::array<TorusAxisSpan, 3>> torus_spans(const hw::NetworkTier& tier, DeviceGroup group) {
  const hw::Torus& torus = torus_of(tier);
  const int64_t span = CheckedInt(group.size - 1) * group.stride + 1;
  const hw::TorusDims slice = hw::torus_slice_for(torus, span);
  const bool wraps = hw::torus_wraps(torus, slice);
  // The devices are assigned to the slice in whichever order of its axes suits the group best (as a mesh
  // is laid on a TPU slice): the fastest reduce-scatter, the first such order on a tie.
  std::array<size_t, 3> axes{0, 1, 2};
  std::optional<std::array<TorusAxisSpan, 3>> best;
  double best_s = 0;
  do {
    const auto spans = spans_in_order(slice, wraps, axes, group);
    if (!spans) continue;
    const double s = spans_reduce_scatter_s(tier, *spans, 1.0);
    if (!best || s < best_s) {
      best = spans;
      best_s = s;
    }
  } while (std::next_permutation(axes.begin(), axes.end()));
  return best;
}

double torus_reduce_scatter_s(const hw::NetworkTier& tier, DeviceGroup group, double bytes) {
  if (group.size <= 1 || bytes <= 0) return 0;
  const auto spans = torus_spans(tier, group);
  const double n = static_cast<double>(group.size);
  if (!spans) return (n - 1) / n * bytes / fallback_bandwidth(tier, group) + (n - 1) * tier.latency_s;
  return spans_reduce_scatter_s(tier, *spans, bytes) + ring_steps(*spans) * tier.latency_s;
}

GroupLink torus_group_link(const hw::NetworkTier& tier, DeviceGroup group) {
  if (group.size <= 1) return GroupLink{tier.effective_bandwidth() * 2, tier.latency_s};
  const double n = static_cast<double>(group.size);
  const auto spans = torus_spans(tier, group);
  // The time of one byte without latency gives the bandwidth; the latency spreads over the ring's n − 1 steps.
  if (!spans) return GroupLink{fallback_bandwidth(tier, group), tier.latency_s};
  return GroupLink{(n - 1) / n / spans_reduce_scatter_s(tier, *spans, 1.0),
                   ring_steps(*spans) * tier.latency_s / (n - 1)};
}

double torus_all_to_all_s(const hw::NetworkTier& tier, DeviceGroup group, double bytes) {
  if (group.size <= 1 || bytes <= 0) return 0;
  const auto spans = torus_spans(tier, group);
  const double n = static_cast<double>(group.size);
  if (!spans) return bytes * n / 4 / fallback_bandwidth(tier, group) + tier.latency_s;
  double seconds = 0, hops = 0;
  for (const TorusAxisSpan& a : *spans) {
    if (a.extent <= 1) continue;
    const double e = static_cast<double>(a.extent);
    // A member sends bytes / e to each position of the axis (every member there); the busiest link carries
    // (e/2)² position pairs' worth one way on a line, half that spread both ways round a ring.
    const double busiest = a.ring ? bytes * e / 8 : bytes * e / 4;
    seconds = std::max(seconds, busiest / (tier.effective_bandwidth() / static_cast<double>(a.step)));
    hops += (a.ring ? e / 2 : e - 1) * static_cast<double>(a.step);
  }
  return seconds + hops * tier.latency_s;
}

GroupLink torus_send_link(const hw::NetworkTier& tier, int64_t distance) {
  const hw::Torus& torus = torus_of(tier);
  const hw::TorusDims slice = hw::torus_slice_for(torus, CheckedInt(std::max<int64_t>(distance, 1)) + 1);
  const bool wraps = hw::torus_wraps(torus, slice);
  // The devices laid on the slice's axes in the order that suits the transfer best, as for a group
  // (torus_spans): the fewest transfers sharing a link, then the fewest hops.
  std::array<size_t, 3> axes{0, 1, 2};
  int64_t best_sharing = 0, best_hops = 0;
  do {
    int64_t rest = std::max<int64_t>(distance, 1), sharing = 1, hops = 0;
    for (size_t k : axes) {
      const int64_t d = rest % slice[k];
      rest /= slice[k];
      const int64_t shift = wraps ? std::min(d, slice[k] - d) : d;
      sharing = std::max(sharing, shift);
      hops += shift;
    }
    if (best_sharing == 0 || sharing < best_sharing || (sharing == best_sharing && hops < best_hops)) {
      best_sharing = sharing;
      best_hops = hops;
    }
  } while (std::next_permutation(axes.begin(), axes.end()));
  return GroupLink{tier.effective_bandwidth() / static_cast<double>(best_sharing),
                   static_cast<double>(std::max<int64_t>(best_hops, 1)) * tier.latency_s};
}

}  // namespace phaze::cost
