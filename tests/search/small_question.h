#pragma once

// The small question of the end-to-end search tests: a three-layer GPT-2-style model on 8 designs (12 with
// four-core designs), 3 HBM sizes, 3 micro-batch sizes and both recomputation settings, searched in a second;
// and the helpers that run it.

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace phaze_test::small_question {

inline const std::string kModel = std::string(PHAZE_TEST_DATA) + "/hf/tiny-gpt2/config.json";
constexpr double kGiB = 1073741824.0;

// The small question: 8 designs × 3 HBM sizes × 3 micro-batch sizes × 2 recomputation settings. The memory
// limits (about 0.43, 0.86 and 2.1 MB) make some points infeasible and push others to several stages, and
// the slow link makes the width and data-parallel degree matter.
inline const std::vector<int64_t> kTc{1, 2}, kVc{1, 2}, kWidth{8, 16}, kDepth{8}, kMbs{1, 2, 4};
inline const std::vector<double> kHbmGib{0.0004, 0.0008, 0.002};
constexpr int64_t kDevices = 8, kBatch = 16, kSeq = 64;
constexpr double kLinkGibS = 0.5;

/// The small question's arguments, one per element.
inline std::vector<std::string> small_argv() {
  return {"search",
          "--model",
          kModel,
          "--devices",
          std::to_string(kDevices),
          "--global-batch",
          std::to_string(kBatch),
          "--seq",
          std::to_string(kSeq),
          "--mbs",
          "1,2,4",
          "--hbm",
          "0.0004,0.0008,0.002",
          "--tc",
          "1,2",
          "--vc",
          "1,2",
          "--width",
          "8,16",
          "--depth",
          "8",
          "--glb-mib",
          "2",
          "--lower-fraction",
          "0",
          "--link-bandwidth",
          fmt::format("{}", kLinkGibS),
          "--phaze-compat"};
}

/// The small question with four-core designs too: 12 designs, in 8 buckets of 20,000 µm² (kBucketArgs: the
/// bucket rule), four of them with two designs.
inline std::vector<std::string> twelve_argv() {
  std::vector<std::string> argv = small_argv();
  *(std::find(argv.begin(), argv.end(), "--tc") + 1) = "1,2,4";
  return argv;
}
inline const char* const kBucketArgs = " --stop-rule buckets --bucket-um2 20000";

/// Arguments for run_phaze's shell, each quoted.
inline std::string joined(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "'" : " '") + a + "'";
  return out;
}

inline std::string small_args() {
  return joined(small_argv());
}

/// The number of points a search's text says it left out on their bounds (0 when it says nothing).
inline int64_t points_left_out(const std::string& text) {
  std::smatch m;
  static const std::regex said("(\\d+) points left out unevaluated");
  return std::regex_search(text, m, said) ? std::stoll(m[1].str()) : 0;
}

inline std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Starts `phaze args...` with output discarded; returns its pid.
inline pid_t spawn(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    std::vector<char*> argv{const_cast<char*>(PHAZE_BINARY)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(PHAZE_BINARY, argv.data());
    ::_exit(127);
  }
  return pid;
}

}  // namespace phaze_test::small_question
