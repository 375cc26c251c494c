// Points left out of an exact search on their bounds: the rule on hand-set thresholds, and the answer of
// `phaze search` (the exact rule) that lists only its best points against the same search evaluating every
// point (--evaluate-all), byte for byte, on one and two threads, for several top-list lengths and sets of
// two models (dropping the rule's per-model condition fails the last one).

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "search/answer_thresholds.h"
#include "search/small_question.h"
#include "support/run_phaze.h"
#include "support/temp_dir.h"

namespace {

using namespace phaze;
using namespace phaze_test::small_question;
using phaze_test::run_phaze;
using phaze_test::TempDir;

search::AnswerThresholds reached(std::optional<double> combination_best, std::vector<std::optional<double>> model_best,
                                 int64_t top, std::optional<double> top_last) {
  search::AnswerThresholds t;
  t.combination_best = {combination_best, 5.0};
  t.model_best = std::move(model_best);
  t.top = top;
  t.top_last = top_last;
  return t;
}

/// cannot_enter on bounds of samples/s alone (no frontier is asked for, so energy and area do not count).
bool left_out(const search::AnswerThresholds& t, size_t combination, const std::vector<std::optional<double>>& most) {
  std::vector<std::optional<search::ModelBound>> bounds;
  for (const std::optional<double>& s : most)
    bounds.push_back(s ? std::optional(search::ModelBound{*s, 0}) : std::nullopt);
  return search::cannot_enter(t, combination, 1.0, bounds);
}

TEST(AnswerThresholds, APointIsLeftOutOnlyStrictlyBelowEveryThresholdThatConcernsIt) {
  // One model: its best 10 samples/s, the combination's best 8, the last of a full top list of 3 at 9.
  const search::AnswerThresholds t = reached(8.0, {10.0}, 3, 9.0);
  EXPECT_TRUE(left_out(t, 0, {7.5}));
  EXPECT_FALSE(left_out(t, 0, {8.0}));  // a tie with the combination's best may win on order
  EXPECT_FALSE(left_out(t, 0, {8.5}));  // could be the combination's best
  EXPECT_FALSE(left_out(t, 1, {7.5}));  // could be the best of combination 1 (5): its own counts
  EXPECT_TRUE(left_out(reached(8.0, {10.0}, 0, std::nullopt), 0, {7.5}));  // no top list asked
  // A top list not yet full, a combination or a model without a feasible point: nothing is left out.
  EXPECT_FALSE(left_out(reached(8.0, {10.0}, 3, std::nullopt), 0, {1.0}));
  EXPECT_FALSE(left_out(reached(std::nullopt, {10.0}, 0, std::nullopt), 0, {1.0}));
  EXPECT_FALSE(left_out(reached(8.0, {std::nullopt}, 0, std::nullopt), 0, {1.0}));
  // A point without a plan enters no list.
  EXPECT_TRUE(left_out(reached(std::nullopt, {std::nullopt}, 3, std::nullopt), 0, {std::nullopt}));
}

TEST(AnswerThresholds, ModelsOfASetAreBoundedEachAndTheScoreOnTheirMean) {
  const search::AnswerThresholds t = reached(6.0, {10.0, 4.0}, 0, std::nullopt);
  EXPECT_TRUE(left_out(t, 0, {9.0, 2.0}));    // mean 5.5
  EXPECT_FALSE(left_out(t, 0, {9.0, 4.0}));   // model 1 could reach its best
  EXPECT_FALSE(left_out(t, 0, {11.0, 1.0}));  // model 0 could beat its best
  EXPECT_FALSE(left_out(t, 0, {9.5, 3.0}));   // mean 6.25: could be the combination's best
  // Infeasible (model 1 has no plan), but model 0 could still be its model's best.
  EXPECT_FALSE(left_out(t, 0, {10.5, std::nullopt}));
  EXPECT_TRUE(left_out(t, 0, {9.5, std::nullopt}));
}

TEST(AnswerThresholds, TrackerKeepsTheBestsOfThePointsAdded) {
  search::AnswerThresholdTracker tracker(2, 1, 2);
  auto point = [](double score, int64_t num_tc, bool feasible = true) {
    search::PointOutcome p;
    p.design.num_tc = num_tc;
    p.key = fmt::format("p{}-{}", num_tc, score);
    p.feasible = feasible;
    p.score = feasible ? score : 0;
    search::ModelOutcome m;
    m.feasible = feasible;
    m.samples_per_s = p.score;
    p.models = {m};
    return p;
  };
  tracker.add(point(5, 1), 0);
  EXPECT_EQ(tracker.now().combination_best[0], 5.0);
  EXPECT_FALSE(tracker.now().combination_best[1].has_value());
  EXPECT_FALSE(tracker.now().top_last.has_value());  // one design of two
  tracker.add(point(7, 1), 1);                       // the same design: still one entry
  EXPECT_FALSE(tracker.now().top_last.has_value());
  tracker.add(point(3, 2), 0);
  EXPECT_EQ(tracker.now().top_last, 3.0);
  tracker.add(point(4, 4), 1);
  EXPECT_EQ(tracker.now().top_last, 4.0);
  tracker.add(point(9, 8, false), 1);
  EXPECT_EQ(tracker.now().combination_best[1], 7.0);
  EXPECT_EQ(tracker.now().model_best[0], 7.0);
}

TEST(LeaveOutByBound, TheAnswerIsThatOfEvaluatingEveryPoint) {
  TempDir dir;
  const std::string llama = std::string(PHAZE_TEST_DATA) + "/hf/tiny-llama/config.json";
  const std::string model_set = fmt::format(
      "search --model '{}' --model '{}' --seq 64,32 --devices {} --global-batch {} --mbs 1,2 --hbm 0.0008,0.002 "
      "--tc 1 --vc 1,2,4,8 --width 16 --depth 8 --glb-mib 2 --lower-fraction 0 --link-bandwidth {} --stop-rule exact",
      kModel, llama, kDevices, kBatch, kLinkGibS);
  // The same two models at sequence lengths 16 and 256: the second's best point (micro-batch 2) is not the
  // set's best, so leaving a point out must also respect each model's best.
  const std::string disagreeing = fmt::format(
      "search --model '{}' --model '{}' --seq 16,256 --devices {} --global-batch {} --mbs 1,2 "
      "--hbm 0.0008,0.002,0.01 --tc 1 --vc 1,2,4,8 --width 16 --depth 8 --glb-mib 2 --lower-fraction 0 "
      "--link-bandwidth {} --stop-rule exact",
      kModel, llama, kDevices, kBatch, kLinkGibS);
  struct Case {
    std::string question;
    int64_t top;
  };
  const std::vector<Case> cases{
      {small_args() + " --stop-rule exact", 0},
      {small_args() + " --stop-rule exact", 1},
      {small_args() + " --stop-rule exact", 3},
      {joined(twelve_argv()) + " --stop-rule exact", 5},
      {model_set, 0},
      {model_set, 2},
      {disagreeing, 0},
      // The stagewise planner, bounded by the work of its layers (docs/piper.md 5).
      {small_args() + " --planner stagewise", 3},
      {model_set + " --planner stagewise", 2},
      // The attention core as one fused kernel: other layer passes, the same bounds.
      {small_args() + " --stop-rule exact --attention-backend fused", 3},
      {model_set + " --attention-backend fused", 2},
      // Ties to the smaller chip, one top-list entry per chip.
      {small_args() + " --stop-rule exact --ranking smaller-area", 3},
      {model_set + " --ranking smaller-area", 2},
      // Each chip at two HBM bandwidths (GB/s): one of the memory-bound tiny chips' limits.
      {small_args() + " --stop-rule exact --hbm-bandwidth 0.5,4", 3},
      // Per-core area overheads: other areas, and the smaller-area ranking reads them.
      {small_args() + " --stop-rule exact --core-overhead-um2 5000,2000 --ranking smaller-area", 3}};
  int64_t total = 0;
  for (const Case& c : cases) {
    const std::string question = c.question + fmt::format(" --top {}", c.top);
    SCOPED_TRACE(question);
    const auto all = run_phaze(question + " --evaluate-all --threads 2 -o " + dir.file("all.json"));
    ASSERT_EQ(all.status, 0) << all.err;
    EXPECT_EQ(points_left_out(all.out), 0);
    for (int threads : {1, 2}) {
      const auto some = run_phaze(question + fmt::format(" --threads {} -o ", threads) + dir.file("some.json"));
      ASSERT_EQ(some.status, 0) << some.err;
      EXPECT_EQ(read(dir.file("some.json")), read(dir.file("all.json")));
      total += points_left_out(some.out);
    }
  }
  // The bounds leave many points out here: the test would not notice a rule that leaves out none.
  EXPECT_GT(total, 100);
}

TEST(LeaveOutByBound, NothingIsLeftOutOfTheCsvAndAResultsFileResumesToTheSameAnswer) {
  TempDir dir;
  const auto csv = run_phaze(small_args() + " --csv " + dir.file("all.csv"));
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(points_left_out(csv.out), 0);
  const auto all = run_phaze(small_args() + " --evaluate-all -o " + dir.file("all.json"));
  ASSERT_EQ(all.status, 0) << all.err;
  // A results file holds the points evaluated; those left out are decided again when the run resumes.
  const auto db = run_phaze(small_args() + " --db " + dir.file("points.db") + " -o " + dir.file("db.json"));
  ASSERT_EQ(db.status, 0) << db.err;
  EXPECT_GT(points_left_out(db.out), 0);
  EXPECT_EQ(read(dir.file("db.json")), read(dir.file("all.json")));
  const auto again = run_phaze(small_args() + " --db " + dir.file("points.db") + " -o " + dir.file("again.json"));
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(again.out.find(" 0 resumed"), std::string::npos) << again.out;
  EXPECT_EQ(read(dir.file("again.json")), read(dir.file("all.json")));
}

}  // namespace
