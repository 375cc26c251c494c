// Persistent estimate cache: exact round trips, batch lookups, persistence, first writer wins, WAL mode,
// one-line InputErrors naming the file for foreign, garbage, newer and unwritable files, the default
// location, and two processes writing the same file at once.

#include "cost/estimate_cache.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "support/child_process.h"
#include "support/sqlite_script.h"
#include "support/temp_dir.h"
#include "util/input_error.h"

namespace {

namespace fs = std::filesystem;
using phaze::InputError;
using phaze::cost::CachedEstimate;
using phaze::cost::EstimateCache;

using phaze_test::TempDir;

/// Sets (or unsets, for nullptr) an environment variable and restores the old value at the end.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

using phaze_test::query_text;
using phaze_test::sql;

/// Expects constructing a cache at `path` to throw InputError whose message names the path and contains
/// `fragment`.
void expect_open_error(const std::string& path, const std::string& fragment) {
  try {
    EstimateCache cache(path);
    ADD_FAILURE() << "opening " << path << " did not throw";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

std::string key(int i) {
  return "gemm m=" + std::to_string(i) + " n=1024 k=4096 b=1 fwd core=tc128x128 v3";
}

CachedEstimate value(int i, int writer = 0) {
  return {1e-6 * i + 1.0 / 3.0 + writer, 0.1 * i + std::sqrt(2.0) + 1000.0 * writer};
}

TEST(EstimateCache, RoundTripsExactDoubles) {
  TempDir dir;
  EstimateCache cache(dir.file("cache.sqlite"));
  const std::vector<CachedEstimate> values = {
      {1.0 / 3.0, std::sqrt(2.0)},
      {std::numeric_limits<double>::min(), std::numeric_limits<double>::max()},
      {std::numeric_limits<double>::denorm_min(), 6.02214076e23},
      {0.0, 1e-300},
      {12345.0, 3.0},  // integral values come back as doubles
      {std::nextafter(1.0, 2.0), std::numeric_limits<double>::infinity()},
  };
  for (size_t i = 0; i < values.size(); ++i) cache.store(std::string("k").append(std::to_string(i)), values[i]);
  for (size_t i = 0; i < values.size(); ++i) {
    const auto found = cache.find(std::string("k").append(std::to_string(i)));
    ASSERT_TRUE(found.has_value()) << i;
    EXPECT_EQ(std::memcmp(&found->latency_s, &values[i].latency_s, sizeof(double)), 0) << i;
    EXPECT_EQ(std::memcmp(&found->energy_j, &values[i].energy_j, sizeof(double)), 0) << i;
  }
  EXPECT_EQ(cache.size(), static_cast<int64_t>(values.size()));
  EXPECT_EQ(cache.path(), dir.file("cache.sqlite"));
}

TEST(EstimateCache, MissingKeyIsNullopt) {
  TempDir dir;
  EstimateCache cache(dir.file("cache.sqlite"));
  EXPECT_FALSE(cache.find("absent").has_value());
  cache.store("present", {1, 2});
  EXPECT_FALSE(cache.find("absent").has_value());
  EXPECT_FALSE(cache.find("").has_value());
  EXPECT_FALSE(cache.find("presen").has_value());
  EXPECT_EQ(cache.find("present"), (CachedEstimate{1, 2}));
  EXPECT_EQ(cache.size(), 1);
}

TEST(EstimateCache, StoreManyFindMany) {
  TempDir dir;
  EstimateCache cache(dir.file("cache.sqlite"));
  constexpr int n = 10000;
  std::vector<std::pair<std::string, CachedEstimate>> entries;
  for (int i = 0; i < n; ++i) entries.emplace_back(key(i), value(i));

  cache.store_many(entries);
  EXPECT_EQ(cache.size(), n);

  // Every stored key, interleaved with missing ones, and the empty batch.
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) {
    keys.push_back(key(i));
    keys.push_back("missing " + std::to_string(i));
  }
  const auto found = cache.find_many(keys);
  ASSERT_EQ(found.size(), keys.size());
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(found[2 * i].has_value()) << i;
    EXPECT_EQ(*found[2 * i], value(i)) << i;
    EXPECT_FALSE(found[2 * i + 1].has_value()) << i;
  }
  EXPECT_TRUE(cache.find_many({}).empty());
  cache.store_many({});
  EXPECT_EQ(cache.size(), n);
}

TEST(EstimateCache, FindManyInShuffledOrder100kKeys) {
  TempDir dir;
  EstimateCache cache(dir.file("cache.sqlite"));
  constexpr int n = 100000;
  std::vector<std::pair<std::string, CachedEstimate>> entries;
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) {
    entries.emplace_back(key(i), value(i));
    keys.push_back(key((i * 7919) % n));  // shuffled order
  }
  cache.store_many(entries);
  const auto found = cache.find_many(keys);
  for (int i = 0; i < n; ++i) ASSERT_EQ(found[i], value((i * 7919) % n)) << i;
}

TEST(EstimateCache, PersistsAcrossReopen) {
  TempDir dir;
  const std::string path = dir.file("nested/dirs/cache.sqlite");  // parent directories are created
  {
    EstimateCache cache(path);
    cache.store("a", {1.5, 2.5});
    cache.store_many({{"b", {3.5, 4.5}}, {"c", {5.5, 6.5}}});
  }
  EXPECT_TRUE(fs::is_regular_file(path));
  EstimateCache cache(path);
  EXPECT_EQ(cache.size(), 3);
  EXPECT_EQ(cache.find("a"), (CachedEstimate{1.5, 2.5}));
  EXPECT_EQ(cache.find("b"), (CachedEstimate{3.5, 4.5}));
  EXPECT_EQ(cache.find("c"), (CachedEstimate{5.5, 6.5}));
}

TEST(EstimateCache, FirstWriterWins) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  {
    EstimateCache cache(path);
    cache.store("k", {1, 2});
    cache.store("k", {3, 4});
    EXPECT_EQ(cache.find("k"), (CachedEstimate{1, 2}));
    cache.store_many({{"k", {5, 6}}, {"j", {7, 8}}, {"j", {9, 10}}});
    EXPECT_EQ(cache.find("k"), (CachedEstimate{1, 2}));
    EXPECT_EQ(cache.find("j"), (CachedEstimate{7, 8}));
    EXPECT_EQ(cache.size(), 2);
  }
  // A second connection does not overwrite either.
  EstimateCache first(path);
  EstimateCache second(path);
  second.store("k", {11, 12});
  EXPECT_EQ(first.find("k"), (CachedEstimate{1, 2}));
  second.store("new", {13, 14});
  EXPECT_EQ(first.find("new"), (CachedEstimate{13, 14}));
}

TEST(EstimateCache, UsesWalAndMarksTheFile) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  EstimateCache cache(path);
  cache.store("k", {1, 2});
  EXPECT_EQ(query_text(path, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(query_text(path, "PRAGMA user_version"), "1");
  EXPECT_NE(query_text(path, "PRAGMA application_id"), "0");
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM estimates"), "1");
}

TEST(EstimateCache, ForeignSqliteFileIsRejected) {
  TempDir dir;
  const std::string path = dir.file("other-app.db");
  sql(path,
      "PRAGMA application_id=1234; CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT);"
      "INSERT INTO things (name) VALUES ('x');");
  expect_open_error(path, "not a phaze estimate cache");
  // Left untouched: still the other app's rollback-journal database with its data.
  EXPECT_EQ(query_text(path, "PRAGMA journal_mode"), "delete");
  EXPECT_EQ(query_text(path, "SELECT name FROM things"), "x");

  // A plain SQLite file without an application_id but with tables of its own is foreign too.
  const std::string plain = dir.file("plain.db");
  sql(plain, "CREATE TABLE estimates (key TEXT, value REAL);");
  expect_open_error(plain, "not a phaze estimate cache");
}

TEST(EstimateCache, GarbageFileIsRejected) {
  TempDir dir;
  const std::string random_path = dir.file("random.bin");
  {
    std::mt19937 rng(42);
    std::ofstream out(random_path, std::ios::binary);
    for (int i = 0; i < 8192; ++i) out.put(static_cast<char>(rng() & 0xff));
  }
  expect_open_error(random_path, "corrupt or not an SQLite file");

  const std::string text_path = dir.file("notes.txt");
  {
    std::ofstream out(text_path);
    out << "this is a text file, not a database\n";
  }
  expect_open_error(text_path, "corrupt or not an SQLite file");
  std::ifstream in(text_path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "this is a text file, not a database");  // left untouched

  // A directory where the file should be.
  fs::create_directories(dir.file("a-directory"));
  EXPECT_THROW(EstimateCache cache(dir.file("a-directory")), InputError);
}

TEST(EstimateCache, NewerSchemaVersionIsRejected) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  { EstimateCache cache(path); }
  sql(path, "PRAGMA user_version=2;");
  expect_open_error(path, "schema version 2");
}

// A file marked as a phaze cache whose table was altered would drop stores without an error: INSERT OR
// IGNORE skips a row that breaks a constraint, and a trigger can skip any row. Each is refused at open.
TEST(EstimateCache, AlteredSchemaIsRejected) {
  TempDir dir;
  const std::string marks = "PRAGMA application_id=1346918981; PRAGMA user_version=1;";  // 'PHZE' = 0x50485a45
  // One changed byte of a real cache (a comma after `key`, found by the fuzzer): `key` is an ordinary column
  // and the primary key is a NOT NULL column named TEXT that no insert fills.
  const std::string comma = dir.file("comma.sqlite");
  sql(comma, marks +
                 "CREATE TABLE estimates (key,TEXT PRIMARY KEY NOT NULL, latency_s REAL NOT NULL, energy_j REAL "
                 "NOT NULL) WITHOUT ROWID;");
  expect_open_error(comma, "the table 'estimates' differs from phaze's");

  const std::string trigger = dir.file("trigger.sqlite");
  { EstimateCache(trigger).store("k", {1, 2}); }
  sql(trigger, "CREATE TRIGGER skip BEFORE INSERT ON estimates BEGIN SELECT RAISE(IGNORE); END;");
  expect_open_error(trigger, "the trigger 'skip' is not phaze's");

  const std::string missing = dir.file("missing.sqlite");
  { EstimateCache(missing).store("k", {1, 2}); }
  sql(missing, "DROP TABLE estimates;");
  expect_open_error(missing, "the table 'estimates' is missing");

  // An untouched cache still opens and keeps its entry.
  const std::string good = dir.file("good.sqlite");
  { EstimateCache(good).store("k", {1, 2}); }
  EXPECT_EQ(EstimateCache(good).find("k"), (CachedEstimate{1, 2}));
}

// A damaged page is found when the cache is opened: SQLite alone would read past it, and could write a new
// entry over an old one.
TEST(EstimateCache, DamagedPagesAreFoundAtOpen) {
  TempDir dir;
  const std::string good = dir.file("good.sqlite");
  {
    EstimateCache cache(good);
    std::vector<std::pair<std::string, CachedEstimate>> entries;
    for (int i = 0; i < 3000; ++i) entries.emplace_back(key(i), value(i));
    cache.store_many(entries);
  }
  ASSERT_FALSE(fs::exists(good + "-wal"));  // checkpointed into the main file at close
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t page = 4096;
  ASSERT_GT(bytes.size(), 40 * page);
  // One page's cell pointers moved past its content (a stray write), the rest of the file intact.
  const std::string damaged = dir.file("damaged.sqlite");
  std::string copy = bytes;
  for (size_t i = 20 * page + 8; i < 20 * page + 40; ++i) copy[i] = static_cast<char>(0xff);
  std::ofstream(damaged, std::ios::binary) << copy;
  expect_open_error(damaged, "corrupt estimate cache (integrity check:");
  EXPECT_EQ(EstimateCache(good).size(), 3000);
}

// Entries no estimate can have (negative, text) are refused when read, not returned as wrong numbers.
TEST(EstimateCache, DamagedEntriesAreRefused) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  {
    EstimateCache cache(path);
    cache.store("good", {1e-6, 2e-9});
  }
  sql(path,
      "INSERT INTO estimates VALUES ('negative', -1.0, 0.0); INSERT INTO estimates VALUES ('text', 'abc', 0.0);"
      "INSERT INTO estimates VALUES ('energy', 1.0, -4e-151);");
  EstimateCache cache(path);
  EXPECT_EQ(cache.find("good"), (CachedEstimate{1e-6, 2e-9}));
  for (const char* key : {"negative", "text", "energy"}) {
    try {
      (void)cache.find(key);
      ADD_FAILURE() << key << ": no error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((void)cache.find_many({"good", "text"}), InputError);
}

TEST(EstimateCache, UnwritablePathIsRejected) {
  TempDir dir;
  const std::string file = dir.file("regular-file");
  std::ofstream(file) << "x";
  expect_open_error(file + "/cache.sqlite", "cannot create directory");
  expect_open_error(file + "/sub/cache.sqlite", "cannot create directory");
  expect_open_error("", "");
}

TEST(EstimateCache, ReadOnlyDirectoryIsRejected) {
  if (::geteuid() == 0) GTEST_SKIP() << "root can write anywhere";
  TempDir dir;
  const fs::path locked = dir.path() / "locked";
  fs::create_directories(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  expect_open_error((locked / "cache.sqlite").string(), "cannot open estimate cache");
  expect_open_error((locked / "sub" / "cache.sqlite").string(), "cannot create directory");
  fs::permissions(locked, fs::perms::owner_all);
}

TEST(EstimateCache, DefaultPathHonoursXdgCacheHome) {
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/tmp/xdg-cache");
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(EstimateCache::default_path(), "/tmp/xdg-cache/phaze/estimates.sqlite");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "relative/cache");
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(EstimateCache::default_path(), "/home/someone/.cache/phaze/estimates.sqlite");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "");
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(EstimateCache::default_path(), "/home/someone/.cache/phaze/estimates.sqlite");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(EstimateCache::default_path(), "/home/someone/.cache/phaze/estimates.sqlite");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", nullptr);
    try {
      EstimateCache::default_path();
      ADD_FAILURE() << "default_path() without HOME did not throw";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--cache"), std::string::npos) << e.what();
    }
  }
}

TEST(EstimateCache, TwoProcessesWriteConcurrently) {
  TempDir dir;
  const std::string path = dir.file("shared/cache.sqlite");
  constexpr int per_child = 6000;
  constexpr int overlap = 3000;  // child 1 writes [0, 6000), child 2 writes [3000, 9000)
  constexpr int total = 2 * per_child - overlap;

  std::vector<pid_t> children;
  for (int writer = 1; writer <= 2; ++writer) {
    children.push_back(phaze_test::start_child([&] {
      // Both children create the file: schema creation races too.
      EstimateCache cache(path);
      const int begin = (writer - 1) * (per_child - overlap);
      for (int batch = begin; batch < begin + per_child; batch += 250) {
        std::vector<std::pair<std::string, CachedEstimate>> entries;
        for (int i = batch; i < batch + 250; ++i) entries.emplace_back(key(i), value(i, writer));
        cache.store_many(entries);
        std::vector<std::string> keys;
        for (int i = batch; i < batch + 250; ++i) keys.push_back(key(i));
        for (const auto& found : cache.find_many(keys)) {
          if (!found) throw std::runtime_error("a stored key is missing");
        }
      }
    }));
    ASSERT_GE(children.back(), 0);
  }
  EXPECT_EQ(phaze_test::wait_for_exit_codes(children), (std::vector<int>{0, 0}));

  EstimateCache cache(path);
  EXPECT_EQ(cache.size(), total);
  EXPECT_EQ(query_text(path, "SELECT count(DISTINCT key) FROM estimates"), std::to_string(total));
  std::vector<std::string> keys;
  for (int i = 0; i < total; ++i) keys.push_back(key(i));
  const auto found = cache.find_many(keys);
  for (int i = 0; i < total; ++i) {
    ASSERT_TRUE(found[i].has_value()) << i;
    if (i < overlap) {
      EXPECT_EQ(*found[i], value(i, 1)) << i;
    } else if (i >= per_child) {
      EXPECT_EQ(*found[i], value(i, 2)) << i;
    } else {
      // Written by both: one writer's pair, never a mix.
      EXPECT_TRUE(*found[i] == value(i, 1) || *found[i] == value(i, 2)) << i;
    }
  }
}

}  // namespace
