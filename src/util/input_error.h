#pragma once

#include <stdexcept>
#include <string>

namespace phaze {

/// Invalid user input (a file, a field, an option value). The CLI prints the message on one line and
/// exits with status 2; the message names the source, the field and the offending value.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace phaze
