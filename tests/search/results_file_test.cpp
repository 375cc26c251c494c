// Search results file: exact round trips, key order, best points, first writer wins, run identity and
// starting over, one-line InputErrors naming the file for foreign, corrupt, newer and other runs' files
// (which stay byte for byte as they were), processes killed by SIGKILL in the middle of writing, and
// processes writing one file at once.

#include "search/results_file.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cost/estimate_cache.h"
#include "support/child_process.h"
#include "support/sqlite_script.h"
#include "support/temp_dir.h"
#include "util/input_error.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using phaze::InputError;
using phaze::search::PointResult;
using phaze::search::ResultsDb;
using phaze_test::start_child;
using phaze_test::TempDir;
using phaze_test::wait_for_exit_codes;

constexpr const char* kIdentity = R"({"cost_model":"v3","models":["gpt3-175b"],"mbs":[1,2,4,8]})";

using phaze_test::query_text;
using phaze_test::sql;

/// The bytes of a file; nullopt when it does not exist.
std::optional<std::string> file_bytes(const std::string& path) {
  if (!fs::exists(path)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

/// The bytes of a database file and its journals, to check that a rejected file is left as it was.
struct Snapshot {
  std::optional<std::string> main, wal, journal;
  explicit Snapshot(const std::string& path)
      : main(file_bytes(path)), wal(file_bytes(path + "-wal")), journal(file_bytes(path + "-journal")) {}
  bool operator==(const Snapshot&) const = default;
};

/// Expects opening `path` to throw InputError whose one-line message names the path and contains `fragment`,
/// and the file, its WAL and its rollback journal to be byte for byte as before.
void expect_rejected(const std::string& path, const std::string& fragment, const std::string& identity = kIdentity,
                     ResultsDb::OpenMode mode = ResultsDb::OpenMode::kResume) {
  const Snapshot before(path);
  try {
    ResultsDb db(path, identity, mode);
    ADD_FAILURE() << "opening " << path << " did not throw";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_TRUE(Snapshot(path) == before) << path << " changed";
}

PointResult point(const std::string& key, json record, bool feasible, double throughput) {
  return PointResult{key, std::move(record), feasible, throughput};
}

TEST(ResultsDb, RoundTripsRecordsExactly) {
  TempDir dir;
  const std::string path = dir.file("results.sqlite");
  const std::vector<PointResult> points = {
      point("design=1 mbs=1", {{"throughput", 1.0 / 3.0}, {"plan", {{"p", 8}, {"t", 4}, {"d", 32}}}}, true, 1.0 / 3.0),
      point("design=1 mbs=2", {{"reason", "activations exceed HBM"}, {"stages", json::array()}}, false, 0.0),
      point("design=2 mbs=1",
            {{"int64_max", std::numeric_limits<int64_t>::max()},
             {"tiny", std::numeric_limits<double>::denorm_min()},
             {"big", 6.02214076e23},
             {"next_after_one", std::nextafter(1.0, 2.0)},
             {"text", "µm² \"quoted\" \\ tab\t newline\n"},
             {"null", nullptr},
             {"flags", {true, false}}},
            true, std::numeric_limits<double>::max()),
      point("design=3 mbs=1", json::array({1, 2, 3}), true, 12345.0),  // any JSON, not only objects
      point("design=4 mbs=1", json(nullptr), false, 0.0),
  };
  {
    ResultsDb db(path, kIdentity);
    EXPECT_EQ(db.put_batch(points), 5);
    EXPECT_EQ(db.count(), 5);
    EXPECT_EQ(db.path(), path);
    EXPECT_EQ(db.run_identity(), kIdentity);
  }
  ResultsDb db(path, kIdentity);  // read back after reopening, from the file
  EXPECT_EQ(db.count(), 5);
  for (const PointResult& expected : points) {
    const std::optional<PointResult> found = db.find(expected.key);
    ASSERT_TRUE(found.has_value()) << expected.key;
    EXPECT_EQ(found->record, expected.record) << expected.key;
    EXPECT_EQ(found->feasible, expected.feasible) << expected.key;
    EXPECT_EQ(std::memcmp(&found->throughput_samples_per_s, &expected.throughput_samples_per_s, sizeof(double)), 0);
  }
  // Doubles inside records come back bit for bit.
  const double third = db.find("design=1 mbs=1")->record["throughput"].get<double>();
  EXPECT_EQ(std::memcmp(&third, &points[0].record["throughput"].get_ref<const double&>(), sizeof(double)), 0);
  EXPECT_FALSE(db.find("design=1").has_value());
  EXPECT_FALSE(db.find("").has_value());
  EXPECT_FALSE(db.find("design=1 mbs=1 ").has_value());
}

TEST(ResultsDb, NonFiniteNumbersInRecordsBecomeNull) {
  TempDir dir;
  ResultsDb db(dir.file("results.sqlite"), kIdentity);
  db.put_batch({point("k", {{"nan", std::nan("")}, {"inf", HUGE_VAL}}, true, 1.0)});
  EXPECT_EQ(db.find("k")->record, json({{"nan", nullptr}, {"inf", nullptr}}));
}

TEST(ResultsDb, FirstWriterWinsAndPutBatchCountsNewPoints) {
  TempDir dir;
  const std::string path = dir.file("results.sqlite");
  ResultsDb db(path, kIdentity);
  EXPECT_EQ(db.put_batch({}), 0);
  EXPECT_EQ(db.put_batch({point("a", 1, true, 10), point("b", 2, true, 20), point("a", 3, false, 0)}), 2);
  EXPECT_EQ(db.put_batch({point("b", 4, true, 40), point("c", 5, true, 50)}), 1);
  EXPECT_EQ(db.count(), 3);
  EXPECT_EQ(db.find("a"), point("a", 1, true, 10));
  EXPECT_EQ(db.find("b"), point("b", 2, true, 20));
  EXPECT_EQ(db.find("c"), point("c", 5, true, 50));
  // Another connection to the same file sees the points and does not overwrite them either.
  ResultsDb other(path, kIdentity);
  EXPECT_EQ(other.put_batch({point("a", 6, true, 60), point("d", 7, true, 70)}), 1);
  EXPECT_EQ(db.find("a"), point("a", 1, true, 10));
  EXPECT_EQ(db.find("d"), point("d", 7, true, 70));
}

TEST(ResultsDb, AllAndLoadKeysAreOrderedByKeyBytes) {
  TempDir dir;
  ResultsDb db(dir.file("results.sqlite"), kIdentity);
  // Byte order: ' ' (0x20) < 'B' (0x42) < 'a' (0x61); a prefix comes first; 'é' starts with 0xc3.
  db.put_batch({point("é", 1, true, 1), point("ab", 2, true, 2), point("a", 3, true, 3)});
  db.put_batch({point("a b", 4, false, 0), point("B", 5, true, 5)});
  const std::vector<std::string> expected = {"B", "a", "a b", "ab", "é"};
  EXPECT_EQ(db.load_keys(), expected);
  const std::vector<PointResult> all = db.all();
  ASSERT_EQ(all.size(), expected.size());
  const std::vector<int> records = {5, 3, 4, 2, 1};
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].key, expected[i]);
    EXPECT_EQ(all[i].record, records[i]);
  }
  std::vector<PointResult> visited;
  db.for_each([&visited](PointResult&& p) { visited.push_back(std::move(p)); });
  EXPECT_EQ(visited, all);
  // Summaries: the same order, the columns beside the record, no record.
  const std::vector<PointResult> summaries = db.load_summaries();
  const std::vector<PointResult> expected_summaries = {point("B", nullptr, true, 5), point("a", nullptr, true, 3),
                                                       point("a b", nullptr, false, 0), point("ab", nullptr, true, 2),
                                                       point("é", nullptr, true, 1)};
  EXPECT_EQ(summaries, expected_summaries);
}

TEST(ResultsDb, BestIsFeasibleByThroughputThenKey) {
  TempDir dir;
  ResultsDb db(dir.file("results.sqlite"), kIdentity);
  EXPECT_TRUE(db.best(3).empty());
  db.put_batch({point("a", "a", true, 10), point("b", "b", false, 0), point("c", "c", true, 30),
                point("d", "d", true, 10), point("e", "e", false, 50), point("f", "f", true, 0)});
  auto keys = [](const std::vector<PointResult>& points) {
    std::vector<std::string> result;
    for (const PointResult& p : points) result.push_back(p.key);
    return result;
  };
  EXPECT_EQ(keys(db.best(3)), (std::vector<std::string>{"c", "a", "d"}));
  EXPECT_EQ(keys(db.best(1)), (std::vector<std::string>{"c"}));
  EXPECT_EQ(keys(db.best(100)), (std::vector<std::string>{"c", "a", "d", "f"}));
  EXPECT_TRUE(db.best(0).empty());
  EXPECT_TRUE(db.best(-1).empty());
  EXPECT_EQ(db.best(1).front(), point("c", "c", true, 30));
}

TEST(ResultsDb, InvalidPointsThrowBeforeAnythingIsWritten) {
  TempDir dir;
  ResultsDb db(dir.file("results.sqlite"), kIdentity);
  db.put_batch({point("kept", 0, true, 1)});
  for (const double bad : {std::nan(""), HUGE_VAL, -HUGE_VAL, -1.0}) {
    EXPECT_THROW(db.put_batch({point("x", 1, true, 1), point("y", 2, true, bad)}), std::invalid_argument) << bad;
  }
  EXPECT_THROW(db.put_batch({point("x", 1, true, 1), point("", 2, true, 1)}), std::invalid_argument);
  json invalid_utf8 = std::string("\xff\xfe");
  EXPECT_THROW(db.put_batch({point("x", 1, true, 1), point("y", invalid_utf8, true, 1)}), json::exception);
  EXPECT_EQ(db.load_keys(), std::vector<std::string>{"kept"});
  // The connection is still usable.
  EXPECT_EQ(db.put_batch({point("x", 1, true, 1)}), 1);
}

TEST(ResultsDb, UsesWalAndMarksTheFile) {
  TempDir dir;
  const std::string path = dir.file("nested/dirs/results.sqlite");  // parent directories are created
  ResultsDb db(path, kIdentity);
  db.put_batch({point("k", 1, true, 1)});
  EXPECT_EQ(query_text(path, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(query_text(path, "PRAGMA application_id"), "1346918994");  // 'PHZR' = 0x50485a52
  EXPECT_EQ(query_text(path, "PRAGMA user_version"), "1");
  EXPECT_EQ(query_text(path, "SELECT value FROM meta WHERE name = 'run_identity'"), kIdentity);
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM points WHERE feasible = 1 AND throughput_samples_per_s = 1"), "1");
}

TEST(ResultsDb, AnotherRunsFileIsRejectedAndLeftAsItWas) {
  TempDir dir;
  const std::string path = dir.file("results.sqlite");
  { ResultsDb(path, "model=gpt3;mbs=1,2,4;cost=v3").put_batch({point("k", 1, true, 1)}); }
  // The identities first differ at the 20th character ('4' against '8').
  expect_rejected(path, "differs from this run's 'model=gpt3;mbs=1,2,8;cost=v3' at character 20",
                  "model=gpt3;mbs=1,2,8;cost=v3");
  expect_rejected(path, "another run", "model=gpt3;mbs=1,2,4;cost=v3;extra");  // a longer identity differs too
  expect_rejected(path, "another run", "model=gpt3");                          // and a shorter one
  // An identity with a line break still gives a one-line message.
  expect_rejected(path, "\\x0a", "model=gpt3;mbs=1,2,4\ncost=v3");
  // A long identity is shown around its first difference only.
  const std::string long_identity = "model=gpt3;mbs=1,2,4;cost=v3" + std::string(5000, 'x');
  try {
    ResultsDb db(path, long_identity);
    ADD_FAILURE() << "did not throw";
  } catch (const InputError& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u) << e.what();
    EXPECT_NE(std::string(e.what()).find("at character 29"), std::string::npos) << e.what();
  }

  ResultsDb db(path, "model=gpt3;mbs=1,2,4;cost=v3");  // its own run still opens it
  EXPECT_EQ(db.find("k"), point("k", 1, true, 1));
}

TEST(ResultsDb, StartOverDiscardsTheResultsAndTakesTheIdentity) {
  TempDir dir;
  const std::string path = dir.file("results.sqlite");
  { ResultsDb(path, "old run").put_batch({point("a", 1, true, 1), point("b", 2, true, 2)}); }
  {
    ResultsDb db(path, "new run", ResultsDb::OpenMode::kStartOver);
    EXPECT_EQ(db.count(), 0);
    db.put_batch({point("c", 3, true, 3)});
  }
  expect_rejected(path, "another run", "old run");
  {
    ResultsDb db(path, "new run");
    EXPECT_EQ(db.load_keys(), std::vector<std::string>{"c"});
  }
  // Starting over a new file, or a file of the same run, leaves an empty file of this run.
  {
    ResultsDb db(path, "new run", ResultsDb::OpenMode::kStartOver);
    EXPECT_EQ(db.count(), 0);
  }
  ResultsDb fresh(dir.file("fresh.sqlite"), "run", ResultsDb::OpenMode::kStartOver);
  EXPECT_EQ(fresh.count(), 0);
  EXPECT_EQ(query_text(dir.file("fresh.sqlite"), "SELECT value FROM meta"), "run");
}

TEST(ResultsDb, AWriterStopsWhenAnotherRunStartsTheFileOver) {
  TempDir dir;
  const std::string path = dir.file("results.sqlite");
  ResultsDb first(path, "first run");
  first.put_batch({point("a", 1, true, 1)});
  ResultsDb second(path, "second run", ResultsDb::OpenMode::kStartOver);
  try {
    first.put_batch({point("b", 2, true, 2)});
    ADD_FAILURE() << "writing into a file another run started over did not throw";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("started this results file over"), std::string::npos) << e.what();
  }
  EXPECT_EQ(second.count(), 0);
  EXPECT_EQ(second.put_batch({point("c", 3, true, 3)}), 1);
  EXPECT_EQ(second.load_keys(), std::vector<std::string>{"c"});
}

TEST(ResultsDb, ForeignFilesAreRejectedAndLeftAsTheyWere) {
  TempDir dir;
  // Another application's database (rollback journal): no WAL or journal appears beside it either.
  const std::string other = dir.file("other-app.db");
  sql(other,
      "PRAGMA application_id=1234; CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT);"
      "INSERT INTO things (name) VALUES ('x');");
  expect_rejected(other, "not a phaze results file");
  expect_rejected(other, "not a phaze results file", kIdentity, ResultsDb::OpenMode::kStartOver);
  EXPECT_FALSE(fs::exists(other + "-wal"));
  EXPECT_FALSE(fs::exists(other + "-shm"));
  EXPECT_EQ(query_text(other, "PRAGMA journal_mode"), "delete");

  // A plain SQLite file without an application_id but with tables of its own.
  const std::string plain = dir.file("plain.db");
  sql(plain, "CREATE TABLE points (key TEXT, record TEXT);");
  expect_rejected(plain, "not a phaze results file");

  // phaze's own estimate cache is not a results file.
  const std::string cache = dir.file("estimates.sqlite");
  { phaze::cost::EstimateCache(cache).store("k", {1, 2}); }
  expect_rejected(cache, "not a phaze results file but a phaze estimate cache");

  // A WAL-mode database whose last writes are still in its WAL: rejecting it must not checkpoint them into
  // the main file (which closing the last connection normally does).
  const std::string wal = dir.file("wal-app.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(wal.c_str(), &db), SQLITE_OK);
    sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    ASSERT_EQ(sqlite3_exec(db,
                           "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; CREATE TABLE t (x);"
                           "INSERT INTO t VALUES (1), (2), (3);",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  ASSERT_GT(fs::file_size(wal + "-wal"), 0u);
  expect_rejected(wal, "not a phaze results file");
  EXPECT_EQ(query_text(wal, "SELECT sum(x) FROM t"), "6");
}

TEST(ResultsDb, GarbageAndCorruptFilesAreRejectedAndLeftAsTheyWere) {
  TempDir dir;
  const std::string random_path = dir.file("random.bin");
  {
    std::mt19937 rng(42);
    std::ofstream out(random_path, std::ios::binary);
    for (int i = 0; i < 8192; ++i) out.put(static_cast<char>(rng() & 0xff));
  }
  expect_rejected(random_path, "corrupt or not an SQLite file");

  const std::string text_path = dir.file("notes.txt");
  std::ofstream(text_path) << "this is a text file, not a database\n";
  expect_rejected(text_path, "corrupt or not an SQLite file");
  expect_rejected(text_path, "corrupt or not an SQLite file", kIdentity, ResultsDb::OpenMode::kStartOver);

  // A results file with enough points for many pages, then damaged in two ways.
  const std::string good = dir.file("good.sqlite");
  {
    ResultsDb db(good, kIdentity);
    std::vector<PointResult> points;
    for (int i = 0; i < 2000; ++i) points.push_back(point("key " + std::to_string(i), std::string(200, 'r'), true, i));
    db.put_batch(points);
  }
  ASSERT_FALSE(fs::exists(good + "-wal"));  // checkpointed into the main file at close
  const std::string bytes = *file_bytes(good);
  const size_t page = 4096;
  ASSERT_GT(bytes.size(), 40 * page);

  // Pages in the middle overwritten with garbage (a disk error, a stray write).
  const std::string damaged = dir.file("damaged.sqlite");
  {
    std::string copy = bytes;
    std::mt19937 rng(7);
    for (size_t i = 20 * page; i < 24 * page; ++i) copy[i] = static_cast<char>(rng() & 0xff);
    std::ofstream(damaged, std::ios::binary) << copy;
  }
  expect_rejected(damaged, "corrupt");
  expect_rejected(damaged, "corrupt", kIdentity, ResultsDb::OpenMode::kStartOver);

  // Cut in half (a copy that did not finish).
  const std::string truncated = dir.file("truncated.sqlite");
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  expect_rejected(truncated, "corrupt");

  // A directory where the file should be.
  fs::create_directories(dir.file("a-directory"));
  EXPECT_THROW(ResultsDb(dir.file("a-directory"), kIdentity), InputError);

  // The undamaged file still opens.
  ResultsDb db(good, kIdentity);
  EXPECT_EQ(db.count(), 2000);
}

// A file marked as a phaze results file whose tables were altered could drop points without an error
// (INSERT OR IGNORE skips a row that breaks a changed constraint) or keep numbers the schema forbids.
TEST(ResultsDb, AlteredSchemaIsRejectedAndLeftAsItWas) {
  TempDir dir;
  const std::string path = dir.file("results.sqlite");
  { ResultsDb(path, kIdentity).put_batch({point("k", 1, true, 1)}); }
  // The throughput check dropped: the table is rebuilt without it, under the same name.
  sql(path,
      "PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql = replace(sql, "
      "'CHECK (throughput_samples_per_s >= 0)', '') WHERE name = 'points'; PRAGMA writable_schema=OFF;");
  expect_rejected(path, "the table 'points' differs from phaze's");
  expect_rejected(path, "the table 'points' differs", kIdentity, ResultsDb::OpenMode::kStartOver);

  const std::string trigger = dir.file("trigger.sqlite");
  { ResultsDb(trigger, kIdentity).put_batch({point("k", 1, true, 1)}); }
  sql(trigger, "CREATE TRIGGER skip BEFORE INSERT ON points BEGIN SELECT RAISE(IGNORE); END;");
  expect_rejected(trigger, "the trigger 'skip' is not phaze's");

  const std::string no_index = dir.file("no-index.sqlite");
  { ResultsDb(no_index, kIdentity).put_batch({point("k", 1, true, 1)}); }
  sql(no_index, "DROP INDEX points_by_throughput;");
  expect_rejected(no_index, "the index 'points_by_throughput' is missing");
}

TEST(ResultsDb, RecordThatIsNotJsonIsAnInputError) {
  TempDir dir;
  const std::string path = dir.file("results.sqlite");
  { ResultsDb(path, kIdentity).put_batch({point("k", 1, true, 1)}); }
  sql(path, "UPDATE points SET record = '{not json' WHERE key = 'k'");
  ResultsDb db(path, kIdentity);
  try {
    db.find("k");
    ADD_FAILURE() << "did not throw";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'k' is not valid JSON"), std::string::npos) << e.what();
  }
  EXPECT_THROW(db.all(), InputError);
}

TEST(ResultsDb, NewerAndUnknownSchemaVersionsAreRejected) {
  TempDir dir;
  const std::string path = dir.file("results.sqlite");
  { ResultsDb(path, kIdentity).put_batch({point("k", 1, true, 1)}); }
  sql(path, "PRAGMA user_version=2;");
  expect_rejected(path, "schema version 2 is newer than the supported version 1");
  expect_rejected(path, "schema version 2 is newer", kIdentity, ResultsDb::OpenMode::kStartOver);
  sql(path, "PRAGMA user_version=0;");
  expect_rejected(path, "unknown schema version 0");
}

TEST(ResultsDb, BadPathsAndIdentities) {
  TempDir dir;
  const std::string file = dir.file("regular-file");
  std::ofstream(file) << "x";
  expect_rejected(file + "/results.sqlite", "cannot create directory");
  EXPECT_THROW(ResultsDb("", kIdentity), InputError);
  EXPECT_THROW(ResultsDb(dir.file("results.sqlite"), ""), std::invalid_argument);
}

// --- Processes ---------------------------------------------------------------------------------------------

constexpr int kPointsPerBatch = 25;

/// The i-th point of batch `batch`: its key, record and columns all derive from (batch, i), so that any
/// stored point can be checked on its own.
PointResult batch_point(int64_t batch, int i) {
  return point(fmt::format("batch {:06d} point {:02d}", batch, i),
               {{"batch", batch},
                {"i", i},
                {"design", {{"num_tc", 1 + i}, {"tc_width", 128}}},
                {"pad", std::string(100 + i, static_cast<char>('a' + i % 26))}},
               i % 3 != 0, i % 3 != 0 ? 1000.0 * static_cast<double>(batch) + i + 0.25 : 0.0);
}

std::vector<PointResult> batch(int64_t id) {
  std::vector<PointResult> points;
  for (int i = 0; i < kPointsPerBatch; ++i) points.push_back(batch_point(id, i));
  return points;
}

/// Checks every stored point against batch_point and that the stored batches are complete and numbered
/// 0, 1, ...; returns how many there are.
int64_t check_batches(const std::string& path) {
  EXPECT_EQ(query_text(path, "PRAGMA integrity_check"), "ok");
  ResultsDb db(path, kIdentity);
  std::map<int64_t, int> points_per_batch;
  for (const PointResult& stored : db.all()) {
    const int64_t id = stored.record.at("batch").get<int64_t>();
    const int i = stored.record.at("i").get<int>();
    EXPECT_EQ(stored, batch_point(id, i)) << stored.key;
    ++points_per_batch[id];
  }
  int64_t expected_id = 0;
  for (const auto& [id, points] : points_per_batch) {
    EXPECT_EQ(id, expected_id++) << "batches are not numbered 0, 1, ...";
    EXPECT_EQ(points, kPointsPerBatch) << "batch " << id << " is incomplete";
  }
  return static_cast<int64_t>(points_per_batch.size());
}

TEST(ResultsDb, KilledWritersLeaveExactlyTheCommittedBatches) {
  TempDir dir;
  const std::string path = dir.file("results.sqlite");
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<int> delay_us(0, 30000);
  int64_t stored = 0;
  std::set<int64_t> reported;  // batches whose put_batch returned, as the writers said before they died
  for (int round = 0; round < 10; ++round) {
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // The writer resumes after the batches already stored and reports each batch once put_batch returns.
      ::close(pipe_fds[0]);
      try {
        ResultsDb db(path, kIdentity);
        for (int64_t id = db.count() / kPointsPerBatch; id < 1000000; ++id) {
          db.put_batch(batch(id));
          if (::write(pipe_fds[1], &id, sizeof id) != sizeof id) ::_exit(3);
        }
      } catch (...) {
        ::_exit(1);
      }
      ::_exit(0);  // the parent kills it long before
    }
    ::close(pipe_fds[1]);
    std::vector<int64_t> this_round;
    int64_t id = 0;
    ssize_t n = 0;
    // Every other round the delay starts once the writer has committed its first batch, so that some
    // rounds kill a writer in the middle of its work however slow the machine (a sanitized build is
    // several times slower); the other rounds may also kill it while it opens the file.
    if (round % 2 == 1) {
      ASSERT_EQ(::read(pipe_fds[0], &id, sizeof id), static_cast<ssize_t>(sizeof id)) << "the writer died early";
      this_round.push_back(id);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the writer ended by itself: " << status;

    while ((n = ::read(pipe_fds[0], &id, sizeof id)) == sizeof id) this_round.push_back(id);
    ::close(pipe_fds[0]);
    ASSERT_EQ(n, 0) << std::strerror(errno);

    const int64_t before = stored;
    stored = check_batches(path);
    // Every reported batch is stored; at most one more (committed, killed before reporting) is.
    for (const int64_t reported_id : this_round) {
      EXPECT_LT(reported_id, stored) << "round " << round;
      EXPECT_TRUE(reported.insert(reported_id).second) << "batch " << reported_id << " written twice";
    }
    EXPECT_GE(stored, before + static_cast<int64_t>(this_round.size())) << "round " << round;
    EXPECT_LE(stored, before + static_cast<int64_t>(this_round.size()) + 1) << "round " << round;
  }
  EXPECT_GT(stored, 0) << "no writer got as far as one batch: the test checked nothing";
}

TEST(ResultsDb, ThreadsShareOneConnection) {
  TempDir dir;
  const std::string path = dir.file("results.sqlite");
  {
    ResultsDb db(path, kIdentity);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&db, t] {
        for (int id = 10 * t; id < 10 * t + 10; ++id) {
          EXPECT_EQ(db.put_batch(batch(id)), kPointsPerBatch);
          EXPECT_EQ(db.find(batch_point(id, 0).key), batch_point(id, 0));
          EXPECT_GE(db.count(), (id - 10 * t + 1) * kPointsPerBatch);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  EXPECT_EQ(check_batches(path), 40);
}

TEST(ResultsDb, TwoProcessesWriteConcurrently) {
  TempDir dir;
  const std::string path = dir.file("shared/results.sqlite");
  // Writer 1 writes batches [0, 40), writer 2 batches [20, 60): the middle twenty are written by both.
  constexpr int kBatches = 40;
  constexpr int kOverlap = 20;
  std::vector<pid_t> children;
  for (int writer = 0; writer < 2; ++writer) {
    children.push_back(start_child([&] {
      ResultsDb db(path, kIdentity);  // both create the file: schema creation races too
      const int begin = writer * (kBatches - kOverlap);
      for (int id = begin; id < begin + kBatches; ++id) {
        db.put_batch(batch(id));
        if (!db.find(batch_point(id, kPointsPerBatch - 1).key)) throw std::runtime_error("a stored point is missing");
      }
    }));
    ASSERT_GE(children.back(), 0);
  }
  EXPECT_EQ(wait_for_exit_codes(children), (std::vector<int>{0, 0}));
  EXPECT_EQ(check_batches(path), 2 * kBatches - kOverlap);
  EXPECT_EQ(ResultsDb(path, kIdentity).count(), (2 * kBatches - kOverlap) * kPointsPerBatch);
}

TEST(ResultsDb, OfTwoRunsCreatingOneFileOnlyOneWins) {
  TempDir dir;
  for (int round = 0; round < 5; ++round) {
    const std::string path = dir.file("results-" + std::to_string(round) + ".sqlite");
    std::vector<pid_t> children;
    for (int writer = 0; writer < 2; ++writer) {
      children.push_back(start_child([&] {
        ResultsDb db(path, "run " + std::to_string(writer));
        db.put_batch({point("written by run " + std::to_string(writer), writer, true, 1)});
      }));
      ASSERT_GE(children.back(), 0);
    }
    // One run creates the file; the other finds another run's identity there (bad input, status 2).
    const std::vector<int> codes = wait_for_exit_codes(children);
    EXPECT_EQ(std::multiset<int>(codes.begin(), codes.end()), (std::multiset<int>{0, 2})) << "round " << round;
    const std::string winner = query_text(path, "SELECT value FROM meta WHERE name = 'run_identity'");
    EXPECT_EQ(query_text(path, "SELECT key FROM points"), "written by " + winner);
    EXPECT_EQ(query_text(path, "SELECT count(*) FROM points"), "1");
  }
}

}  // namespace
