#pragma once

// Runs the phaze binary for end-to-end tests and captures its exit status, stdout and stderr.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace phaze_test {

struct RunResult {
  int status = -1;  ///< exit status, -1 when killed by a signal
  std::string out;
  std::string err;
};

inline std::string quoted(const std::string& path) {
  return "'" + path + "'";
}

/// Runs `<launcher>phaze <args>` (both passed to the shell as written, e.g. an mpirun command line as the
/// launcher), no standard input.
inline RunResult run_phaze_with_launcher(const std::string& launcher, const std::string& args) {
  static std::atomic<int> counter{0};
  const auto err_path = std::filesystem::temp_directory_path() /
                        ("phaze_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".err");
  const std::string command =
      launcher + quoted(PHAZE_BINARY) + " " + args + " 2>" + quoted(err_path.string()) + " </dev/null";
  RunResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "popen failed: " << command;
    return result;
  }
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  std::stringstream ss;
  ss << err.rdbuf();
  result.err = ss.str();
  std::error_code ignored;
  std::filesystem::remove(err_path, ignored);
  return result;
}

/// Runs `phaze <args>` (args are passed to the shell as written), no standard input.
inline RunResult run_phaze(const std::string& args) {
  return run_phaze_with_launcher("", args);
}

/// Removes trailing newlines (and carriage returns).
inline std::string chomp(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

/// One non-empty line on stderr.
inline void expect_one_line(const std::string& err) {
  const std::string message = chomp(err);
  EXPECT_FALSE(message.empty()) << "no message on stderr";
  EXPECT_EQ(message.find('\n'), std::string::npos) << "message is not one line: " << err;
}

/// Bad input: exit status 2 and one line "phaze: error: ..." on stderr, containing `needle` if given.
inline void expect_input_error(const RunResult& r, const std::string& needle = "") {
  EXPECT_EQ(r.status, 2) << "stdout: " << r.out.substr(0, 2000) << "\nstderr: " << r.err;
  expect_one_line(r.err);
  EXPECT_EQ(chomp(r.err).rfind("phaze: error: ", 0), 0u) << r.err;
  if (!needle.empty()) {
    EXPECT_NE(r.err.find(needle), std::string::npos) << "message lacks '" << needle << "': " << r.err;
  }
}

/// Parses JSON output; a test failure (and an empty object) when it is not JSON.
inline nlohmann::json parse_json(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON (" << e.what() << "): " << text.substr(0, 2000);
    return nlohmann::json::object();
  }
}
inline nlohmann::json parse_json(const RunResult& r) {
  return parse_json(r.out);
}

/// The JSON answer of `phaze <args> --json`: a test failure (and an empty object) unless it exits 0.
inline nlohmann::json json_answer(const std::string& args) {
  const RunResult r = run_phaze(args + " --json");
  EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
  return r.status == 0 ? parse_json(r) : nlohmann::json::object();
}

}  // namespace phaze_test
