#pragma once

// Numbers typed by a user (an option's value, a flag of a pasted command line), parsed exactly: the whole
// text must be the number, within its bounds; every error is an InputError quoting the text and naming
// where it came from.

#include <cstdint>
#include <string>

namespace phaze {

/// An integer in [lo, hi] written in decimal; `option` names it in messages.
int64_t parse_integer(const std::string& option, const std::string& text, int64_t lo, int64_t hi);
/// A finite number in [lo, hi] (or (lo, hi] when `lo_open`).
double parse_number(const std::string& option, const std::string& text, double lo, double hi, bool lo_open = false);

/// `x` in fixed notation to `digits` significant digits, trailing zeros dropped: 8431670 for 8.43167e+06,
/// 0.0000562481 for 5.62481e-05, 100.323 as {:.6g} gives it. For text a person reads (no exponents).
std::string fixed_significant(double x, int digits = 6);

/// "1 design", "3 designs": a count with its noun in the singular or the plural (`plural`, or the singular
/// with an s). For text a person reads.
std::string counted(int64_t n, const std::string& singular, const std::string& plural = "");

}  // namespace phaze
