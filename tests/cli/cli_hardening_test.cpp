// Bad and extreme input as a user or a script sends it: every case exits with status 2 and one line naming
// the option or file, the field and the value as given; none crashes, hangs or answers with a wrapped number.
// Each case here once gave a wrong answer with exit 0, an abort, a hang or a message naming another value.

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/run_phaze.h"
#include "support/temp_dir.h"

namespace {

using nlohmann::json;
using phaze_test::expect_input_error;
using phaze_test::quoted;
using phaze_test::run_phaze;
using phaze_test::RunResult;
using phaze_test::TempDir;

const std::string kData = PHAZE_TEST_DATA;
const std::string kTinyModel = kData + "/hf/tiny-gpt2/config.json";
/// A search over one design of the tiny model: a second or less.
const std::string kTinySearch =
    fmt::format("search --model '{}' --tc 1 --vc 1 --width 8 --depth 8 --glb-mib 2 --hbm 32", kTinyModel);

json llama_config() {
  std::ifstream in(kData + "/hf/llama-2-7b-hf/config.json");
  return json::parse(in);
}

// The co-search's chip and training settings: a value outside their choices or bounds exits 2 naming the option.
TEST(CliHardening, SearchSettingsOutsideTheirChoicesExitTwo) {
  const std::string search = "search --model gpt2-xl --tc 8 --vc 2 --width 128 --depth 128 --glb-mib 128";
  expect_input_error(run_phaze(search + " --attention-backend flash"), "--attention-backend");
  expect_input_error(run_phaze(search + " --ranking largest"), "--ranking");
  expect_input_error(run_phaze(search + " --optimizer adamw"), "--optimizer");
  expect_input_error(run_phaze(search + " --core-overhead-um2 5000"), "--core-overhead-um2");
  expect_input_error(run_phaze(search + " --core-overhead-um2 5000,-1"), "--core-overhead-um2");
  expect_input_error(run_phaze(search + " --core-overhead-um2 5000,2e12"), "--core-overhead-um2");
  expect_input_error(run_phaze("model show gpt2-xl --attention-backend flash"), "--attention-backend");
  expect_input_error(run_phaze("evaluate --arch tpuv4-like --model gpt2-xl --optimizer sgd --execution megatron"),
                     "--optimizer sgd");
}

// Products of bounded sizes that leave 64 bits printed negative bytes and FLOPs with exit 0.
TEST(CliHardening, SizesBeyondTheirBoundsOrProductsBeyond64BitsExitTwo) {
  expect_input_error(run_phaze("model show gpt3-175b --mbs 1000000000000"), "--mbs '1000000000000'");
  expect_input_error(run_phaze("model show llama2-7b --seq 100000000"), "--seq '100000000'");
  expect_input_error(run_phaze("estimate --model gpt2-xl --mbs 9223372036854775807"), "--mbs '9223372036854775807'");
  expect_input_error(run_phaze("estimate --model gpt2-xl --mbs 100000000000"), "--mbs");
  // Each size within its bound, but the attention scores (seq² · mbs · heads) exceed 2^63 − 1.
  const RunResult product = run_phaze("model show llama2-7b --seq 67108864 --mbs 64 --json");
  expect_input_error(product, "2^63");
  EXPECT_TRUE(product.out.empty()) << product.out.substr(0, 500);

  TempDir dir;
  json wide = llama_config();
  wide["hidden_size"] = 1000000000;
  expect_input_error(run_phaze("model show " + quoted(dir.write("wide.json", wide.dump()))), "hidden_size");
  json vocab = llama_config();
  vocab["vocab_size"] = int64_t{1} << 62;
  expect_input_error(run_phaze("model show " + quoted(dir.write("vocab.json", vocab.dump()))), "vocab_size");
  json deep = llama_config();
  deep["num_hidden_layers"] = 1000000;
  expect_input_error(run_phaze("model show --json " + quoted(dir.write("deep.json", deep.dump()))),
                     "num_hidden_layers");
}

TEST(CliHardening, NumbersJsonCannotHoldNameTheFileKeyAndValue) {
  TempDir dir;
  std::string config = llama_config().dump();
  const std::string eps = "\"rms_norm_eps\":1e-05";
  ASSERT_NE(config.find(eps), std::string::npos) << config;
  config.replace(config.find(eps), eps.size(), "\"rms_norm_eps\":1e999");
  const std::string config_path = dir.write("huge.json", config);
  const RunResult r = run_phaze("model show " + quoted(config_path));
  expect_input_error(r, "rms_norm_eps");
  EXPECT_NE(r.err.find(config_path), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1e999"), std::string::npos) << r.err;

  const RunResult arch = run_phaze("arch show --json tpuv4-like");
  ASSERT_EQ(arch.status, 0) << arch.err;
  std::string text = arch.out;
  const std::string key = "\"clock_hz\":";
  ASSERT_NE(text.find(key), std::string::npos) << text;
  text.insert(text.find(key) + key.size(), " 1e999, \"ignored\":");
  const std::string arch_path = dir.write("arch.json", text);
  const RunResult a = run_phaze("arch show " + quoted(arch_path));
  expect_input_error(a, "clock_hz");
  EXPECT_NE(a.err.find(arch_path), std::string::npos) << a.err;
  EXPECT_NE(a.err.find("1e999"), std::string::npos) << a.err;
}

TEST(CliHardening, DuplicateKeysAndNonPositiveEpsilonAreRefused) {
  TempDir dir;
  std::string twice = llama_config().dump();
  twice.insert(1, "\"hidden_size\":8192,");
  expect_input_error(run_phaze("model show " + quoted(dir.write("twice.json", twice))), "hidden_size");
  for (double value : {0.0, -1e-6}) {
    json c = llama_config();
    c["rms_norm_eps"] = value;
    expect_input_error(run_phaze("model show " + quoted(dir.write("eps.json", c.dump()))), "rms_norm_eps");
  }
}

// /dev/zero was read forever and a FIFO blocked; every reader refuses what is not a regular file.
TEST(CliHardening, InputsThatAreNotRegularFilesAreRefused) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {std::string("/dev/zero"), fifo, dir.path().string()}) {
    SCOPED_TRACE(path);
    const std::string q = quoted(path);
    expect_input_error(run_phaze("place " + q), path);
    expect_input_error(run_phaze("schedule " + q), path);
    expect_input_error(run_phaze("model show " + q), "not a regular file");
    expect_input_error(run_phaze("arch show " + q), "not a regular file");
    expect_input_error(run_phaze("estimate --model gpt2-xl --cache " + q), path);
    expect_input_error(run_phaze(kTinySearch + " --db " + q), path);
  }
}

// More operators than the exact solver's 64-bit task sets hold ended with "internal error" and exit 1.
TEST(CliHardening, ScheduleQuestionsAreBoundedByTheTaskSets) {
  TempDir dir;
  json question{{"tensor_cores", 2}, {"vector_cores", 2}, {"ops", json::array()}};
  for (int k = 0; k < 65; ++k)
    question["ops"].push_back(
        json{{"id", fmt::format("op{}", k)}, {"unit", "tensor"}, {"latency_s", 1.0}, {"parallel_latency_s", 0.5}});
  expect_input_error(run_phaze("schedule " + quoted(dir.write("q.json", question.dump()))), "65 operators");
  question["ops"].erase(question["ops"].size() - 1);
  const RunResult ok = run_phaze("schedule --solver list " + quoted(dir.write("q.json", question.dump())));
  EXPECT_EQ(ok.status, 0) << ok.err;
}

TEST(CliHardening, EnumerationOptionsAreBounded) {
  expect_input_error(run_phaze("arch enumerate --count --budget-um2 1e300"), "--budget-um2 '1e300'");
  expect_input_error(run_phaze("arch enumerate --count --lower-fraction 1.5"), "--lower-fraction '1.5'");
  expect_input_error(run_phaze("arch enumerate --count --lower-fraction nan"), "--lower-fraction 'nan'");
}

// Messages quoted CLI11's conversion of the value: negative, 0 or inf.
TEST(CliHardening, MessagesQuoteTheValueGiven) {
  expect_input_error(run_phaze(fmt::format("search --model '{}' --glb-mib 8796093022208", kTinyModel)),
                     "--glb-mib '8796093022208'");
  expect_input_error(run_phaze(fmt::format("search --model '{}' --hbm 1e-12", kTinyModel)), "--hbm '1e-12'");
  expect_input_error(run_phaze(kTinySearch + " --link-bandwidth 1e308"), "--link-bandwidth '1e308'");
  // Beyond 2^64: once clamped to 2^63 − 1 silently, then a search linear in the device count.
  expect_input_error(run_phaze(kTinySearch + " --devices 18446744073709551617"), "--devices '18446744073709551617'");
  expect_input_error(run_phaze(kTinySearch + " --global-batch 18446744073709551617"),
                     "--global-batch '18446744073709551617'");
  expect_input_error(run_phaze(kTinySearch + " --threads 100000"), "--threads '100000'");
  expect_input_error(run_phaze(kTinySearch + " --mbs 1,99999999999999999999"), "99999999999999999999");
}

TEST(CliHardening, HelpNamesTheBounds) {
  const RunResult search = run_phaze("search --help");
  ASSERT_EQ(search.status, 0);
  EXPECT_NE(search.out.find("[1..1048576]"), std::string::npos) << search.out;   // --devices
  EXPECT_NE(search.out.find("[1..16777216]"), std::string::npos) << search.out;  // --global-batch
  const RunResult model = run_phaze("model show --help");
  ASSERT_EQ(model.status, 0);
  EXPECT_NE(model.out.find("[1..65536]"), std::string::npos) << model.out;  // --mbs
}

// The answer of a whole search was lost when -o named a path that cannot be written.
TEST(CliHardening, OutputPathsAreCheckedBeforeTheWork) {
  TempDir dir;
  const std::string missing = dir.file("no-such-dir/answer.json");
  // The full default space: minutes of work if the path were checked last.
  const RunResult r = run_phaze(fmt::format("search --model gpt3-175b -o {}", quoted(missing)));
  expect_input_error(r, missing);
  EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 500);
  expect_input_error(run_phaze(fmt::format("search --model gpt3-175b --csv {}", quoted(missing))), missing);
  expect_input_error(
      run_phaze(fmt::format("place {} -o {}", quoted(kData + "/placement/example.json"), quoted(missing))), missing);
  expect_input_error(run_phaze(fmt::format("schedule --model gpt2-xl --write-question {}", quoted(missing))), missing);
  EXPECT_FALSE(std::filesystem::exists(dir.file("no-such-dir")));
}

// Two searches on one results file both did all the work; the second now stops at once, naming the file.
TEST(CliHardening, ASecondSearchOnTheSameResultsFileIsRefused) {
  TempDir dir;
  const std::string db = dir.file("results.sqlite");
  const RunResult first = run_phaze(kTinySearch + " --db " + quoted(db));
  ASSERT_EQ(first.status, 0) << first.err;
  // Stand in for a running search: hold the lock a search takes.
  const int fd = ::open(db.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const RunResult second = run_phaze(kTinySearch + " --db " + quoted(db));
  expect_input_error(second, db);
  EXPECT_NE(second.err.find("another search"), std::string::npos) << second.err;
  ::close(fd);
  // Once the lock is free the file is used again: everything is resumed from it.
  const RunResult third = run_phaze(kTinySearch + " --db " + quoted(db));
  EXPECT_EQ(third.status, 0) << third.err;
  EXPECT_NE(third.out.find("0 points evaluated, 8 resumed"), std::string::npos) << third.out;
}

}  // namespace
