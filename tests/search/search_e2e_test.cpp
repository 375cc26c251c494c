// End-to-end tests of `phaze search` on a three-layer GPT-2-style model and a small design space: the answer
// against a brute-force loop over every combination that calls the earlier stages directly, identical
// answers for one and two threads, resuming after SIGKILL at random moments, bad options, no feasible design.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "hw/enumerate.h"
#include "model/hf_config.h"
#include "model/layer_graph.h"
#include "placement/planner.h"
#include "schedule/layer_problem.h"
#include "support/run_phaze.h"
#include "support/temp_dir.h"

namespace {

using nlohmann::json;
using phaze_test::run_phaze;
using phaze_test::TempDir;

const std::string kModel = std::string(PHAZE_TEST_DATA) + "/hf/tiny-gpt2/config.json";
constexpr double kGiB = 1073741824.0;

// The small question: 8 designs × 3 HBM sizes × 3 micro-batch sizes × 2 recomputation settings. The memory
// limits (about 0.43, 0.86 and 2.1 MB) make some points infeasible and push others to several stages, and
// the slow link makes the width and data-parallel degree matter.
const std::vector<int64_t> kTc{1, 2}, kVc{1, 2}, kWidth{8, 16}, kDepth{8}, kMbs{1, 2, 4};
const std::vector<double> kHbmGib{0.0004, 0.0008, 0.002};
constexpr int64_t kDevices = 8, kBatch = 16, kSeq = 64;
constexpr double kLinkGibS = 0.5;

std::string small_args() {
  return fmt::format(
      "search --model '{}' --devices {} --global-batch {} --seq {} --mbs 1,2,4 --hbm 0.0004,0.0008,0.002 --tc 1,2 "
      "--vc 1,2 --width 8,16 --depth 8 --glb-mib 2 --lower-fraction 0 --link-bandwidth {}",
      kModel, kDevices, kBatch, kSeq, kLinkGibS);
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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
/// the first of the highest score.
BruteBest brute_force(const std::vector<ModelAt>& models, const std::vector<int64_t>& tcs,
                      const std::vector<int64_t>& vcs, const std::vector<int64_t>& widths,
                      const std::vector<int64_t>& mbs_list, const std::vector<double>& hbm_gib_list) {
  phaze::hw::EnumerationOptions options;
  options.lower_fraction = 0;
  options.base.link_bandwidth = kLinkGibS * kGiB;
  std::vector<phaze::hw::Design> designs;
  for (const phaze::hw::Design& d : phaze::hw::enumerate_designs(options))
    if (contains(tcs, d.arch.num_tc) && contains(vcs, d.arch.num_vc) && contains(widths, d.arch.tc_width) &&
        contains(kDepth, d.arch.tc_depth) && d.arch.glb_bytes == (2 << 20))
      designs.push_back(d);
  EXPECT_EQ(designs.size(), tcs.size() * vcs.size() * widths.size());

  auto solver = phaze::schedule::make_exact_solver();
  BruteBest best;
  for (const phaze::hw::Design& design : designs) {
    phaze::cost::Estimator estimator;
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
          cluster.bandwidth = kLinkGibS * kGiB;
          cluster.micro_batches = kBatch / mbs_list[bi];
          cluster.recompute = rc;
          cluster.corrected.enabled = true;
          cluster.corrected.optimizer_seconds_per_byte = 3.0 / 1.2e12;
          phaze::placement::Planner planner;
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
          if (*std::min_element(throughputs.begin(), throughputs.end()) < 0) continue;  // a model has no plan
          double sum = 0;
          for (double x : throughputs) sum += x;
          const double score = sum / double(models.size());
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
  const auto r = run_phaze(small_args() + " --threads 2 -o " + dir.file("answer.json"));
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
      "--link-bandwidth {}",
      kModel, kDevices, kBatch, kSeq, kLinkGibS);
  const auto wide = run_phaze(common + " --tc 1,2 --vc 1,2 --width 8,16 --depth 8 --glb-mib 2 --lower-fraction 0 -o " +
                              dir.file("wide.json"));
  ASSERT_EQ(wide.status, 0) << wide.err;
  const auto tpu = run_phaze(common + " --tc 8 --vc 2 --width 128 --depth 128 --glb-mib 128 -o " + dir.file("tpu.json"));
  ASSERT_EQ(tpu.status, 0) << tpu.err;
  const json a = json::parse(read(dir.file("wide.json"))), b = json::parse(read(dir.file("tpu.json")));
  ASSERT_TRUE(b["best"].is_object());
  const json& baseline = a["baselines"]["tpuv4_like"];
  ASSERT_TRUE(baseline.is_object());
  EXPECT_EQ(baseline["design"], b["best"]["design"]);
  EXPECT_DOUBLE_EQ(baseline["average_samples_per_s"].get<double>(), b["best"]["average_samples_per_s"].get<double>());
  EXPECT_EQ(baseline["micro_batch"], b["best"]["micro_batch"]);
  EXPECT_EQ(baseline["recompute"], b["best"]["recompute"]);
  EXPECT_DOUBLE_EQ(baseline["speedup_of_best"].get<double>(), a["best"]["average_samples_per_s"].get<double>() /
                                                                   baseline["average_samples_per_s"].get<double>());
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
      "--tc 1 --vc 1,2,4,8 --width 16 --depth 8 --glb-mib 2 --lower-fraction 0 --link-bandwidth {} --threads 2 -o {}",
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
  const auto one =
      run_phaze(small_args() + " --threads 1 --top 10 -o " + dir.file("1.json") + " --csv " + dir.file("1.csv"));
  const auto two =
      run_phaze(small_args() + " --threads 2 --top 10 -o " + dir.file("2.json") + " --csv " + dir.file("2.csv"));
  ASSERT_EQ(one.status, 0) << one.err;
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_EQ(read(dir.file("1.json")), read(dir.file("2.json")));
  const std::string csv = read(dir.file("1.csv"));
  EXPECT_EQ(csv, read(dir.file("2.csv")));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 8 * 3 * 3 * 2);  // header and every point
}

/// Starts `phaze args...` with output discarded; returns its pid.
pid_t spawn(const std::vector<std::string>& args) {
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

TEST(SearchEndToEnd, ResumesAfterSigkillWithTheIdenticalAnswer) {
  TempDir dir;
  const std::string db = dir.file("results.sqlite");
  const std::vector<std::string> args{"search",
                                      "--model",
                                      kModel,
                                      "--devices",
                                      "8",
                                      "--global-batch",
                                      "16",
                                      "--seq",
                                      "64",
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
                                      "0.5",
                                      "--threads",
                                      "2",
                                      "--db",
                                      db};
  std::mt19937 random(12345);  // fixed seed: the same kill moments on every run of the test
  std::uniform_int_distribution<int> delay_ms(20, 400);
  for (int round = 0; round < 4; ++round) {
    const pid_t pid = spawn(args);
    ASSERT_GT(pid, 0);
    ::usleep(static_cast<useconds_t>(delay_ms(random)) * 1000);
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  const auto resumed = run_phaze(small_args() + " --threads 2 --db " + db + " -o " + dir.file("resumed.json"));
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  const auto fresh = run_phaze(small_args() + " --threads 1 -o " + dir.file("fresh.json"));
  ASSERT_EQ(fresh.status, 0) << fresh.err;
  EXPECT_EQ(read(dir.file("resumed.json")), read(dir.file("fresh.json")));

  // A complete results file: a further run evaluates nothing and gives the same answer again.
  const auto again = run_phaze(small_args() + " --db " + db + " -o " + dir.file("again.json"));
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.out.find("0 points evaluated, 144 resumed"), std::string::npos) << again.out;
  EXPECT_EQ(read(dir.file("again.json")), read(dir.file("fresh.json")));
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
  phaze_test::expect_input_error(run_phaze(tiny + " --schedule-nodes -3"), "--schedule-nodes -3");
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
