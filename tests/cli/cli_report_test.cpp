// `phaze report`: one self-contained page per answer (no external resource, the answer carried intact, the
// chart library inside), bad input refused with status 2; and the page opened as a person would, in headless
// Chromium without network: every chart drawn (its canvas painted) and no script error.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/file_text.h"
#include "support/run_phaze.h"
#include "support/temp_dir.h"

namespace {

using nlohmann::json;
using phaze_test::file_text;
using phaze_test::quoted;
using phaze_test::run_phaze;
using phaze_test::TempDir;

const std::string kTinyModel = std::string(PHAZE_TEST_DATA) + "/hf/tiny-gpt2/config.json";

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// The answer the page carries.
json carried_answer(const std::string& page) {
  const std::string open = "<script id=\"phaze-answer\"";
  const size_t start = page.find('>', page.find(open)) + 1;
  return json::parse(page.substr(start, page.find("</script>", start) - start));
}

/// The three answers a report draws, written by the commands: a search with its Pareto frontier and trace,
/// a prediction, a plan.
struct Answers {
  TempDir dir;
  std::string search, search_trace, predict, plan;
  Answers() {
    search = dir.file("search.json");
    search_trace = dir.file("search-trace.json");
    predict = dir.file("predict.json");
    plan = dir.file("plan.json");
    const auto s = run_phaze("search --model " + quoted(kTinyModel) +
                             " --tc 1,2 --vc 1,2 --width 8,16 --depth 8 --glb-mib 2 --lower-fraction 0 --pareto " +
                             dir.file("p.csv") + " -o " + search + " --trace " + search_trace);
    EXPECT_EQ(s.status, 0) << s.err;
    const auto p =
        run_phaze("predict --model llama2-7b --system dgx-h100 --tp 2 --dp 4 --global-batch 64 --json > " + predict);
    EXPECT_EQ(p.status, 0) << p.err;
    const auto l =
        run_phaze("plan --model llama2-7b --system dgx-h100 --gpus 8 --global-batch 64 --top 3 --json > " + plan);
    EXPECT_EQ(l.status, 0) << l.err;
  }
};

TEST(Report, APageCarriesItsAnswerAndNeedsNothingOutsideIt) {
  Answers a;
  for (const std::string& answer : {a.search, a.predict, a.plan}) {
    SCOPED_TRACE(answer);
    const std::string page_path = a.dir.file("page.html");
    const auto r = run_phaze("report " + answer + " -o " + page_path + " --trace " + a.search_trace);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string page = file_text(page_path);
    EXPECT_EQ(carried_answer(page), json::parse(file_text(answer)));
    // Nothing fetched: no external script, style sheet, image or import.
    EXPECT_FALSE(std::regex_search(page, std::regex(R"(<script[^>]*\bsrc=|<link\b|<img\b|@import|url\()")));
    EXPECT_NE(page.find("Chart.js v"), std::string::npos);  // the library itself is inside
    EXPECT_EQ(count(page, "<script"), count(page, "</script>"));
  }
}

TEST(Report, TextThatWouldEndAScriptStaysInsideIt) {
  TempDir dir;
  Answers a;
  json predict = json::parse(file_text(a.predict));
  predict["model"] = "</script><script>alert(1)</script>";
  std::ofstream(dir.file("odd.json")) << predict.dump();
  const auto r = run_phaze("report " + dir.file("odd.json") + " -o " + dir.file("odd.html"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string page = file_text(dir.file("odd.html"));
  EXPECT_EQ(carried_answer(page)["model"], predict["model"]);
  EXPECT_EQ(count(page, "<script"), count(page, "</script>"));
}

TEST(Report, BadInputIsRefusedNamingTheFile) {
  TempDir dir;
  std::ofstream(dir.file("other.json")) << R"({"a": 1})";
  auto r = run_phaze("report " + dir.file("other.json") + " -o " + dir.file("x.html"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("other.json: not an answer of phaze search, predict or plan"), std::string::npos) << r.err;
  std::ofstream(dir.file("bad.json")) << "{";
  r = run_phaze("report " + dir.file("bad.json") + " -o " + dir.file("x.html"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("bad.json"), std::string::npos) << r.err;
  Answers a;
  r = run_phaze("report " + a.predict + " -o " + dir.file("x.html") + " --trace " + a.predict);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no traceEvents"), std::string::npos) << r.err;
}

TEST(Report, SearchPredictAndPlanWriteTheirPageWithTheirTimeline) {
  TempDir dir;
  const std::vector<std::string> commands{
      "search --model " + quoted(kTinyModel) + " --tc 1 --vc 1,2 --width 8 --depth 8 --glb-mib 2",
      "predict --model llama2-7b --system dgx-h100 --tp 2 --pp 2 --dp 2 --global-batch 64",
      "plan --model llama2-7b --system dgx-h100 --gpus 8 --global-batch 64 --top 2"};
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    const auto r = run_phaze(command + " --json --report " + dir.file("page.html"));
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string page = file_text(dir.file("page.html"));
    EXPECT_EQ(carried_answer(page), json::parse(r.out));
    const std::string open = "<script id=\"phaze-traces\"";
    const size_t start = page.find('>', page.find(open)) + 1;
    const json traces = json::parse(page.substr(start, page.find("</script>", start) - start));
    const json answer = json::parse(r.out);
    if (!answer.contains("search")) {
      ASSERT_EQ(traces.size(), 1u);
      EXPECT_FALSE(traces[0]["traceEvents"].empty());
      continue;
    }
    // A search: its pipelines, then its transformer layer's forward and backward pass on the best design,
    // each ending at the layer's latency in the answer.
    ASSERT_EQ(traces.size(), 3u);
    const json& layer = answer["best"]["models"][0]["layer_schedules"]["transformer"];
    for (const auto& [index, pass] : {std::pair(1, "forward_s"), std::pair(2, "backward_s")}) {
      double end_us = 0;
      for (const json& e : traces[index]["traceEvents"])
        if (e["ph"] == "X") end_us = std::max(end_us, e["ts"].get<double>() + e["dur"].get<double>());
      EXPECT_NEAR(end_us * 1e-6, layer[pass].get<double>(), 1e-9 * layer[pass].get<double>()) << pass;
    }
  }
}

/// The <body> tag of the page after Chromium ran its scripts (headless, no network, a virtual time budget).
std::string rendered_body(const std::string& page_path, const std::string& dir) {
  const std::string out = dir + "/dom.html";
  const std::string command = fmt::format(
      "timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-extensions "
      "--proxy-server=127.0.0.1:9 --user-data-dir={} --virtual-time-budget=15000 --dump-dom "
      "'file://{}' > {} 2>/dev/null",
      dir + "/profile", page_path, out);
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::smatch m;
  const std::string dom = file_text(out);
  return std::regex_search(dom, m, std::regex("<body[^>]*>")) ? m.str() : "";
}

TEST(ReportInBrowser, EveryChartIsDrawnWithoutAScriptError) {
  if (std::system("command -v chromium > /dev/null 2>&1") != 0) GTEST_SKIP() << "no chromium";
  Answers a;
  struct Case {
    std::string answer, traces;
    int charts;
  };
  // Search: design space, per model, time per batch, memory per stage, and one timeline per trace; predict:
  // breakdown and memory; plan: the same over its plans.
  for (const Case& c : {Case{a.search, " --trace " + a.search_trace, 5}, Case{a.predict, "", 2}, Case{a.plan, "", 2}}) {
    SCOPED_TRACE(c.answer);
    const std::string page = a.dir.file("page.html");
    ASSERT_EQ(run_phaze("report " + c.answer + " -o " + page + c.traces).status, 0);
    const std::string body = rendered_body(page, a.dir.path().string());
    EXPECT_NE(body.find(fmt::format("data-charts=\"{}\"", c.charts)), std::string::npos) << body;
    EXPECT_NE(body.find("data-blank=\"0\""), std::string::npos) << body;
    EXPECT_EQ(body.find("data-errors"), std::string::npos) << body;
  }
}

}  // namespace
