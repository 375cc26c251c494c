// Progress line for long runs. Drawing is plain text and carriage returns (no terminal escape codes): a
// shorter line is blanked over with spaces, so that any terminal, dumb ones included, shows it right.

#include "util/progress.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace phaze {

namespace {

constexpr int kBarCells = 20;
constexpr int kMinBarCells = 5;
constexpr std::string_view kBestLabel = "  best: ";
constexpr std::string_view kEllipsis = "...";
/// Beyond this an estimate means nothing; also keeps llround in range.
constexpr double kMaxDurationS = 1e11;

bool is_continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

/// Columns taken by UTF-8 text: one per code point.
int columns_of(std::string_view text) {
  return static_cast<int>(std::count_if(text.begin(), text.end(), [](char c) { return !is_continuation(c); }));
}

/// The first `columns` code points of `text` (never half of one).
std::string_view first_columns(std::string_view text, int columns) {
  int seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (!is_continuation(text[i]) && seen++ == columns) return text.substr(0, i);
  }
  return text;
}

double steady_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--";
  const long long s = std::llround(std::min(seconds, kMaxDurationS));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
  return fmt::format("{}d{:02}h", s / 86400, s % 86400 / 3600);
}

std::string format_rate(double per_s) {
  if (!std::isfinite(per_s) || per_s < 0) return "--";
  if (per_s < 10) return fmt::format("{:.2f}", per_s);
  if (per_s < 100) return fmt::format("{:.1f}", per_s);
  return fmt::format("{:.0f}", per_s);
}

std::string render_progress(int64_t done, int64_t total, double elapsed_s, std::string_view best_text, int width,
                            std::string_view unit, bool total_is_bound) {
  const int available = std::max(width - 1, 0);
  const bool complete = total <= 0 || done >= total;
  const int64_t counted = std::clamp<int64_t>(done, 0, std::max<int64_t>(total, 0));
  const int64_t permille = total <= 0 ? 1000 : counted * 1000 / total;
  const double rate = elapsed_s > 0 ? static_cast<double>(std::max<int64_t>(done, 0)) / elapsed_s : NAN;
  const std::string timing =
      complete ? "took " + format_duration(elapsed_s)
               : (total_is_bound ? "ETA ≤ " : "ETA ") +
                     (rate > 0 ? format_duration(static_cast<double>(total - done) / rate) : std::string("--"));
  const std::string stats = fmt::format("{}/{} {}.{}%  {} {}/s  {}", done, total, permille / 10, permille % 10,
                                        format_rate(rate), unit, timing);

  std::string line;
  const int cells = std::min(kBarCells, available - columns_of(stats) - 3);  // "[", "] "
  if (cells >= kMinBarCells) {
    const int64_t filled = total <= 0 ? cells : counted * cells / total;
    line += '[';
    line.append(static_cast<size_t>(filled), '#');
    line.append(static_cast<size_t>(cells - filled), '.');
    line += "] ";
  }
  line += stats;

  std::string best(best_text);
  std::replace_if(
      best.begin(), best.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }, ' ');
  const int room = available - columns_of(line) - static_cast<int>(kBestLabel.size());
  if (!best.empty() && room > static_cast<int>(kEllipsis.size())) {
    line += kBestLabel;
    if (columns_of(best) <= room) {
      line += best;
    } else {
      line += first_columns(best, room - static_cast<int>(kEllipsis.size()));
      line += kEllipsis;
    }
  }
  return std::string(first_columns(line, available));
}

ProgressOutput stderr_progress_output(ProgressMode mode) {
  ProgressOutput output;
  output.is_terminal = mode == ProgressMode::Plain || (mode == ProgressMode::Auto && ::isatty(STDERR_FILENO) == 1);
  if (mode == ProgressMode::Plain) {
    output.line_per_update = true;
    output.min_interval_s = kPlainProgressInterval;
  }
  output.write = [](std::string_view text) {
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
  };
  output.columns = [] {
    winsize size{};
    return ::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 ? static_cast<int>(size.ws_col) : 80;
  };
  output.now_s = steady_now_s;
  return output;
}

Progress::Progress(int64_t total, ProgressOutput output, std::string unit, bool total_is_bound)
    : output_(std::move(output)), unit_(std::move(unit)), total_is_bound_(total_is_bound), total_(total) {
  if (!output_.write && !output_.report) output_.is_terminal = false;
  if (!output_.columns) output_.columns = [] { return 80; };
  if (!output_.now_s) output_.now_s = steady_now_s;
  start_s_ = output_.now_s();
  if (output_.is_terminal) {
    std::lock_guard lock(mutex_);
    draw_locked(start_s_, /*last=*/false);
  }
}

Progress::~Progress() {
  try {
    finish();
  } catch (...) {
    // A terminal that cannot be written to is no reason to end the program.
  }
}

void Progress::advance(int64_t points) {
  done_.fetch_add(points, std::memory_order_relaxed);
  if (!output_.is_terminal) return;
  // Cheap checks first: most calls return here without touching the mutex.
  const double now = output_.now_s();
  if (now < next_draw_s_.load(std::memory_order_relaxed)) return;
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread is drawing: the line is fresh enough
  if (finished_ || now < next_draw_s_.load(std::memory_order_relaxed)) return;
  draw_locked(now, /*last=*/false);
}

void Progress::set_best(std::string text) {
  std::lock_guard lock(mutex_);
  best_ = std::move(text);
}

void Progress::set_total(int64_t total) {
  std::lock_guard lock(mutex_);
  total_ = total;
}

void Progress::finish() {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (output_.is_terminal) draw_locked(output_.now_s(), /*last=*/true);
}

void Progress::draw_locked(double now_s, bool last) {
  next_draw_s_.store(now_s + output_.min_interval_s, std::memory_order_relaxed);
  if (output_.report) {
    output_.report(done(), total_, best_);
    return;
  }
  const std::string line =
      render_progress(done(), total_, now_s - start_s_, best_, output_.columns(), unit_, total_is_bound_);
  if (output_.line_per_update) {
    output_.write(line + "\n");
    return;
  }
  const int columns = columns_of(line);
  std::string update = "\r" + line;
  if (columns < drawn_columns_) update.append(static_cast<size_t>(drawn_columns_ - columns), ' ');
  drawn_columns_ = columns;
  if (last) update += '\n';
  next_draw_s_.store(now_s + output_.min_interval_s, std::memory_order_relaxed);
  output_.write(update);
}

}  // namespace phaze
