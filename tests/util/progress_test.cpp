// Progress line: durations, rates and whole lines checked against hand-computed text, fitting any width,
// throttled redraws on an injected clock, silence when the output is not a terminal, and many threads
// advancing at once.

#include "util/progress.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using phaze::format_duration;
using phaze::format_rate;
using phaze::Progress;
using phaze::ProgressOutput;
using phaze::render_progress;

/// Columns of UTF-8 text (code points); -1 when it is not valid UTF-8 (a sequence cut short, say).
int utf8_columns(const std::string& text) {
  int columns = 0;
  for (size_t i = 0; i < text.size(); ++columns) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t length = lead < 0x80           ? 1
                          : (lead >> 5) == 0x6  ? 2
                          : (lead >> 4) == 0xe  ? 3
                          : (lead >> 3) == 0x1e ? 4
                                                : 0;
    if (length == 0 || i + length > text.size()) return -1;
    for (size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return -1;
    }
    i += length;
  }
  return columns;
}

TEST(Progress, FormatDuration) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(0.49), "0s");
  EXPECT_EQ(format_duration(0.5), "1s");
  EXPECT_EQ(format_duration(59.4), "59s");
  EXPECT_EQ(format_duration(59.5), "1m00s");
  EXPECT_EQ(format_duration(65), "1m05s");
  EXPECT_EQ(format_duration(3599), "59m59s");
  EXPECT_EQ(format_duration(3600), "1h00m");
  EXPECT_EQ(format_duration(7380), "2h03m");     // 2·3600 + 3·60
  EXPECT_EQ(format_duration(86399), "23h59m");   // minutes are cut, not rounded
  EXPECT_EQ(format_duration(90000), "1d01h");    // 86400 + 3600
  EXPECT_EQ(format_duration(1e9), "11574d01h");  // 11574·86400 = 999993600, 6400 s left = 1 h 46 min
  EXPECT_EQ(format_duration(-1), "--");
  EXPECT_EQ(format_duration(NAN), "--");
  EXPECT_EQ(format_duration(HUGE_VAL), "--");
}

TEST(Progress, FormatRate) {
  EXPECT_EQ(format_rate(0), "0.00");
  EXPECT_EQ(format_rate(3.254), "3.25");
  EXPECT_EQ(format_rate(42.46), "42.5");
  EXPECT_EQ(format_rate(1234.4), "1234");
  EXPECT_EQ(format_rate(2500000), "2500000");
  EXPECT_EQ(format_rate(-1), "--");
  EXPECT_EQ(format_rate(NAN), "--");
}

TEST(Progress, RenderHandComputedLines) {
  // 250 of 1000 in 10 s: 25 points/s, 750 left take 30 s, 5 of 20 cells.
  EXPECT_EQ(render_progress(250, 1000, 10.0, "", 80), "[#####...............] 250/1000 25.0%  25.0 points/s  ETA 30s");
  // 13 of 200 in 1 s: 6.5 %, 187 / 13 = 14.4 s, 13·20/200 = 1.3 cells.
  EXPECT_EQ(render_progress(13, 200, 1.0, "", 100), "[#...................] 13/200 6.5%  13.0 points/s  ETA 14s");
  // 1 of 66: 1.51 % cut to 1.5 %, 65 s left.
  EXPECT_EQ(render_progress(1, 66, 1.0, "", 80), "[....................] 1/66 1.5%  1.00 points/s  ETA 1m05s");
  // 29999 of 30000 in an hour: 99.99 % cut to 99.9 %, 19.99 cells cut to 19, 1 / 8.33 s left.
  EXPECT_EQ(render_progress(29999, 30000, 3600.0, "", 100),
            "[###################.] 29999/30000 99.9%  8.33 points/s  ETA 0s");
  // 100 of 30000 in 6 min: 0.278 points/s, 29900 / 0.2778 = 107640 s = 1 d 5.9 h.
  EXPECT_EQ(render_progress(100, 30000, 360.0, "", 100),
            "[....................] 100/30000 0.3%  0.28 points/s  ETA 1d05h");
  // Done: the time taken instead of an ETA; 1000 / 65 = 15.38 points/s.
  EXPECT_EQ(render_progress(1000, 1000, 65.0, "x", 80),
            "[####################] 1000/1000 100.0%  15.4 points/s  took 1m05s  best: x");
  // Nothing measured yet: no rate, no ETA.
  EXPECT_EQ(render_progress(0, 10, 0.0, "", 80), "[....................] 0/10 0.0%  -- points/s  ETA --");
  EXPECT_EQ(render_progress(0, 10, 5.0, "", 80), "[....................] 0/10 0.0%  0.00 points/s  ETA --");
  // Nothing to do.
  EXPECT_EQ(render_progress(0, 0, 2.0, "", 80), "[####################] 0/0 100.0%  0.00 points/s  took 2s");
  // Another unit, and a total that is only a bound: 40 of 13506 buckets in 8 s, 5 buckets/s, 13466 / 5 s left
  // at most = 44 min 53 s; 40·20/13506 = 0.06 cells.
  EXPECT_EQ(render_progress(40, 13506, 8.0, "", 100, "buckets", true),
            "[....................] 40/13506 0.2%  5.00 buckets/s  ETA ≤ 44m53s");
  EXPECT_EQ(render_progress(40, 40, 8.0, "", 100, "buckets", true),
            "[####################] 40/40 100.0%  5.00 buckets/s  took 8s");
}

TEST(Progress, RenderFitsTheWidth) {
  const std::string line = "[#####...............] 250/1000 25.0%  25.0 points/s  ETA 30s";  // 61 columns
  const std::string best = "Design A: 8 TC 128x128";                                         // 22 columns
  // 61 + 8 ("  best: ") + 22 = 91 columns fit in 92 (the last column stays free).
  EXPECT_EQ(render_progress(250, 1000, 10.0, best, 92), line + "  best: " + best);
  EXPECT_EQ(render_progress(250, 1000, 10.0, best, 200), line + "  best: " + best);
  // One column short: 21 columns for the text, 18 of it and "...".
  EXPECT_EQ(render_progress(250, 1000, 10.0, best, 91), line + "  best: Design A: 8 TC 128...");
  EXPECT_EQ(render_progress(250, 1000, 10.0, best, 74), line + "  best: D...");
  EXPECT_EQ(render_progress(250, 1000, 10.0, best, 73), line);  // no room for even one character
  // The bar shrinks: 49 columns = "[" 8 cells "] " and 38 of figures; 250·8/1000 = 2 cells filled.
  EXPECT_EQ(render_progress(250, 1000, 10.0, best, 50), "[##......] 250/1000 25.0%  25.0 points/s  ETA 30s");
  EXPECT_EQ(render_progress(250, 1000, 10.0, best, 47), "[#....] 250/1000 25.0%  25.0 points/s  ETA 30s");
  // Fewer than five cells: no bar at all.
  EXPECT_EQ(render_progress(250, 1000, 10.0, best, 46), "250/1000 25.0%  25.0 points/s  ETA 30s");
  // Narrower than the figures: cut.
  EXPECT_EQ(render_progress(250, 1000, 10.0, best, 20), "250/1000 25.0%  25.");
  EXPECT_EQ(render_progress(250, 1000, 10.0, best, 1), "");
  EXPECT_EQ(render_progress(250, 1000, 10.0, best, 0), "");
  EXPECT_EQ(render_progress(250, 1000, 10.0, best, -3), "");
}

TEST(Progress, RenderBestTextIsOneLineAndCutBetweenCharacters) {
  const std::string line = "[#####...............] 250/1000 25.0%  25.0 points/s  ETA 30s";
  EXPECT_EQ(render_progress(250, 1000, 10.0, "a\tb\nc\rd", 80), line + "  best: a b c d");
  // 16 columns in 37 bytes; 80 columns leave 10 for it: 7 characters and "...".
  EXPECT_EQ(render_progress(250, 1000, 10.0, "µarch ✓✓✓✓✓✓✓✓✓✓", 80), line + "  best: µarch ✓...");
}

TEST(Progress, RenderNeverExceedsTheWidth) {
  const std::vector<std::string> bests = {"", "x", "µarch ✓✓✓✓✓✓✓✓✓✓", std::string(300, 'b'), "tab\there"};
  for (int width = -2; width <= 160; ++width) {
    for (const std::string& best : bests) {
      for (const auto& [done, total, elapsed] : std::vector<std::tuple<int64_t, int64_t, double>>{
               {0, 0, 0.0}, {7, 30000, 0.5}, {30000, 30000, 7200.0}, {123456789, 987654321, 1e5}}) {
        const std::string line = render_progress(done, total, elapsed, best, width);
        const int columns = utf8_columns(line);
        ASSERT_GE(columns, 0) << "not valid UTF-8 at width " << width << ": " << line;
        EXPECT_LE(columns, std::max(width - 1, 0)) << line;
        for (const char c : line) ASSERT_FALSE(static_cast<unsigned char>(c) < 0x20) << line;
      }
    }
  }
}

/// A fake terminal: records every update, runs on a clock the test sets.
struct FakeTerminal {
  std::vector<std::string> updates;
  double now_s = 0;
  int columns = 80;
  ProgressOutput output(bool is_terminal = true, double min_interval_s = 0.1) {
    ProgressOutput out;
    out.is_terminal = is_terminal;
    out.write = [this](std::string_view text) { updates.emplace_back(text); };
    out.columns = [this] { return columns; };
    out.now_s = [this] { return now_s; };
    out.min_interval_s = min_interval_s;
    return out;
  }
};

TEST(Progress, NothingIsWrittenWhenNotATerminal) {
  FakeTerminal terminal;
  {
    Progress progress(100, terminal.output(/*is_terminal=*/false));
    for (int i = 0; i < 10; ++i) {
      terminal.now_s += 1;
      progress.advance(10);
    }
    progress.set_best("best");
    EXPECT_EQ(progress.done(), 100);
    progress.finish();
  }
  EXPECT_TRUE(terminal.updates.empty());
  // No write function at all: never drawn, whatever is_terminal says.
  ProgressOutput nowhere;
  nowhere.is_terminal = true;
  Progress progress(5, nowhere);
  progress.advance(5);
  progress.finish();
  EXPECT_EQ(progress.done(), 5);
}

TEST(Progress, RedrawsAtMostOncePerIntervalAndFinishEndsTheLine) {
  FakeTerminal terminal;
  Progress progress(100, terminal.output());
  ASSERT_EQ(terminal.updates.size(), 1u);  // the first line at once
  EXPECT_EQ(terminal.updates[0], "\r[....................] 0/100 0.0%  -- points/s  ETA --");

  terminal.now_s = 0.05;
  progress.advance(10);
  EXPECT_EQ(terminal.updates.size(), 1u);  // too soon
  terminal.now_s = 0.1;
  progress.advance(10);  // 20 in 0.1 s: 200 points/s, 80 left take 0.4 s
  ASSERT_EQ(terminal.updates.size(), 2u);
  EXPECT_EQ(terminal.updates[1], "\r[####................] 20/100 20.0%  200 points/s  ETA 0s");
  terminal.now_s = 0.15;
  progress.advance(5);
  EXPECT_EQ(terminal.updates.size(), 2u);

  progress.set_best("design 7");
  EXPECT_EQ(terminal.updates.size(), 2u);  // shown with the next redraw
  terminal.now_s = 0.25;
  progress.advance(5);  // 30 in 0.25 s: 120 points/s, 70 left take 0.58 s
  ASSERT_EQ(terminal.updates.size(), 3u);
  EXPECT_EQ(terminal.updates[2], "\r[######..............] 30/100 30.0%  120 points/s  ETA 1s  best: design 7");

  terminal.now_s = 2.0;
  progress.finish();  // 30 in 2 s: 15 points/s, 70 left take 4.7 s
  ASSERT_EQ(terminal.updates.size(), 4u);
  EXPECT_EQ(terminal.updates[3], "\r[######..............] 30/100 30.0%  15.0 points/s  ETA 5s  best: design 7\n");

  terminal.now_s = 3.0;
  progress.advance(1);
  progress.finish();
  EXPECT_EQ(terminal.updates.size(), 4u);  // nothing after the end
  EXPECT_EQ(progress.done(), 31);
}

TEST(Progress, ARunThatEndsBeforeItsBoundSaysItIsDone) {
  FakeTerminal terminal;
  Progress progress(100, terminal.output(), "buckets", true);
  EXPECT_EQ(terminal.updates[0], "\r[....................] 0/100 0.0%  -- buckets/s  ETA ≤ --");
  progress.advance(30);
  terminal.now_s = 2.0;
  progress.set_total(30);  // the search stopped after 30 buckets
  progress.finish();
  ASSERT_EQ(terminal.updates.size(), 2u);
  EXPECT_EQ(terminal.updates[1], "\r[####################] 30/30 100.0%  15.0 buckets/s  took 2s\n");
}

TEST(Progress, AShorterLineBlanksWhatTheLongerOneLeft) {
  FakeTerminal terminal;
  terminal.columns = 100;
  Progress progress(10, terminal.output());
  progress.set_best("a long best text");  // 16 columns
  terminal.now_s = 0.2;
  progress.advance(1);  // 5 points/s, 9 left take 1.8 s
  terminal.now_s = 0.4;
  progress.set_best("b");
  progress.advance(1);  // 5 points/s, 8 left take 1.6 s
  ASSERT_EQ(terminal.updates.size(), 3u);
  EXPECT_EQ(terminal.updates[1], "\r[##..................] 1/10 10.0%  5.00 points/s  ETA 2s  best: a long best text");
  // 15 columns shorter: 15 blanks.
  EXPECT_EQ(terminal.updates[2],
            "\r[####................] 2/10 20.0%  5.00 points/s  ETA 2s  best: b" + std::string(15, ' '));
}

TEST(Progress, TheWidthIsAskedAtEachRedraw) {
  FakeTerminal terminal;
  terminal.columns = 40;  // no room for a bar: 39 columns
  Progress progress(1000, terminal.output());
  terminal.columns = 47;
  terminal.now_s = 10;
  progress.advance(250);
  ASSERT_EQ(terminal.updates.size(), 2u);
  EXPECT_EQ(terminal.updates[1], "\r[#....] 250/1000 25.0%  25.0 points/s  ETA 30s");
}

TEST(Progress, DestructionEndsAnUnfinishedLine) {
  FakeTerminal terminal;
  {
    Progress progress(10, terminal.output());
    terminal.now_s = 1;
    progress.advance(4);
  }
  ASSERT_EQ(terminal.updates.size(), 3u);
  EXPECT_EQ(terminal.updates.back(), "\r[########............] 4/10 40.0%  4.00 points/s  ETA 2s\n");
}

TEST(Progress, ManyThreadsAdvance) {
  std::vector<std::string> updates;  // written under the progress mutex only
  ProgressOutput output;
  output.is_terminal = true;
  output.write = [&updates](std::string_view text) { updates.emplace_back(text); };
  output.columns = [] { return 100; };
  output.min_interval_s = 0;  // every advance may draw: as much contention as there can be
  constexpr int kThreads = 8;
  constexpr int kPerThread = 5000;
  Progress progress(kThreads * kPerThread, output);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&progress] {
      for (int i = 0; i < kPerThread; ++i) progress.advance();
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(progress.done(), kThreads * kPerThread);
  progress.finish();

  ASSERT_GE(updates.size(), 2u);
  int64_t shown = -1;
  for (size_t i = 0; i < updates.size(); ++i) {
    ASSERT_EQ(updates[i].front(), '\r');
    EXPECT_EQ(updates[i].back() == '\n', i + 1 == updates.size()) << i;
    const size_t begin = updates[i].find("] ") + 2;
    const int64_t done = std::stoll(updates[i].substr(begin, updates[i].find('/') - begin));
    EXPECT_GE(done, shown) << "the count went backwards";
    shown = done;
  }
  EXPECT_NE(updates.back().find("] 40000/40000 100.0%"), std::string::npos) << updates.back();
}

TEST(Progress, StandardErrorDrawsOnlyOnATerminal) {
  const ProgressOutput output = phaze::stderr_progress_output();
  EXPECT_EQ(output.is_terminal, ::isatty(STDERR_FILENO) == 1);
  EXPECT_FALSE(output.line_per_update);
  EXPECT_GT(output.columns(), 0);
  const double t0 = output.now_s();
  EXPECT_GE(output.now_s(), t0);
  // Plain lines are drawn whatever standard error is, every 5 s; none never draws.
  const ProgressOutput plain = phaze::stderr_progress_output(phaze::ProgressMode::Plain);
  EXPECT_TRUE(plain.is_terminal);
  EXPECT_TRUE(plain.line_per_update);
  EXPECT_EQ(plain.min_interval_s, 5.0);
  EXPECT_FALSE(phaze::stderr_progress_output(phaze::ProgressMode::None).is_terminal);
}

TEST(Progress, PlainLinesEndEachUpdateAndNeverReturnTheCarriage) {
  FakeTerminal log;
  ProgressOutput out = log.output(/*is_terminal=*/true, /*min_interval_s=*/5);
  out.line_per_update = true;
  Progress progress(100, out);
  log.now_s = 4;
  progress.advance(40);  // too soon
  log.now_s = 5;
  progress.advance(10);  // 50 in 5 s: 10 points/s, 50 left take 5 s
  log.now_s = 6;
  progress.finish();  // 50 in 6 s: 8.33 points/s, 50 left take 6 s
  ASSERT_EQ(log.updates.size(), 3u);
  EXPECT_EQ(log.updates[0], "[....................] 0/100 0.0%  -- points/s  ETA --\n");
  EXPECT_EQ(log.updates[1], "[##########..........] 50/100 50.0%  10.0 points/s  ETA 5s\n");
  EXPECT_EQ(log.updates[2], "[##########..........] 50/100 50.0%  8.33 points/s  ETA 6s\n");
}

}  // namespace
