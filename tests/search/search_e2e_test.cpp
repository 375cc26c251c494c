// End-to-end tests of `phaze search` on a three-layer GPT-2-style model and a small design space: the answer
// of the exhaustive search against a brute-force loop over every combination that calls the earlier stages
// directly, the area-bucket search against the stop rule replayed here over the exhaustive search's CSV,
// identical answers for one and two threads, resuming after SIGKILL at random moments (both searches), bad
// options, no feasible design.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "hw/enumerate.h"
#include "model/hf_config.h"
#include "model/layer_graph.h"
#include "placement/corrected_planner.h"
#include "schedule/layer_problem.h"
#include "search/small_question.h"
#include "support/csv_rows.h"
#include "support/run_phaze.h"
#include "support/temp_dir.h"

namespace {

using nlohmann::json;
using namespace phaze_test::small_question;
using phaze_test::run_phaze;
using phaze_test::TempDir;

bool contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

struct BruteBest {
  double score = -1;                ///< average samples/s over the models
  std::vector<double> throughputs;  ///< per model
  phaze::hw::Architecture design;
  int64_t hbm_bytes = 0, mbs = 0;
  bool recompute = false;
  std::vector<phaze::placement::Plan> plans;  ///< per model
};

/// A point of the small question: num_tc, num_vc, tc_width, HBM bytes, micro-batch, recomputation.
using PointKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, bool>;

/// A model of the set with its sequence length.
struct ModelAt {
  std::string path;
  int64_t seq = 0;
};

/// Every combination, evaluated with the earlier stages directly: designs from the enumeration, per layer
/// pass the exact schedule of the accelerator model's estimates, a chain per width written out here, the
/// planner per width with the corrected terms (SGD: 3 bytes of HBM traffic per parameter byte at
/// 1.2e12 B/s). A point counts only when every model has a plan; its score is the mean of the models' best
/// throughputs over the widths t = 1, 2, 4 that divide its heads, key/value heads and FFN size. Visits points in the
/// documented tie order (design, HBM ascending, micro-batch ascending, recomputation off first) and keeps
/// the first of the highest score. With `every`, also the score of every point (-1: a model has no plan).
BruteBest brute_force(const std::vector<ModelAt>& models, const std::vector<int64_t>& tcs,
                      const std::vector<int64_t>& vcs, const std::vector<int64_t>& widths,
                      const std::vector<int64_t>& mbs_list, const std::vector<double>& hbm_gib_list,
                      std::map<PointKey, double>* every = nullptr) {
  phaze::hw::EnumerationOptions options;
  options.lower_fraction = 0;
  std::vector<phaze::hw::Design> designs;
  for (const phaze::hw::Design& d : phaze::hw::enumerate_designs(options))
    if (contains(tcs, d.arch.num_tc) && contains(vcs, d.arch.num_vc) && contains(widths, d.arch.tc_width) &&
        contains(kDepth, d.arch.tc_depth) && d.arch.glb_bytes == (2 << 20))
      designs.push_back(d);
  EXPECT_EQ(designs.size(), tcs.size() * vcs.size() * widths.size());

  auto solver = phaze::schedule::make_exact_solver();
  BruteBest best;
  for (const phaze::hw::Design& design : designs) {
    // The one link carries the tensor-parallel collectives too.
    phaze::cost::Estimator estimator({}, phaze::hw::one_tier_network(kLinkGibS * kGiB));
    // chains[model][mbs][t index]
    std::vector<std::vector<std::vector<phaze::placement::Chain>>> chains;
    for (const ModelAt& m : models) {
      const phaze::model::ModelSpec spec = phaze::model::load_model(m.path);
      auto& per_model = chains.emplace_back();
      for (int64_t b : mbs_list) {
        auto& per_mbs = per_model.emplace_back();
        for (int64_t t : {1, 2, 4}) {
          if (spec.heads % t != 0 || spec.kv_heads % t != 0 || spec.ffn % t != 0) continue;
          const auto graph =
              phaze::model::build_layer_graph(spec, phaze::model::Shape{m.seq, b, t}, phaze::model::Precision{}, "m");
          phaze::placement::Chain chain;
          chain.width = t;
          for (int64_t i = 0; i < graph.size(); ++i) {
            const phaze::model::Layer& layer = graph.node(i);
            const double fwd =
                solver->solve(phaze::schedule::layer_problem(layer.forward, design.arch, estimator)).makespan_s;
            const double bwd =
                solver->solve(phaze::schedule::layer_problem(layer.backward, design.arch, estimator)).makespan_s;
            chain.nodes.push_back(
                {fwd, bwd, double(layer.parameter_bytes), double(layer.activation_bytes), layer.tensor_parallel});
            if (i + 1 < graph.size()) chain.edges.push_back({int(i), int(i + 1), double(layer.output_bytes)});
          }
          per_mbs.push_back(chain);
        }
      }
    }
    for (double hbm_gib : hbm_gib_list) {
      const int64_t hbm = std::llround(hbm_gib * kGiB);
      for (size_t bi = 0; bi < mbs_list.size(); ++bi)
        for (bool rc : {false, true}) {
          phaze::placement::Cluster cluster;
          cluster.devices = kDevices;
          cluster.memory_bytes = double(hbm);
          phaze::placement::use_network(cluster, phaze::hw::one_tier_network(kLinkGibS * kGiB));
          cluster.micro_batches = kBatch / mbs_list[bi];
          cluster.recompute = rc;
          cluster.corrected.enabled = true;
          cluster.corrected.optimizer_seconds_per_byte = 3.0 / 1.2e12;
          phaze::placement::CorrectedPlanner planner;
          std::vector<double> throughputs;
          std::vector<phaze::placement::Plan> plans;
          for (size_t mi = 0; mi < models.size(); ++mi) {
            double model_best = -1;
            phaze::placement::Plan model_plan;
            for (const phaze::placement::Chain& chain : chains[mi][bi]) {
              const phaze::placement::Plan plan = planner.solve(chain, cluster);
              if (plan.feasible && double(kBatch) / plan.time_per_batch > model_best) {
                model_best = double(kBatch) / plan.time_per_batch;
                model_plan = plan;
              }
            }
            throughputs.push_back(model_best);
            plans.push_back(model_plan);
          }
          const PointKey key{design.arch.num_tc, design.arch.num_vc, design.arch.tc_width, hbm, mbs_list[bi], rc};
          if (every) (*every)[key] = -1;
          if (*std::min_element(throughputs.begin(), throughputs.end()) < 0) continue;  // a model has no plan
          double sum = 0;
          for (double x : throughputs) sum += x;
          const double score = sum / double(models.size());
          if (every) (*every)[key] = score;
          if (score > best.score) best = {score, throughputs, design.arch, hbm, mbs_list[bi], rc, plans};
        }
    }
  }
  return best;
}

void expect_best(const json& best, const BruteBest& expect) {
  ASSERT_TRUE(best.is_object());
  EXPECT_DOUBLE_EQ(best["average_samples_per_s"].get<double>(), expect.score);
  EXPECT_EQ(best["design"]["num_tc"], expect.design.num_tc);
  EXPECT_EQ(best["design"]["num_vc"], expect.design.num_vc);
  EXPECT_EQ(best["design"]["tc_width"], expect.design.tc_width);
  EXPECT_EQ(best["design"]["tc_depth"], expect.design.tc_depth);
  EXPECT_EQ(best["design"]["glb_bytes"], expect.design.glb_bytes);
  EXPECT_EQ(best["design"]["hbm_bytes"], expect.hbm_bytes);
  EXPECT_EQ(best["micro_batch"], expect.mbs);
  EXPECT_EQ(best["recompute"], expect.recompute);
  ASSERT_EQ(best["models"].size(), expect.plans.size());
  for (size_t mi = 0; mi < expect.plans.size(); ++mi) {
    const json& m = best["models"][mi];
    EXPECT_DOUBLE_EQ(m["samples_per_s"].get<double>(), expect.throughputs[mi]);
    EXPECT_EQ(m["plan"]["tensor_parallel"], expect.plans[mi].width);
    EXPECT_EQ(m["plan"]["data_parallel"], expect.plans[mi].data_parallel);
    EXPECT_EQ(m["plan"]["pipeline_stages"], expect.plans[mi].stages.size());
  }
}

TEST(SearchEndToEnd, BestAnswerMatchesBruteForce) {
  TempDir dir;
  const auto r = run_phaze(small_args() + " --exhaustive --threads 2 -o " + dir.file("answer.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  const json answer = json::parse(read(dir.file("answer.json")));
  const BruteBest expect = brute_force({{kModel, kSeq}}, kTc, kVc, kWidth, kMbs, kHbmGib);
  ASSERT_GT(expect.score, 0);

  EXPECT_EQ(answer["points"], 8 * 3 * 3 * 2);
  const json& best = answer["best"];
  expect_best(best, expect);
  const json& m = best["models"][0];
  EXPECT_DOUBLE_EQ(m["tokens_per_s"].get<double>(), expect.score * kSeq);
  const json& parts = m["time_per_batch_parts_s"];
  EXPECT_NEAR(parts["pipeline_steady_state"].get<double>() + parts["pipeline_fill_drain"].get<double>() +
                  parts["data_parallel_sync"].get<double>() + parts["optimizer_step"].get<double>(),
              kBatch / expect.score, 1e-12);
  // The stages cover the chain (embedding, 3 layers, head) contiguously.
  EXPECT_EQ(m["plan"]["stages"].front()["first_layer"], "embedding");
  EXPECT_EQ(m["plan"]["stages"].back()["last_layer"], "head");
  int64_t layers = 0;
  for (const json& s : m["plan"]["stages"]) layers += s["layers"].get<int64_t>();
  EXPECT_EQ(layers, 5);
  // The top list starts with the best and never rises.
  ASSERT_FALSE(answer["top"].empty());
  EXPECT_EQ(answer["top"][0], best);
  for (size_t i = 1; i < answer["top"].size(); ++i)
    EXPECT_GE(answer["top"][i - 1]["average_samples_per_s"].get<double>(),
              answer["top"][i]["average_samples_per_s"].get<double>());
}

TEST(SearchEndToEnd, TpuBaselineIsTheBestOfASearchOverThatChipAlone) {
  // The baseline (the TPUv4-like chip over the same HBM sizes, micro-batches and recomputation settings)
  // must equal what a search restricted to that one chip finds, and the speed-up is best / baseline.
  TempDir dir;
  const std::string common = fmt::format(
      "search --model '{}' --devices {} --global-batch {} --seq {} --mbs 1,2,4 --hbm 0.0004,0.0008,0.002 "
      "--link-bandwidth {} --phaze-compat",
      kModel, kDevices, kBatch, kSeq, kLinkGibS);
  const auto wide = run_phaze(common + " --tc 1,2 --vc 1,2 --width 8,16 --depth 8 --glb-mib 2 --lower-fraction 0 -o " +
                              dir.file("wide.json"));
  ASSERT_EQ(wide.status, 0) << wide.err;
  const auto tpu =
      run_phaze(common + " --tc 8 --vc 2 --width 128 --depth 128 --glb-mib 128 -o " + dir.file("tpu.json"));
  ASSERT_EQ(tpu.status, 0) << tpu.err;
  const json a = json::parse(read(dir.file("wide.json"))), b = json::parse(read(dir.file("tpu.json")));
  ASSERT_TRUE(b["best"].is_object());
  const json& baseline = a["baselines"]["tpuv4_like"];
  ASSERT_TRUE(baseline.is_object());
  EXPECT_EQ(baseline["design"], b["best"]["design"]);
  EXPECT_DOUBLE_EQ(baseline["average_samples_per_s"].get<double>(), b["best"]["average_samples_per_s"].get<double>());
  EXPECT_EQ(baseline["micro_batch"], b["best"]["micro_batch"]);
  EXPECT_EQ(baseline["recompute"], b["best"]["recompute"]);
  EXPECT_DOUBLE_EQ(baseline["speedup_of_best"].get<double>(),
                   a["best"]["average_samples_per_s"].get<double>() / baseline["average_samples_per_s"].get<double>());
  // Over the chip alone, the baseline is the best.
  EXPECT_DOUBLE_EQ(b["baselines"]["tpuv4_like"]["speedup_of_best"].get<double>(), 1.0);
}

TEST(SearchEndToEnd, ModelSetAnswerMatchesBruteForce) {
  // Two models with different layers (GPT-2 style with learned positions, Llama style with grouped-query
  // attention and SwiGLU) and sequence lengths; 4 designs × 2 HBM sizes × 2 micro-batches × 2. Designs with
  // one tensor core keep the test fast: the Llama layers' backward passes on several tensor cores take the
  // exact scheduler's full node budget.
  const std::string llama = std::string(PHAZE_TEST_DATA) + "/hf/tiny-llama/config.json";
  TempDir dir;
  const auto r = run_phaze(fmt::format(
      "search --model '{}' --model '{}' --seq 64,32 --devices {} --global-batch {} --mbs 1,2 --hbm 0.0008,0.002 "
      "--tc 1 --vc 1,2,4,8 --width 16 --depth 8 --glb-mib 2 --lower-fraction 0 --link-bandwidth {} --exhaustive "
      "--threads 2 --phaze-compat -o {}",
      kModel, llama, kDevices, kBatch, kLinkGibS, dir.file("answer.json")));
  ASSERT_EQ(r.status, 0) << r.err;
  const json answer = json::parse(read(dir.file("answer.json")));
  const BruteBest expect = brute_force({{kModel, 64}, {llama, 32}}, {1}, {1, 2, 4, 8}, {16}, {1, 2}, {0.0008, 0.002});
  ASSERT_GT(expect.score, 0);
  EXPECT_EQ(answer["points"], 4 * 2 * 2 * 2);
  expect_best(answer["best"], expect);
  // Each model's own best is at least what it gets on the set's best design.
  ASSERT_EQ(answer["best_per_model"].size(), 2u);
  for (size_t mi = 0; mi < 2; ++mi)
    EXPECT_GE(answer["best_per_model"][mi]["samples_per_s"].get<double>(), expect.throughputs[mi]);
}

TEST(SearchEndToEnd, OneAndTwoThreadsGiveIdenticalOutputs) {
  TempDir dir;
  const auto one = run_phaze(small_args() + " --exhaustive --threads 1 --top 10 -o " + dir.file("1.json") + " --csv " +
                             dir.file("1.csv"));
  const auto two = run_phaze(small_args() + " --exhaustive --threads 2 --top 10 -o " + dir.file("2.json") + " --csv " +
                             dir.file("2.csv"));
  ASSERT_EQ(one.status, 0) << one.err;
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_EQ(read(dir.file("1.json")), read(dir.file("2.json")));
  const std::string csv = read(dir.file("1.csv"));
  EXPECT_EQ(csv, read(dir.file("2.csv")));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 8 * 3 * 3 * 2);  // header and every point
}

TEST(SearchEndToEnd, BucketSearchGivesIdenticalOutputsOnOneAndTwoThreads) {
  // A window of two stops most combinations after a few buckets, so two threads hand out designs past a stop.
  TempDir dir;
  const std::string args = joined(twelve_argv()) + kBucketArgs + " --stop-window 2 --top 10";
  const auto one = run_phaze(args + " --threads 1 -o " + dir.file("1.json") + " --csv " + dir.file("1.csv"));
  const auto two = run_phaze(args + " --threads 2 -o " + dir.file("2.json") + " --csv " + dir.file("2.csv"));
  ASSERT_EQ(one.status, 0) << one.err;
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_EQ(read(dir.file("1.json")), read(dir.file("2.json")));
  EXPECT_EQ(read(dir.file("1.csv")), read(dir.file("2.csv")));
  const json answer = json::parse(read(dir.file("1.json")));
  EXPECT_EQ(answer["settings"]["stop_rule"], "buckets");
  EXPECT_EQ(answer["search"]["optimum"]["proven"], false);
  EXPECT_LT(answer["search"]["points_explored"].get<int64_t>(), 12 * 18);
}

/// Kills `phaze <question> --threads 2 --db FILE` four times at random moments, then completes the run with
/// the same file: the answer must be byte for byte a fresh run's. A further run with the complete file evaluates
/// nothing and gives it again. Returns that run's standard output.
std::string expect_resume_after_sigkill(const std::vector<std::string>& question) {
  TempDir dir;
  const std::string db = dir.file("results.sqlite");
  std::vector<std::string> killed = question;
  killed.insert(killed.end(), {"--threads", "2", "--db", db});
  std::mt19937 random(12345);  // fixed seed: the same kill moments on every run of the test
  std::uniform_int_distribution<int> delay_ms(20, 400);
  for (int round = 0; round < 4; ++round) {
    const pid_t pid = spawn(killed);
    EXPECT_GT(pid, 0);
    ::usleep(static_cast<useconds_t>(delay_ms(random)) * 1000);
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  const std::string args = joined(question);
  const auto resumed = run_phaze(args + " --threads 2 --db " + db + " -o " + dir.file("resumed.json"));
  EXPECT_EQ(resumed.status, 0) << resumed.err;
  const auto fresh = run_phaze(args + " --threads 1 -o " + dir.file("fresh.json"));
  EXPECT_EQ(fresh.status, 0) << fresh.err;
  EXPECT_EQ(read(dir.file("resumed.json")), read(dir.file("fresh.json")));

  // One thread hands out no design past a stop, so every design it visits is in the file.
  const auto again = run_phaze(args + " --threads 1 --db " + db + " -o " + dir.file("again.json"));
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.out.find("\n0 points evaluated, "), std::string::npos) << again.out;
  EXPECT_EQ(read(dir.file("again.json")), read(dir.file("fresh.json")));
  return again.out;
}

TEST(SearchEndToEnd, ResumesAfterSigkillWithTheIdenticalAnswer) {
  std::vector<std::string> question = small_argv();
  question.push_back("--stop-rule");
  question.push_back("exact");
  const std::string again = expect_resume_after_sigkill(question);
  // The file holds the points evaluated; the run that completes it leaves the others out again on the
  // thresholds its stored points reach, evaluating none: all 144 points are accounted for.
  std::smatch resumed, left_out;
  ASSERT_TRUE(std::regex_search(again, resumed, std::regex("0 points evaluated, (\\d+) resumed"))) << again;
  ASSERT_TRUE(std::regex_search(again, left_out, std::regex("(\\d+) points left out unevaluated"))) << again;
  EXPECT_EQ(std::stoll(resumed[1].str()) + std::stoll(left_out[1].str()), 144) << again;
}

TEST(SearchEndToEnd, BucketSearchResumesAfterSigkillWithTheIdenticalAnswer) {
  std::vector<std::string> question = twelve_argv();
  question.insert(question.end(), {"--stop-rule", "buckets", "--bucket-um2", "20000", "--stop-window", "2"});
  expect_resume_after_sigkill(question);
}

/// A row of the CSV of all points.
struct CsvPoint {
  std::array<int64_t, 6> design{};  ///< num_tc, tc_width, tc_depth, num_vc, vc_width, glb_bytes
  int64_t hbm_bytes = 0, mbs = 0;
  double area_um2 = 0, score = 0;
  bool recompute = false, feasible = false;
  std::string line;
};

std::vector<CsvPoint> parse_points_csv(const std::string& text) {
  std::vector<CsvPoint> out;
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);  // the header, which csv_rows reads
  for (const phaze_test::CsvRow& row : phaze_test::csv_rows(text)) {
    std::getline(lines, line);
    CsvPoint p;
    size_t i = 0;
    for (const char* name : {"num_tc", "tc_width", "tc_depth", "num_vc", "vc_width", "glb_bytes"})
      p.design[i++] = std::stoll(row.at(name));
    p.hbm_bytes = std::stoll(row.at("hbm_bytes"));
    p.area_um2 = std::stod(row.at("area_um2"));
    p.mbs = std::stoll(row.at("micro_batch"));
    p.recompute = row.at("recompute") == "1";
    p.feasible = row.at("feasible") == "1";
    p.score = std::stod(row.at("average_samples_per_s"));
    p.line = line;
    out.push_back(p);
  }
  return out;
}

TEST(SearchEndToEnd, EveryPointMatchesBruteForce) {
  // Every point, not only the best: the search schedules a width only while its root-bound placement could
  // still win a point, which must leave every point's plan as scheduling every width does.
  TempDir dir;
  const auto r = run_phaze(small_args() + " --exhaustive --threads 2 --csv " + dir.file("all.csv"));
  ASSERT_EQ(r.status, 0) << r.err;
  std::map<PointKey, double> expect;
  brute_force({{kModel, kSeq}}, kTc, kVc, kWidth, kMbs, kHbmGib, &expect);
  const std::vector<CsvPoint> points = parse_points_csv(read(dir.file("all.csv")));
  ASSERT_EQ(points.size(), expect.size());
  int feasible = 0;
  for (const CsvPoint& p : points) {
    SCOPED_TRACE(p.line);
    const auto found = expect.find({p.design[0], p.design[3], p.design[1], p.hbm_bytes, p.mbs, p.recompute});
    ASSERT_NE(found, expect.end());
    EXPECT_EQ(p.feasible, found->second >= 0);
    if (p.feasible) {
      EXPECT_DOUBLE_EQ(p.score, found->second);
      ++feasible;
    }
  }
  EXPECT_GT(feasible, 0);
  EXPECT_LT(feasible, static_cast<int>(points.size()));
}

/// The documented total order of the answer: higher score, then the earlier design in canonical order
/// (num_tc, num_vc, width, vc_width, depth, GLB, each from the largest down), smaller HBM, smaller
/// micro-batch, recomputation off first.
bool ranks_before(const CsvPoint& a, const CsvPoint& b) {
  if (a.score != b.score) return a.score > b.score;
  auto key = [](const CsvPoint& p) {
    return std::make_tuple(-p.design[0], -p.design[3], -p.design[1], -p.design[4], -p.design[2], -p.design[5],
                           p.hbm_bytes, p.mbs, p.recompute);
  };
  return key(a) < key(b);
}

using CombinationKey = std::tuple<int64_t, int64_t, bool>;  // micro-batch, HBM bytes, recomputation

struct ReplayedCombination {
  int64_t buckets = 0, designs = 0;
  bool fired = false;
};

struct Replayed {
  std::map<CombinationKey, ReplayedCombination> combinations;
  std::set<std::string> explored;  ///< CSV lines
  std::optional<CsvPoint> best;
};

/// The stop rule of method.md 7 with D23, written out here over the points of an exhaustive run: per
/// combination, group the points by ⌊area / width⌋, visit the groups from the largest down, record each
/// group's best feasible score (groups with none are skipped), stop once the last `window` recorded scores
/// are non-increasing.
Replayed replay_bucket_rule(const std::vector<CsvPoint>& points, size_t window, double bucket_um2) {
  std::map<CombinationKey, std::map<int64_t, std::vector<const CsvPoint*>, std::greater<>>> groups;
  for (const CsvPoint& p : points)
    groups[{p.mbs, p.hbm_bytes, p.recompute}][static_cast<int64_t>(std::floor(p.area_um2 / bucket_um2))].push_back(&p);
  Replayed out;
  for (const auto& [combination, buckets] : groups) {
    ReplayedCombination& r = out.combinations[combination];
    std::vector<double> maxima;
    for (const auto& [bucket, members] : buckets) {
      ++r.buckets;
      r.designs += static_cast<int64_t>(members.size());
      std::optional<double> best;
      for (const CsvPoint* p : members) {
        out.explored.insert(p->line);
        if (p->feasible) {
          best = std::max(best.value_or(p->score), p->score);
          if (!out.best || ranks_before(*p, *out.best)) out.best = *p;
        }
      }
      if (!best) continue;
      maxima.push_back(*best);
      if (maxima.size() >= window) {
        bool non_increasing = true;
        for (size_t i = maxima.size() - window + 1; i < maxima.size(); ++i)
          non_increasing = non_increasing && maxima[i] <= maxima[i - 1];
        if (non_increasing) {
          r.fired = true;
          break;
        }
      }
    }
  }
  return out;
}

TEST(SearchEndToEnd, BucketSearchMatchesTheRuleReplayedOverTheExhaustiveCsv) {
  TempDir dir;
  const std::string question = joined(twelve_argv());
  const auto all = run_phaze(question + " --exhaustive --threads 2 --csv " + dir.file("all.csv"));
  ASSERT_EQ(all.status, 0) << all.err;
  const std::string all_csv = read(dir.file("all.csv"));
  const std::vector<CsvPoint> points = parse_points_csv(all_csv);
  ASSERT_EQ(points.size(), 12u * 3 * 3 * 2);

  // A window of 2 stops most combinations early, 5 some, 9 none (there are 8 buckets).
  for (size_t window : {2, 5, 9}) {
    SCOPED_TRACE(fmt::format("window {}", window));
    const Replayed expect = replay_bucket_rule(points, window, 20'000);
    ASSERT_TRUE(expect.best.has_value());
    const auto r = run_phaze(fmt::format("{}{} --stop-window {} --threads 2 -o {} --csv {}", question, kBucketArgs,
                                         window, dir.file("buckets.json"), dir.file("buckets.csv")));
    ASSERT_EQ(r.status, 0) << r.err;
    const json answer = json::parse(read(dir.file("buckets.json")));

    // The best point.
    const json& best = answer["best"];
    const CsvPoint& b = *expect.best;
    EXPECT_EQ(best["average_samples_per_s"].get<double>(), b.score);
    EXPECT_EQ(best["design"]["num_tc"], b.design[0]);
    EXPECT_EQ(best["design"]["tc_width"], b.design[1]);
    EXPECT_EQ(best["design"]["tc_depth"], b.design[2]);
    EXPECT_EQ(best["design"]["num_vc"], b.design[3]);
    EXPECT_EQ(best["design"]["glb_bytes"], b.design[5]);
    EXPECT_EQ(best["design"]["hbm_bytes"], b.hbm_bytes);
    EXPECT_EQ(best["micro_batch"], b.mbs);
    EXPECT_EQ(best["recompute"], b.recompute);

    // Where each combination stopped.
    int fired = 0;
    ASSERT_EQ(answer["search"]["combinations"].size(), expect.combinations.size());
    for (const json& c : answer["search"]["combinations"]) {
      const ReplayedCombination& e = expect.combinations.at(
          {c["micro_batch"].get<int64_t>(), c["hbm_bytes"].get<int64_t>(), c["recompute"].get<bool>()});
      EXPECT_EQ(c["buckets_visited"], e.buckets);
      EXPECT_EQ(c["designs_visited"], e.designs);
      EXPECT_EQ(c["stop_rule_fired"], e.fired);
      fired += e.fired;
    }
    if (window == 2) {
      EXPECT_GT(fired, 0);
    }
    if (window == 9) {
      EXPECT_EQ(fired, 0);
    }

    // The CSV lists exactly the explored points, as the exhaustive run printed them, in its order.
    std::string explored_csv = all_csv.substr(0, all_csv.find('\n') + 1);
    for (const CsvPoint& p : points)
      if (expect.explored.contains(p.line)) explored_csv += p.line + "\n";
    EXPECT_EQ(read(dir.file("buckets.csv")), explored_csv);
    EXPECT_EQ(answer["search"]["points_explored"], expect.explored.size());
    if (window == 9) {
      EXPECT_EQ(explored_csv, all_csv);
    }
    if (window == 2) {
      EXPECT_LT(expect.explored.size(), points.size());
    }
  }
}

TEST(SearchEndToEnd, NoFeasibleDesignIsAnAnswer) {
  TempDir dir;
  const auto r = run_phaze(fmt::format(
      "search --model '{}' --devices 8 --global-batch 16 --seq 64 --mbs 1 --hbm 0.00001 --tc 1 --vc 1 --width 8 "
      "--depth 8 --glb-mib 2 -o {}",
      kModel, dir.file("none.json")));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("no feasible design"), std::string::npos) << r.out;
  const json answer = json::parse(read(dir.file("none.json")));
  EXPECT_TRUE(answer["best"].is_null());
  EXPECT_EQ(answer["feasible_points"], 0);
  EXPECT_EQ(answer["points"], 2);
}

TEST(SearchEndToEnd, BadOptionsExitTwoNamingTheOption) {
  const std::string tiny = fmt::format("search --model '{}' --tc 1 --vc 1 --width 8 --depth 8 --glb-mib 2", kModel);
  phaze_test::expect_input_error(run_phaze("search --model no-such-model"), "no-such-model");
  phaze_test::expect_input_error(run_phaze(tiny + " --mbs 0"), "--mbs");
  phaze_test::expect_input_error(run_phaze(tiny + " --mbs 3"), "--mbs 3");
  phaze_test::expect_input_error(run_phaze(tiny + " --mbs 1,x"), "--mbs");
  phaze_test::expect_input_error(run_phaze(tiny + " --mbs 2,2"), "--mbs 2");
  phaze_test::expect_input_error(run_phaze(tiny + " --hbm -1"), "--hbm");
  phaze_test::expect_input_error(run_phaze(tiny + " --hbm nan"), "--hbm");
  phaze_test::expect_input_error(run_phaze(tiny + " --tp 3"), "tp");
  phaze_test::expect_input_error(run_phaze(tiny + " --tp 16 --devices 8"), "--tp 16");
  phaze_test::expect_input_error(run_phaze(tiny + " --devices 0"), "--devices");
  phaze_test::expect_input_error(run_phaze(tiny + " --global-batch -4"), "--global-batch");
  phaze_test::expect_input_error(run_phaze(tiny + " --link-bandwidth 0"), "--link-bandwidth");
  phaze_test::expect_input_error(run_phaze(tiny + " --link-bandwidth inf"), "--link-bandwidth");
  phaze_test::expect_input_error(run_phaze(tiny + " --threads -1"), "--threads");
  phaze_test::expect_input_error(run_phaze(tiny + " --top -1"), "--top");
  phaze_test::expect_input_error(run_phaze(tiny + " --seq 0"), "--seq");
  phaze_test::expect_input_error(run_phaze(tiny + " --seq 4096"), "seq");
  phaze_test::expect_input_error(run_phaze(tiny + " --seq 64,64"), "--seq");
  phaze_test::expect_input_error(run_phaze(tiny + " --recompute maybe"), "--recompute");
  phaze_test::expect_input_error(run_phaze(tiny + " --optimizer lamb"), "--optimizer");
  phaze_test::expect_input_error(run_phaze(tiny + " --schedule-nodes -3"), "--schedule-nodes '-3'");
  phaze_test::expect_input_error(run_phaze(tiny + " --stop-window 0"), "--stop-window '0'");
  phaze_test::expect_input_error(run_phaze(tiny + " --bucket-um2 0"), "--bucket-um2");
  phaze_test::expect_input_error(run_phaze(tiny + " --bucket-um2 -5"), "--bucket-um2");
  phaze_test::expect_input_error(run_phaze(tiny + " --bucket-um2 inf"), "--bucket-um2");
  phaze_test::expect_input_error(run_phaze(tiny + " --stop-window 3"),
                                 "--stop-window: applies to --stop-rule buckets only");
  phaze_test::expect_input_error(run_phaze(tiny + " --bucket-um2 5000 --exhaustive"), "--bucket-um2");
  phaze_test::expect_input_error(run_phaze(tiny + " --stop-rule soon"), "--stop-rule");
  phaze_test::expect_input_error(run_phaze(tiny + " --progress sometimes"), "--progress");
  // A budget that looks like mm² given in µm² says so.
  phaze_test::expect_input_error(run_phaze(fmt::format("search --model '{}' --budget-um2 280", kModel)),
                                 "the budget of 280 µm² is 0.00028 mm², smaller than any chip: for 280 mm² give "
                                 "--budget-mm2 280");
  phaze_test::expect_input_error(run_phaze(tiny + " --stop-rule buckets --exhaustive"), "--exhaustive");
  phaze_test::expect_input_error(run_phaze(tiny + " --lower-fraction 2"), "--lower-fraction");
  phaze_test::expect_input_error(run_phaze(tiny + " --budget-um2 -5"), "--budget-um2");
  phaze_test::expect_input_error(run_phaze(tiny + " --budget no-such-arch"), "no-such-arch");
  phaze_test::expect_input_error(run_phaze(fmt::format("search --model '{}' --tc 3", kModel)), "--tc 3");
  phaze_test::expect_input_error(run_phaze(fmt::format("search --model '{}' --glb-mib 256", kModel)), "--glb-mib 256");
  phaze_test::expect_input_error(run_phaze(fmt::format("search --model '{}' --width 1", kModel)), "--width 1");
  // An empty design space: nothing of 8 tensor cores fits in 1 µm².
  phaze_test::expect_input_error(run_phaze(fmt::format("search --model '{}' --tc 8 --budget-um2 1", kModel)),
                                 "design space");
  phaze_test::expect_input_error(run_phaze("search"), "--model");
}

}  // namespace
