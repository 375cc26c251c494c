#pragma once

// Numeric command-line options with documented bounds. CLI11 would convert "18446744073709551617" to the
// largest int64_t without a word and print its own rendering of a value ("1e-12" as 0); these options are
// taken as text instead, parsed exactly, checked against their bounds when the command runs, and every error
// quotes the text the user typed (InputError: one line, exit status 2).

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "util/number_text.h"

namespace phaze::cli {

/// Most values one list option may hold (--mbs 1,2,4,... and the like).
inline constexpr size_t kMaxListValues = 64;

using phaze::parse_integer;
using phaze::parse_number;
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

/// Adds `name` as a number option in [lo, hi] (or (lo, hi] when `lo_open`), like add_integer_option.
CLI::Option* add_number_option(CLI::App* cmd, const std::string& name, double& target, double lo, double hi,
                               bool lo_open, const std::string& help);

}  // namespace phaze::cli
