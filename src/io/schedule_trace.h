#pragma once

// A layer pass's schedule as a timeline (io/chrome_trace.h) and as rows of a Gantt chart: one track per tensor
// core, vector core and the link, one event per operator on each core it occupies (a parallel operator on
// every core of its kind). `phaze schedule --trace` writes it; a search's report draws its best point's layer.

#include <cstddef>
#include <string>
#include <vector>

#include "io/chrome_trace.h"
#include "schedule/problem.h"

namespace phaze::io {

/// One Gantt row: a lane (a core or the link) and which tasks occupy it, by index.
struct ScheduleLane {
  std::string label;
  std::vector<size_t> tasks;
};

/// The lanes of `schedule`: tensor cores, vector cores, then the link when a collective uses it.
std::vector<ScheduleLane> schedule_lanes(const schedule::Problem& problem, const schedule::Schedule& schedule);

/// The cores task `i` occupies: "TC3", "VC0-7", "TC1 VC1", "link", "-".
std::string cores_text(const schedule::Problem& problem, size_t i, const schedule::TaskSlot& slot);

/// The schedule as a timeline named `title`.
Timeline schedule_timeline(const std::string& title, const schedule::Problem& problem,
                           const schedule::Schedule& schedule);

}  // namespace phaze::io
