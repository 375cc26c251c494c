#pragma once

// Numeric command-line options with documented bounds. CLI11 would convert "18446744073709551617" to the
// largest int64_t without a word and print its own rendering of a value ("1e-12" as 0); these options are
// taken as text instead, parsed exactly, checked against their bounds when the command runs, and every error
// quotes the text the user typed (InputError: one line, exit status 2).

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/input_error.h"
#include "util/number_text.h"

namespace phaze::cli {

/// Most values one list option may hold (--mbs 1,2,4,... and the like).
inline constexpr size_t kMaxListValues = 64;

using phaze::parse_integer;
using phaze::parse_number;
/// The items of a comma-separated list option, at most kMaxListValues of them ("" gives none); checked for
/// their number before anything is parsed.
std::vector<std::string> list_items(const std::string& option, const std::string& text);
/// A comma-separated list of integers in [lo, hi], at most kMaxListValues of them ("" gives an empty list).
std::vector<int64_t> parse_integer_list(const std::string& option, const std::string& text, int64_t lo, int64_t hi);
/// A comma-separated list of finite numbers in (lo, hi] (lo excluded), at most kMaxListValues of them.
std::vector<double> parse_number_list(const std::string& option, const std::string& text, double lo, double hi);

/// Adds `name` to `cmd` as an integer option in [lo, hi]: the value given replaces `target` once parsed. The
/// help text ends with the bounds and the default (`target`'s value when added).
CLI::Option* add_integer_option(CLI::App* cmd, const std::string& name, int64_t& target, int64_t lo, int64_t hi,
                                const std::string& help);
/// The same for `int` targets (thread counts).
CLI::Option* add_integer_option(CLI::App* cmd, const std::string& name, int& target, int64_t lo, int64_t hi,
                                const std::string& help);
/// The threads a `--threads` value asks for: itself when positive, else one per hardware thread (at least 1).
int threads_or_hardware(int asked);

/// A unit a value is often given in by mistake, recognised by its size: `unit` (e.g. "bytes") is `factor` of
/// the option's own unit (`own`, e.g. "GiB": 2^-30), and `instead` names what to do ("" when the option
/// takes the value converted).
struct OtherUnit {
  const char* unit;
  double factor;
  const char* own;
  double least_plausible = 0;  ///< the least value, in the option's unit, the other unit explains
  const char* instead = "";
};

/// The error for `value` (as typed, `text`) of `option`, out of its range [lo, hi], when read in `other` it
/// would be in range and at least other.least_plausible: it says so and what the value is in the option's
/// unit; nothing otherwise.
std::optional<InputError> wrong_unit(const std::string& option, const std::string& text, double value, double lo,
                                     double hi, const OtherUnit& other);

/// parse_number_list, and a list with a value out of range that `other` would explain is refused saying so.
std::vector<double> parse_number_list(const std::string& option, const std::string& text, double lo, double hi,
                                      const OtherUnit& other);

/// Adds `name` as a number option in [lo, hi] (or (lo, hi] when `lo_open`), like add_integer_option.
CLI::Option* add_number_option(CLI::App* cmd, const std::string& name, double& target, double lo, double hi,
                               bool lo_open, const std::string& help);
/// The same, and a value out of range that `other` would explain is refused saying so.
CLI::Option* add_number_option(CLI::App* cmd, const std::string& name, double& target, double lo, double hi,
                               bool lo_open, const std::string& help, const OtherUnit& other);

}  // namespace phaze::cli
