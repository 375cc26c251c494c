#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace phaze {

/// Checks, before any work is done, that the output file `path` given with `option` can be written, so that a
/// long run does not end by losing its answer. An existing file is opened for appending (not changed); a
/// missing one is created and removed again. InputError naming the option and the path otherwise (a
/// directory, a missing or read-only directory).
void check_writable(const std::string& option, const std::string& path);

/// Writes `text` to `path`, replacing it; InputError naming the file when that fails.
void write_text_file(const std::string& path, const std::string& text);
/// Writes to `path`, replacing it, what `write` puts on the stream, without holding it all in memory first;
/// InputError naming the file when that fails.
void write_file(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace phaze
