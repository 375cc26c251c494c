#pragma once

// Parsing of JSON input files (model configs, architecture files, placement and schedule questions). JSON can
// say things that no reader should take silently: numbers beyond the range of a double (1e999, which
// nlohmann reports as an exception without a key), integers beyond 64 bits, the same key twice in one
// object (the last one would win unseen), and nesting deep enough to exhaust the stack of a recursive
// printer. Every reader parses through parse_json_input, which turns each of these into an InputError naming
// the file, the place in the document and the value as written.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace phaze {

/// Deepest nesting of arrays and objects accepted in an input file.
inline constexpr int kMaxJsonDepth = 64;

/// Parses `text`, the contents of `source` (a path or a name for messages). Throws InputError, one line,
/// for malformed JSON (with the byte offset), a number beyond the double range, an integer above 2^63 - 1
/// (JSON integers in phaze's inputs are signed 64-bit), a key given twice in one object, or nesting deeper
/// than kMaxJsonDepth. Places are written like `nodes["1"][3].id`.
nlohmann::json parse_json_input(const std::string& text, const std::string& source);

}  // namespace phaze
