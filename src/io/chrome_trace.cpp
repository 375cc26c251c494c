#include "io/chrome_trace.h"

#include "util/output_file.h"

namespace phaze::io {

using nlohmann::ordered_json;

ordered_json chrome_trace_json(const std::vector<Timeline>& timelines) {
  constexpr double kMicroseconds = 1e6;
  ordered_json events = ordered_json::array();
  for (size_t p = 0; p < timelines.size(); ++p) {
    const Timeline& t = timelines[p];
    const size_t pid = p + 1;
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", t.name}}}});
    events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"args", {{"sort_index", pid}}}});
    for (size_t k = 0; k < t.tracks.size(); ++k) {
      events.push_back(
          {{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", k + 1}, {"args", {{"name", t.tracks[k]}}}});
      events.push_back({{"name", "thread_sort_index"},
                        {"ph", "M"},
                        {"pid", pid},
                        {"tid", k + 1},
                        {"args", {{"sort_index", k + 1}}}});
    }
    for (const TraceEvent& e : t.events) {
      ordered_json event{{"name", e.name},
                         {"cat", e.category},
                         {"ph", "X"},
                         {"pid", pid},
                         {"tid", e.track + 1},
                         {"ts", e.start_s * kMicroseconds},
                         {"dur", e.duration_s * kMicroseconds}};
      if (!e.args.empty()) event["args"] = e.args;
      events.push_back(std::move(event));
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

void write_chrome_trace(const std::string& path, const std::vector<Timeline>& timelines) {
  write_text_file(path, chrome_trace_json(timelines).dump(1) + "\n");
}

}  // namespace phaze::io
