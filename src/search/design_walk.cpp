#include "search/design_walk.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "util/run_on_threads.h"

namespace phaze::search {

std::vector<std::vector<size_t>> work_units(const std::vector<hw::Design>& designs, const BucketOrder& order,
                                            bool exact) {
  std::vector<std::vector<size_t>> units;
  if (!exact) {
    for (size_t p = 0; p < order.designs.size(); ++p) units.push_back({p});
    return units;
  }
  std::vector<size_t> positions(order.designs.size());
  std::iota(positions.begin(), positions.end(), size_t{0});
  auto group = [&](size_t p) {
    const hw::Architecture& a = designs[order.designs[p]].arch;
    return std::tuple(a.tc_width, a.tc_depth, a.num_tc);
  };
  auto inside = [&](size_t p) {
    const hw::Architecture& a = designs[order.designs[p]].arch;
    return std::tuple(a.num_vc, a.vc_width, a.glb_bytes);
  };
  std::stable_sort(positions.begin(), positions.end(),
                   [&](size_t a, size_t b) { return std::pair(group(a), inside(a)) < std::pair(group(b), inside(b)); });
  for (size_t k = 0; k < positions.size(); ++k) {
    if (k == 0 || group(positions[k]) != group(positions[k - 1])) units.emplace_back();
    units.back().push_back(positions[k]);
  }
  std::reverse(units.begin(), units.end());  // the largest tensor cores first (work_units)
  return units;
}

int64_t Walk::finish_design(size_t position) {
  ++finished_designs[order.bucket_of(position)];
  const ScoreOf score = [&](size_t p, size_t c) {
    const Slot& s = slot(p, c);
    if (!s.known) throw std::logic_error("search: a bucket finished before all its points were known");
    return s.score;
  };
  int64_t finished = 0;
  while (frontier < order.buckets() && any_running() &&
         finished_designs[frontier] == order.start[frontier + 1] - order.start[frontier]) {
    const auto designs = static_cast<int64_t>(finished_designs[frontier]);
    for (size_t c = 0; c < combinations; ++c)
      if (running(states[c], order))
        finish_bucket(states[c], bucket_maximum(order, frontier, c, score), designs, window);
    ++frontier;
    ++finished;
  }
  return finished;
}

void Walk::fail(std::exception_ptr e) {
  std::lock_guard lock(mutex);
  if (!failure) failure = std::move(e);
  changed.notify_all();
}

void run_walk(Walk& walk, int threads, const std::function<void()>& work) {
  run_on_threads(threads, [&] {
    try {
      work();
    } catch (...) {
      walk.fail(std::current_exception());
    }
  });
  if (walk.failure) std::rethrow_exception(walk.failure);
}

}  // namespace phaze::search
