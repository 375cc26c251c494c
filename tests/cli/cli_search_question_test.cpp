// `phaze search --write-question` and `--question`: a question written and run again answers byte for byte
// like the flags it came from, flags beside the file replace its values, a results file of another question
// is refused, and bad files exit 2 naming the field.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
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

const std::string kTinyModel = std::string(PHAZE_TEST_DATA) + "/hf/tiny-gpt2/config.json";
/// A search of the tiny model over a few designs: a second or less.
const std::string kTinySearch =
    fmt::format("search --model {} --tc 1,2 --vc 1 --width 8 --depth 8,16 --glb-mib 2 --hbm 32", quoted(kTinyModel));

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs `args` and expects success.
RunResult ok(const std::string& args) {
  RunResult r = run_phaze(args);
  EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
  return r;
}

TEST(CliSearchQuestion, QuestionFileAnswersLikeTheFlags) {
  TempDir dir;
  const std::string flags = kTinySearch + " --devices 64 --exhaustive --mbs 2,4";
  const std::string q = dir.file("q.json");
  const RunResult written = ok(flags + " --write-question " + quoted(q));
  EXPECT_EQ(written.out, "");
  const RunResult direct =
      ok(flags + " --json -o " + quoted(dir.file("a.json")) + " --csv " + quoted(dir.file("a.csv")));
  const RunResult again = ok("search --question " + quoted(q) + " --json -o " + quoted(dir.file("b.json")) + " --csv " +
                             quoted(dir.file("b.csv")));
  EXPECT_FALSE(direct.out.empty());
  EXPECT_EQ(again.out, direct.out);
  EXPECT_EQ(read(dir.file("b.json")), read(dir.file("a.json")));
  EXPECT_EQ(read(dir.file("b.csv")), read(dir.file("a.csv")));
  // The file written from the file is the file.
  EXPECT_EQ(ok("search --question " + quoted(q) + " --write-question -").out, read(q));
}

TEST(CliSearchQuestion, FlagsBesideTheFileReplaceItsValues) {
  TempDir dir;
  const std::string q = dir.file("q.json");
  const std::string base = fmt::format("search --model {} --global-batch 512", quoted(kTinyModel));
  ok(base + " --write-question " + quoted(q));
  // Each flag given beside the file gives the question the same flags would.
  for (const std::string extra : {"--devices 32",
                                  "--mbs 1,4",
                                  "--hbm 16,48",
                                  "--recompute off",
                                  "--optimizer sgd",
                                  "--attention-backend unfused",
                                  "--ranking canonical",
                                  "--phaze-compat",
                                  "--phaze-compat --optimizer adam",
                                  "--system dgx-h100",
                                  "--link-bandwidth 8",
                                  "--budget-um2 1e9",
                                  "--budget-mm2 1000",
                                  "--budget tpuv4-like",
                                  "--lower-fraction 0",
                                  "--no-single-core-exemption",
                                  "--tc 2",
                                  "--vc 1,2",
                                  "--width 8,16",
                                  "--depth 16",
                                  "--glb-mib 4",
                                  "--stop-rule buckets",
                                  "--stop-rule buckets --stop-window 2",
                                  "--stop-rule buckets --bucket-um2 5000",
                                  "--schedule-nodes 100",
                                  "--seq 64",
                                  "--tp 1,2"}) {
    const RunResult from_file = ok("search --question " + quoted(q) + " " + extra + " --write-question -");
    const RunResult from_flags = ok(base + " " + extra + " --write-question -");
    EXPECT_EQ(from_file.out, from_flags.out) << extra;
    if (extra != "--budget tpuv4-like") {
      EXPECT_NE(from_file.out, read(q)) << extra;  // the default budget
    }
  }
  // The bucket rule's settings beside a file of the bucket rule apply to it; --exhaustive, the exact rule's
  // earlier name, replaces the file's rule.
  const std::string buckets = dir.file("buckets.json");
  ok(base + " --stop-rule buckets --write-question " + quoted(buckets));
  EXPECT_EQ(ok("search --question " + quoted(buckets) + " --stop-window 2 --write-question -").out,
            ok(base + " --stop-rule buckets --stop-window 2 --write-question -").out);
  EXPECT_EQ(ok("search --question " + quoted(buckets) + " --exhaustive --write-question -").out, read(q));
  // A budget in mm² is the same question as in µm²; two budgets are refused.
  EXPECT_EQ(ok(base + " --budget-mm2 250.5 --write-question -").out,
            ok(base + " --budget-um2 250500000 --write-question -").out);
  phaze_test::expect_input_error(run_phaze(base + " --budget-mm2 250 --budget-um2 5"), "--budget");
  phaze_test::expect_input_error(run_phaze(base + " --budget-mm2 -1"), "--budget-mm2");
  // --model replaces the file's models.
  const json other =
      phaze_test::parse_json(ok("search --question " + quoted(q) + " --model gpt2-xl --write-question -"));
  ASSERT_EQ(other["models"].size(), 1u);
  EXPECT_EQ(other["models"][0]["source"], "gpt2-xl");
  EXPECT_EQ(other["global_batch"], 512);  // the rest is the file's
}

// The defaults are a run of today (issue: fused attention, mixed-precision Adam, the network of the TPU v4 pod,
// the smaller of equal chips); --phaze-compat is the original evaluation's settings (method.md 5), exactly the
// question its four flags give, and a flag of its own still wins beside it.
TEST(CliSearchQuestion, DefaultsAreRealisticAndPhazeCompatIsTheOriginal) {
  const json q = phaze_test::parse_json(ok(kTinySearch + " --write-question -").out);
  EXPECT_EQ(q.at("optimizer"), "adam");
  EXPECT_EQ(q.at("attention").at("fused"), true);
  EXPECT_EQ(q.at("ranking"), "smaller_area");
  EXPECT_EQ(q.at("system").at("network").at(0).at("torus").at("cube"), json({4, 4, 4}));
  EXPECT_EQ(q.at("system").at("network").at(0).at("bandwidth"), 45e9);
  const std::string compat = ok(kTinySearch + " --phaze-compat --write-question -").out;
  EXPECT_EQ(compat,
            ok(kTinySearch + " --optimizer sgd --attention-backend unfused --ranking canonical --link-bandwidth 4 "
                             "--write-question -")
                .out);
  const json c = phaze_test::parse_json(compat);
  EXPECT_EQ(c.at("system").at("network"),
            json::parse(R"([{"name": "link", "members": 0, "bandwidth": 4294967296.0, "latency_s": 0.0,
                             "efficiency": 1.0}])"));
  EXPECT_FALSE(c.contains("attention"));
  EXPECT_EQ(
      phaze_test::parse_json(ok(kTinySearch + " --phaze-compat --optimizer adam --write-question -")).at("optimizer"),
      "adam");
  // Beside a question of Megatron-LM's execution, which trains with Adam, --phaze-compat keeps its optimizer.
  TempDir dir;
  const std::string megatron = dir.file("megatron.json");
  ok(kTinySearch + " --execution megatron --write-question " + quoted(megatron));
  const json m =
      phaze_test::parse_json(ok("search --question " + quoted(megatron) + " --phaze-compat --write-question -"));
  EXPECT_EQ(m.at("optimizer"), "adam");
  EXPECT_FALSE(m.contains("attention"));
  // A device count that makes no slice of the TPU v4 pod's torus is an error naming --devices; one link takes it.
  expect_input_error(run_phaze(kTinySearch + " --devices 96 --write-question -"), "--devices 96");
  ok(kTinySearch + " --devices 96 --link-bandwidth 4 --write-question -");
}

TEST(CliSearchQuestion, AResultsFileOfAnotherQuestionIsRefused) {
  TempDir dir;
  const std::string db = dir.file("results.sqlite");
  const std::string q = dir.file("q.json");
  ok(kTinySearch + " --write-question " + quoted(q));
  ok(kTinySearch + " --json --db " + quoted(db));
  // The same question from the file resumes; another one does not.
  const RunResult resumed = ok("search --question " + quoted(q) + " --db " + quoted(db));
  EXPECT_NE(resumed.out.find("0 points evaluated"), std::string::npos) << resumed.out;
  expect_input_error(run_phaze("search --question " + quoted(q) + " --devices 32 --db " + quoted(db)), "another run");
}

TEST(CliSearchQuestion, BadFilesAndMissingModelsExitTwo) {
  TempDir dir;
  const std::string q = dir.file("q.json");
  ok(kTinySearch + " --write-question " + quoted(q));
  json j = json::parse(read(q));
  j["strategy"]["stop_window"] = 0;
  const std::string bad = dir.write("bad.json", j.dump());
  expect_input_error(run_phaze("search --question " + quoted(bad)), bad + ": strategy.stop_window = 0");
  j = json::parse(read(q));
  j["space"].erase("filter");
  const std::string missing = dir.write("missing.json", j.dump());
  expect_input_error(run_phaze("search --question " + quoted(missing)), missing + ": missing field space.filter");
  expect_input_error(run_phaze("search --question " + quoted(dir.file("none.json"))), "none.json: no such file");
  expect_input_error(run_phaze("search --devices 8"), "--model is required");
}

TEST(CliSearchQuestion, PlainProgressWritesLinesToALogAndNoneWritesNothing) {
  // Standard error is a pipe here: the bar stays away, plain lines do not.
  const RunResult quiet = ok(kTinySearch + " --json");
  EXPECT_EQ(quiet.err, "");
  const RunResult plain = ok(kTinySearch + " --json --progress plain");
  EXPECT_EQ(plain.err.find('\r'), std::string::npos);
  EXPECT_EQ(plain.err.rfind("[....................] 0/", 0), 0u) << plain.err;  // the first line at once
  EXPECT_NE(plain.err.find("100.0%"), std::string::npos) << plain.err;          // and the last
  EXPECT_EQ(plain.out, quiet.out);                                              // the answer is the same
  EXPECT_EQ(ok(kTinySearch + " --progress none").err, "");
}

}  // namespace
