#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace phaze {

/// A duration for people: "45s", "1m05s", "2h03m", "3d04h" (rounded to whole seconds, then the smallest
/// unit shown truncated); "--" when negative or not finite.
std::string format_duration(double seconds);

/// A rate for people: two decimals below 10, one below 100, none above ("3.25", "42.5", "1234"); "--" when
/// negative or not finite.
std::string format_rate(double per_s);

/// One progress line, without carriage return or newline, at most `width` - 1 columns (the last column is
/// left free so that no terminal wraps the line):
///
///   [#####...............] 250/1000 25.0%  25.0 points/s  ETA 30s  best: <best_text>
///
/// The bar has 20 cells, filled in proportion to done / total rounded down (narrower or left out when the
/// width is short); the percentage is rounded down to a tenth; the rate is done / elapsed_s; the ETA is the
/// units left at that rate ("took <elapsed>" once done >= total). best_text is cut to the space left (its
/// control characters shown as spaces); a line that still does not fit is cut at the width. Columns are
/// counted as UTF-8 code points. total <= 0 counts as nothing to do. `unit` names what is counted; with
/// `total_is_bound` the total is the most there can be (a search that may stop early), and the ETA reads
/// "ETA ≤ 30s".
std::string render_progress(int64_t done, int64_t total, double elapsed_s, std::string_view best_text, int width,
                            std::string_view unit = "points", bool total_is_bound = false);

/// Where and whether a Progress draws. Injectable so that tests see what would reach a terminal. Functions
/// left empty mean: never draw (write), 80 columns (columns), std::chrono::steady_clock (now_s).
struct ProgressOutput {
  std::function<void(std::string_view)> write;  ///< receives whole updates: "\r", the line, blanks over the rest
  bool is_terminal = false;       ///< draw at all: a terminal, or plain lines asked for (not a log by default)
  std::function<int()> columns;   ///< terminal width in columns, asked before each draw
  std::function<double()> now_s;  ///< a monotonic clock, seconds
  double min_interval_s = 0.1;    ///< at most one redraw per interval (about 10 per second)
  /// Each update on a line of its own ("line\n"), for a log rather than a terminal.
  bool line_per_update = false;
  /// Receives each update's figures (done, total, best text) instead of a drawn line: for a caller that
  /// shows progress its own way (the Python package's callback). Draws even without `write`.
  std::function<void(int64_t done, int64_t total, std::string_view best)> report;
};

/// How a long run shows its progress on standard error: `auto` a bar redrawn in place when it is a terminal
/// and nothing otherwise; `plain` one line every kPlainProgressInterval seconds whatever it is (a log, a
/// batch job's output); `none` nothing.
enum class ProgressMode { Auto, Plain, None };
inline constexpr double kPlainProgressInterval = 5;

/// Standard error as `mode` says, as wide as the terminal (80 if unknown or not a terminal).
ProgressOutput stderr_progress_output(ProgressMode mode = ProgressMode::Auto);

/// Progress of a long run on one terminal line: points done of total, rate, ETA and a "best so far" text,
/// redrawn in place (carriage return) at most about ten times a second, nothing at all when the output is not
/// a terminal. advance() may be called from any number of threads: it adds to an atomic counter and draws only
/// when the interval has passed and no other thread is drawing, so workers never wait on the terminal.
/// Other output to the same terminal while the bar is shown lands in the middle of the line: finish() first.
class Progress {
 public:
  /// Draws the first line (0 of `total` `unit`) at once; `total_is_bound` as in render_progress.
  explicit Progress(int64_t total, ProgressOutput output = stderr_progress_output(), std::string unit = "points",
                    bool total_is_bound = false);
  /// Ends the line if finish() was not called (an exception unwinding past a search leaves a clean terminal).
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Counts `points` more points done (any thread).
  void advance(int64_t points = 1);
  /// The text after "best: " from the next redraw on (any thread).
  void set_best(std::string text);
  /// The total from the next redraw on (any thread): for a run that ended before its bound, so that its last
  /// line reads done and the time taken.
  void set_total(int64_t total);
  /// Draws the final line and ends it with a newline; later calls and advances draw nothing.
  void finish();
  int64_t done() const { return done_.load(std::memory_order_relaxed); }

 private:
  void draw_locked(double now_s, bool last);

  ProgressOutput output_;
  std::string unit_;
  bool total_is_bound_;
  int64_t total_;  ///< guarded by mutex_
  double start_s_;
  std::atomic<int64_t> done_{0};
  std::atomic<double> next_draw_s_{0};  ///< the clock time before which advance() does not draw
  std::mutex mutex_;                    ///< guards drawing, best_ and finished_
  std::string best_;
  int drawn_columns_ = 0;  ///< width of the line on screen, blanked where a shorter line leaves it showing
  bool finished_ = false;
};

}  // namespace phaze
