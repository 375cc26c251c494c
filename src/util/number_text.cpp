#include "util/number_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "util/input_error.h"

namespace phaze {

namespace {

/// How a bound reads in messages: integers as written, numbers with %g.
std::string bound_text(double value) {
  return fmt::format("{:g}", value);
}

}  // namespace

int64_t parse_integer(const std::string& option, const std::string& text, int64_t lo, int64_t hi) {
  int64_t value = 0;
  const char* begin = text.data() + (text.size() > 1 && text[0] == '+' ? 1 : 0);
  const auto [end, ec] = std::from_chars(begin, text.data() + text.size(), value);
  const bool whole = end == text.data() + text.size() && begin != end;
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && whole && (value < lo || value > hi)))
    throw InputError(fmt::format("{} '{}': must be an integer from {} to {}", option, text, lo, hi));
  if (ec != std::errc() || !whole) throw InputError(fmt::format("{} '{}': not an integer", option, text));
  return value;
}

double parse_number(const std::string& option, const std::string& text, double lo, double hi, bool lo_open) {
  double value = 0;
  const char* begin = text.data() + (text.size() > 1 && text[0] == '+' ? 1 : 0);
  const auto [end, ec] = std::from_chars(begin, text.data() + text.size(), value);
  const bool whole = end == text.data() + text.size() && begin != end;
  const std::string range = fmt::format("{}{}, {}]", lo_open ? "(" : "[", bound_text(lo), bound_text(hi));
  if (ec == std::errc::result_out_of_range && whole)
    throw InputError(fmt::format("{} '{}': must be a finite number in {}", option, text, range));
  if (ec != std::errc() || !whole) throw InputError(fmt::format("{} '{}': not a number", option, text));
  if (!std::isfinite(value) || value < lo || (lo_open && value == lo) || value > hi)
    throw InputError(fmt::format("{} '{}': must be a finite number in {}", option, text, range));
  return value;
}

std::string fixed_significant(double x, int digits) {
  if (!std::isfinite(x) || x == 0) return fmt::format("{:g}", x);
  // Round to the significant digits first (as {:.Ng} does), then write without an exponent.
  const double rounded = std::stod(fmt::format("{:.{}e}", x, digits - 1));
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(rounded))));
  std::string out = fmt::format("{:.{}f}", rounded, std::max(0, digits - 1 - magnitude));
  if (out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out;
}

std::string counted(int64_t n, const std::string& singular, const std::string& plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural.empty() ? singular + "s" : plural);
}

}  // namespace phaze
