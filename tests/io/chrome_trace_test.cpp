// Chrome trace-event JSON as the format's documentation defines it (the "Trace Event Format" of the
// Chromium project): complete events "ph": "X" with "ts" and "dur" in microseconds, metadata events
// "ph": "M" naming processes ("process_name") and threads ("thread_name").

#include "io/chrome_trace.h"

#include <gtest/gtest.h>

namespace {

using phaze::io::Timeline;

TEST(ChromeTrace, CompleteEventsInMicrosecondsOnNamedTracks) {
  Timeline a;
  a.name = "layer";
  a.tracks = {"TC0", "VC0"};
  a.events.push_back({"F1", "tensor", 1, 0.5, 0.25, {{"cores", "VC0"}}});
  Timeline b;
  b.name = "pipeline";
  b.tracks = {"stage 1"};
  b.events.push_back({"forward 1", "compute", 0, 2e-6, 3e-6, {}});
  const auto j = phaze::io::chrome_trace_json({a, b});
  EXPECT_EQ(j["displayTimeUnit"], "ms");
  int process_names = 0, thread_names = 0, complete = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") {
      ++process_names;
      EXPECT_EQ(e["args"]["name"], e["pid"] == 1 ? "layer" : "pipeline");
    }
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      ++thread_names;
      if (e["pid"] == 1) {
        EXPECT_EQ(e["args"]["name"], e["tid"] == 1 ? "TC0" : "VC0");
      }
    }
    if (e["ph"] != "X") continue;
    ++complete;
    if (e["pid"] == 1) {
      EXPECT_EQ(e["tid"], 2);  // track 1 is thread 2: thread ids start at 1
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 500000);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 250000);
      EXPECT_EQ(e["args"]["cores"], "VC0");
    } else {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 2);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 3);
      EXPECT_FALSE(e.contains("args"));
    }
  }
  EXPECT_EQ(process_names, 2);
  EXPECT_EQ(thread_names, 3);
  EXPECT_EQ(complete, 2);
}

}  // namespace
