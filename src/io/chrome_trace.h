#pragma once

// Timelines as Chrome trace-event JSON, the format Perfetto (ui.perfetto.dev) and chrome://tracing open:
// one process per timeline, one thread (track) per core, pipeline stage or link, and one complete event
// ("ph": "X") per operator or pass, in microseconds from the start of the timeline. Metadata events name
// the processes and tracks and keep the tracks in the order given.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace phaze::io {

struct TraceEvent {
  std::string name;      ///< what runs: an operator, "forward 3", "data-parallel sync", ...
  std::string category;  ///< its kind: "tensor", "vector", "compute", "communication", "optimizer", ...
  size_t track = 0;      ///< index into Timeline::tracks
  double start_s = 0;    ///< seconds from the start of the timeline
  double duration_s = 0;
  nlohmann::ordered_json args = nlohmann::ordered_json::object();  ///< shown beside the event
};

struct Timeline {
  std::string name;                 ///< the process's name
  std::vector<std::string> tracks;  ///< in display order
  std::vector<TraceEvent> events;
};

/// The trace-event JSON of `timelines`, process i + 1 for timelines[i].
nlohmann::ordered_json chrome_trace_json(const std::vector<Timeline>& timelines);
/// Writes chrome_trace_json(timelines) to `path` (util/output_file.h's errors).
void write_chrome_trace(const std::string& path, const std::vector<Timeline>& timelines);

}  // namespace phaze::io
