#include "cli/option_values.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <thread>

#include "util/input_error.h"

namespace phaze::cli {

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

/// How a bound reads in messages and help: integers as written, numbers with %g.
std::string bound_text(double value) {
  return fmt::format("{:g}", value);
}

}  // namespace

/// The text of a list option, checked for its length first so that a huge list is not parsed at all.
std::vector<std::string> list_items(const std::string& option, const std::string& text) {
  if (text.empty()) return {};
  std::vector<std::string> items = split(text);
  if (items.size() > kMaxListValues)
    throw InputError(fmt::format("{} '{}': {} values, at most {} allowed", option, text.substr(0, 40) + "...",
                                 items.size(), kMaxListValues));
  return items;
}

std::vector<int64_t> parse_integer_list(const std::string& option, const std::string& text, int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (const std::string& item : list_items(option, text)) {
    try {
      out.push_back(parse_integer(option, item, lo, hi));
    } catch (const InputError&) {
      throw InputError(fmt::format("{} '{}': '{}' is not an integer from {} to {}", option, text, item, lo, hi));
    }
  }
  return out;
}

std::vector<double> parse_number_list(const std::string& option, const std::string& text, double lo, double hi) {
  std::vector<double> out;
  for (const std::string& item : list_items(option, text)) {
    try {
      out.push_back(parse_number(option, item, lo, hi, true));
    } catch (const InputError&) {
      throw InputError(fmt::format("{} '{}': '{}' is not a finite number in ({}, {}]", option, text, item,
                                   bound_text(lo), bound_text(hi)));
    }
  }
  return out;
}

namespace {

/// The option's first name ("--a" of "--a,--b"), which its errors quote.
std::string first_name(const std::string& names) {
  return names.substr(0, names.find(','));
}

template <typename Integer>
CLI::Option* add_integer(CLI::App* cmd, const std::string& name, Integer& target, int64_t lo, int64_t hi,
                         const std::string& help) {
  CLI::Option* option = cmd->add_option_function<std::string>(
      name,
      [&target, shown = first_name(name), lo, hi](const std::string& text) {
        target = static_cast<Integer>(parse_integer(shown, text, lo, hi));
      },
      fmt::format("{} [{}..{}]", help, lo, hi));
  option->default_str(std::to_string(target))->type_name("INT");
  return option;
}

}  // namespace

CLI::Option* add_integer_option(CLI::App* cmd, const std::string& name, int64_t& target, int64_t lo, int64_t hi,
                                const std::string& help) {
  return add_integer(cmd, name, target, lo, hi, help);
}

CLI::Option* add_integer_option(CLI::App* cmd, const std::string& name, int& target, int64_t lo, int64_t hi,
                                const std::string& help) {
  return add_integer(cmd, name, target, lo, hi, help);
}

CLI::Option* add_number_option(CLI::App* cmd, const std::string& name, double& target, double lo, double hi,
                               bool lo_open, const std::string& help) {
  CLI::Option* option = cmd->add_option_function<std::string>(
      name,
      [&target, shown = first_name(name), lo, hi, lo_open](const std::string& text) {
        target = parse_number(shown, text, lo, hi, lo_open);
      },
      fmt::format("{} {}{}, {}]", help, lo_open ? "(" : "[", bound_text(lo), bound_text(hi)));
  option->default_str(fmt::format("{:g}", target))->type_name("NUMBER");
  return option;
}

std::optional<InputError> wrong_unit(const std::string& option, const std::string& text, double value, double lo,
                                     double hi, const OtherUnit& other) {
  const double converted = value * other.factor;
  if ((value >= lo && value <= hi) || !(converted > lo && converted <= hi) || converted < other.least_plausible)
    return std::nullopt;
  return InputError(fmt::format(
      "{} {}: outside [{}, {}] {}; it looks like {} ({:g} {}){}", option, text, bound_text(lo), bound_text(hi),
      other.own, other.unit, converted, other.own,
      *other.instead ? fmt::format(": {}", other.instead) : fmt::format(": {} takes {}", option, other.own)));
}

namespace {

/// Called while a range error for the items of `option` (as typed, `text`) is handled: when every item is a
/// number and one of them, read in `other`, would be in range, throws the error that says so; otherwise
/// rethrows the range error.
[[noreturn]] void rethrow_explained(const std::string& option, const std::string& text,
                                    const std::vector<std::string>& items, double lo, double hi,
                                    const OtherUnit& other) {
  std::vector<double> values;
  try {
    for (const std::string& item : items)
      values.push_back(
          parse_number(option, item, -std::numeric_limits<double>::max(), std::numeric_limits<double>::max()));
  } catch (const InputError&) {
    values.clear();
  }
  for (double value : values)
    if (const auto error = wrong_unit(option, text, value, lo, hi, other)) throw *error;
  throw;
}

}  // namespace

std::vector<double> parse_number_list(const std::string& option, const std::string& text, double lo, double hi,
                                      const OtherUnit& other) {
  try {
    return parse_number_list(option, text, lo, hi);
  } catch (const InputError&) {
    rethrow_explained(option, text, list_items(option, text), lo, hi, other);
  }
}

CLI::Option* add_number_option(CLI::App* cmd, const std::string& name, double& target, double lo, double hi,
                               bool lo_open, const std::string& help, const OtherUnit& other) {
  CLI::Option* option = cmd->add_option_function<std::string>(
      name,
      [&target, shown = first_name(name), lo, hi, lo_open, other](const std::string& text) {
        try {
          target = parse_number(shown, text, lo, hi, lo_open);
        } catch (const InputError&) {
          rethrow_explained(shown, text, {text}, lo, hi, other);
        }
      },
      fmt::format("{} {}{}, {}]", help, lo_open ? "(" : "[", bound_text(lo), bound_text(hi)));
  option->default_str(fmt::format("{:g}", target))->type_name("NUMBER");
  return option;
}

int threads_or_hardware(int asked) {
  return asked > 0 ? asked : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace phaze::cli
