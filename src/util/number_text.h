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

}  // namespace phaze
