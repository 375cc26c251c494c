// `mpirun -np N phaze search` (OpenMPI) against one process: the same answer, CSV and text, byte for byte,
// with 2 and 3 ranks, for the exhaustive and the area-bucket search; a results file completed after a rank
// (rank 0 or another) was killed with SIGKILL gives the fresh answer; bad input fails the job with status 2.

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "search/small_question.h"
#include "support/run_phaze.h"
#include "support/temp_dir.h"

namespace {

using phaze_test::run_phaze;
using phaze_test::TempDir;
using namespace phaze_test::small_question;

/// mpirun's options for this machine: more ranks than cores, as root when the tests run as root. The
/// sanitized build's leak check is left out for the ranks: the MPI library keeps memory until the process
/// ends, by design.
std::string mpirun_prefix(int ranks) {
  const char* asan = std::getenv("ASAN_OPTIONS");
  std::string prefix = "ASAN_OPTIONS='" + std::string(asan ? asan : "") + ":detect_leaks=0' mpirun --oversubscribe";
  if (::geteuid() == 0) prefix += " --allow-run-as-root";
  return prefix + " -np " + std::to_string(ranks) + " ";
}

/// `mpirun -np ranks phaze <args>`, as run_phaze runs phaze.
phaze_test::RunResult run_ranks(int ranks, const std::string& args) {
  return phaze_test::run_phaze_with_launcher(mpirun_prefix(ranks), args);
}

/// The text answer without the lines after it that say how the run went (its time, threads and ranks).
std::string answer_lines(const std::string& out) {
  const size_t stats = out.rfind(" points evaluated");
  return stats == std::string::npos ? out : out.substr(0, out.rfind('\n', stats));
}

void expect_same_outputs(const std::string& args, const std::vector<std::pair<int, int>>& ranks_threads) {
  TempDir dir;
  const auto alone = run_phaze(args + " --threads 1 -o " + dir.file("1.json") + " --csv " + dir.file("1.csv"));
  ASSERT_EQ(alone.status, 0) << alone.err;
  for (const auto& [ranks, threads] : ranks_threads) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks of " + std::to_string(threads) + " threads");
    const std::string name = std::to_string(ranks);
    const auto spread = run_ranks(ranks, args + " --threads " + std::to_string(threads) + " -o " +
                                             dir.file(name + ".json") + " --csv " + dir.file(name + ".csv"));
    ASSERT_EQ(spread.status, 0) << spread.err;
    EXPECT_EQ(read(dir.file(name + ".json")), read(dir.file("1.json")));
    EXPECT_EQ(read(dir.file(name + ".csv")), read(dir.file("1.csv")));
    EXPECT_EQ(answer_lines(spread.out), answer_lines(alone.out));
    // The other ranks did evaluate designs.
    EXPECT_NE(spread.out.find(" of " + std::to_string(ranks - 1) + " other rank"), std::string::npos) << spread.out;
  }
}

TEST(SearchMpi, TwoAndThreeRanksGiveTheOneProcessOutputs) {
  expect_same_outputs(small_args() + " --exhaustive --top 10", {{2, 1}, {3, 2}});
}

TEST(SearchMpi, BucketSearchOnTwoAndThreeRanksGivesTheOneProcessOutputs) {
  expect_same_outputs(joined(twelve_argv()) + kBucketArgs + " --stop-window 2 --top 10", {{2, 2}, {3, 1}});
}

/// The number in "(N by other ranks)" of the line that counts the points left out, or -1 without one.
int64_t left_out_by_other_ranks(const std::string& out) {
  std::smatch m;
  static const std::regex said("points left out unevaluated \\((\\d+) by other ranks\\)");
  return std::regex_search(out, m, said) ? std::stoll(m[1].str()) : -1;
}

// A question for the best points only (no CSV, no results file): the other ranks leave points out on their
// bounds too, on the thresholds rank 0 had reached when it handed each design out, and the answer is still
// the one process's, byte for byte.
TEST(SearchMpi, OtherRanksLeaveOutPointsAndGiveTheOneProcessAnswer) {
  TempDir dir;
  const std::string args = joined(twelve_argv()) + " --exhaustive --top 5";
  const auto alone = run_phaze(args + " --threads 1 -o " + dir.file("1.json"));
  ASSERT_EQ(alone.status, 0) << alone.err;
  for (const auto& [ranks, threads] : std::vector<std::pair<int, int>>{{2, 1}, {3, 1}}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    const std::string name = std::to_string(ranks) + ".json";
    const auto spread = run_ranks(ranks, args + " --threads " + std::to_string(threads) + " -o " + dir.file(name));
    ASSERT_EQ(spread.status, 0) << spread.err;
    EXPECT_EQ(read(dir.file(name)), read(dir.file("1.json")));
    EXPECT_EQ(answer_lines(spread.out), answer_lines(alone.out));
    EXPECT_GT(left_out_by_other_ranks(spread.out), 0) << spread.out;
  }
}

/// Starts `mpirun -np ranks phaze args...` (output discarded) with TAG=value in its ranks' environment; returns
/// mpirun's pid.
pid_t spawn_ranks(int ranks, const std::vector<std::string>& args, const std::string& tag) {
  std::string command = "exec env PHAZE_MPI_TEST_TAG=" + tag + " " + mpirun_prefix(ranks) + "-x PHAZE_MPI_TEST_TAG " +
                        phaze_test::quoted(PHAZE_BINARY) + " " + joined(args) + " >/dev/null 2>&1 </dev/null";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

/// The pid of the rank `rank` whose environment holds PHAZE_MPI_TEST_TAG=tag, or -1.
pid_t rank_pid(int rank, const std::string& tag) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "environ", std::ios::binary);
    std::string environ((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string nul(1, '\0');
    const std::string padded = nul + environ;
    if (padded.find(nul + "PHAZE_MPI_TEST_TAG=" + tag + nul) != std::string::npos &&
        padded.find(nul + "OMPI_COMM_WORLD_RANK=" + std::to_string(rank) + nul) != std::string::npos)
      return static_cast<pid_t>(std::stol(name));
  }
  return -1;
}

/// How many points the results file at `path` holds now: 0 while it does not exist or has no table yet.
int64_t stored_points(const std::string& path) {
  sqlite3* db = nullptr;
  int64_t count = 0;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 1000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM points", -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW)
      count = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return count;
}

/// Waits until the results file at `path` holds more than `points` points or the process `launcher` has
/// ended (then reaped, and false is returned); gives up after a minute.
bool wait_for_progress(const std::string& path, int64_t points, pid_t launcher) {
  for (int waited_ms = 0; waited_ms < 60000; waited_ms += 20) {
    int status = 0;
    if (::waitpid(launcher, &status, WNOHANG) == launcher) return false;
    if (stored_points(path) > points) return true;
    ::usleep(20 * 1000);
  }
  return true;
}

TEST(SearchMpi, ResultsFileCompletedAfterARankWasKilledGivesTheFreshAnswer) {
  TempDir dir;
  const std::string db = dir.file("results.sqlite");
  // 72 designs: about two seconds on one process.
  std::vector<std::string> question = small_argv();
  for (const auto& [option, values] :
       {std::pair{"--tc", "1,2,4"}, {"--vc", "1,2,4"}, {"--width", "8,16,32"}, {"--depth", "8,16"}})
    *(std::find(question.begin(), question.end(), option) + 1) = values;
  question.push_back("--exhaustive");
  std::vector<std::string> killed = question;
  killed.insert(killed.end(), {"--threads", "1", "--db", db});
  // Each run is killed a moment after it stored more points than the runs before it: the moments follow the
  // run's progress, not the clock, so that a slow build (sanitizers, a loaded machine) is killed as late in
  // its run as a fast one.
  std::mt19937 random(2026);  // fixed seed: the same delays on every run of the test
  std::uniform_int_distribution<int> delay_ms(0, 200);
  int kills = 0;
  int run = 0;
  // Rank 0 of three (the one that stores the points), then rank 1 of three, then rank 1 of two.
  for (const auto& [ranks, victim] : std::vector<std::pair<int, int>>{{3, 0}, {3, 1}, {2, 1}}) {
    const std::string tag = std::to_string(::getpid()) + "_" + std::to_string(run++);
    const int64_t points_before = stored_points(db);
    const pid_t launcher = spawn_ranks(ranks, killed, tag);
    ASSERT_GT(launcher, 0);
    if (!wait_for_progress(db, points_before, launcher)) continue;  // the run ended first
    ::usleep(static_cast<useconds_t>(delay_ms(random)) * 1000);
    const pid_t pid = rank_pid(victim, tag);
    if (pid > 0 && ::kill(pid, SIGKILL) == 0) ++kills;
    int status = 0;
    ::waitpid(launcher, &status, 0);
  }
  EXPECT_GT(kills, 0) << "every run ended before its rank could be killed";
  const std::string args = joined(question);
  const auto resumed = run_ranks(3, args + " --threads 1 --db " + db + " -o " + dir.file("resumed.json"));
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  const auto fresh = run_phaze(args + " --threads 2 -o " + dir.file("fresh.json"));
  ASSERT_EQ(fresh.status, 0) << fresh.err;
  EXPECT_EQ(read(dir.file("resumed.json")), read(dir.file("fresh.json")));
  EXPECT_EQ(resumed.out.find(", 0 resumed from the results file"), std::string::npos) << resumed.out;
}

TEST(SearchMpi, BadInputFailsEveryRankWithStatusTwo) {
  const auto r = run_ranks(2, "search --model no-such-model --threads 1");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("phaze: error: model 'no-such-model'"), std::string::npos) << r.err;
  // Only rank 0 writes the outputs: a path it cannot write stops the others too.
  const auto output = run_ranks(3, small_args() + " --threads 1 -o /nonexistent-dir/answer.json");
  EXPECT_EQ(output.status, 2) << output.err;
  EXPECT_NE(output.err.find("--output /nonexistent-dir/answer.json"), std::string::npos) << output.err;
}

}  // namespace
