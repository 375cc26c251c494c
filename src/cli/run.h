#pragma once

// The command line: parses the arguments, runs the command, prints its output on standard output and an error
// as one line on standard error. The executable's main() and the Python package's commands call it.

namespace phaze::cli {

/// Runs `phaze argv[1...]`; returns the exit status (0 done, 2 bad input, 1 internal error).
int run(int argc, const char* const* argv);

}  // namespace phaze::cli
