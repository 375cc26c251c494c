#pragma once

#include <cstdint>
#include <string>

namespace phaze::cli {

/// 1234567 → "1,234,567".
std::string group_digits(int64_t value);
/// Bytes with a binary unit, e.g. "2.67 GiB".
std::string human_bytes(int64_t bytes);

}  // namespace phaze::cli
