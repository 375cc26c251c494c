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
  double throughput = -1;
  phaze::hw::Architecture design;
  int64_t hbm_bytes = 0, mbs = 0, width = 0, data_parallel = 0, stages = 0;
  bool recompute = false;
};

/// Every combination, evaluated with the earlier stages directly: designs from the enumeration, per layer pass
/// the exact schedule of the accelerator model's estimates, a chain per width written out here, the planner
/// per width with the corrected terms (SGD: 3 bytes of HBM traffic per parameter byte at 1.2e12 B/s). Visits
/// points in the documented tie order (design, HBM ascending, micro-batch ascending, recomputation off first)
/// and keeps the first of the highest throughput.
BruteBest brute_force() {
  const phaze::model::ModelSpec spec = phaze::model::load_model(kModel);
  phaze::hw::EnumerationOptions options;
  options.lower_fraction = 0;
  options.base.link_bandwidth = kLinkGibS * kGiB;
  std::vector<phaze::hw::Design> designs;
  for (const phaze::hw::Design& d : phaze::hw::enumerate_designs(options))
    if (contains(kTc, d.arch.num_tc) && contains(kVc, d.arch.num_vc) && contains(kWidth, d.arch.tc_width) &&
        contains(kDepth, d.arch.tc_depth) && d.arch.glb_bytes == (2 << 20))
      designs.push_back(d);
  EXPECT_EQ(designs.size(), 8u);

  auto solver = phaze::schedule::make_exact_solver();
  BruteBest best;
  for (const phaze::hw::Design& design : designs) {
    phaze::cost::Estimator estimator;
    // chains[mbs][t index] for t = 1, 2, 4 (all divide the 4 heads)
    std::vector<std::vector<phaze::placement::Chain>> chains;
    for (int64_t b : kMbs) {
      auto& per_mbs = chains.emplace_back();
      for (int64_t t : {1, 2, 4}) {
        const auto graph =
            phaze::model::build_layer_graph(spec, phaze::model::Shape{kSeq, b, t}, phaze::model::Precision{}, "tiny");
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
    for (double hbm_gib : kHbmGib) {
      const int64_t hbm = std::llround(hbm_gib * kGiB);
      for (size_t bi = 0; bi < kMbs.size(); ++bi)
        for (bool rc : {false, true}) {
          phaze::placement::Cluster cluster;
          cluster.devices = kDevices;
          cluster.memory_bytes = double(hbm);
          cluster.bandwidth = kLinkGibS * kGiB;
          cluster.micro_batches = kBatch / kMbs[bi];
          cluster.recompute = rc;
          cluster.corrected.enabled = true;
          cluster.corrected.optimizer_seconds_per_byte = 3.0 / 1.2e12;
          phaze::placement::Planner planner;
          for (const phaze::placement::Chain& chain : chains[bi]) {
            const phaze::placement::Plan plan = planner.solve(chain, cluster);
            if (!plan.feasible) continue;
            const double throughput = double(kBatch) / plan.time_per_batch;
            if (throughput > best.throughput) {
              best = {
                  throughput, design.arch, hbm, kMbs[bi], plan.width, plan.data_parallel, int64_t(plan.stages.size()),
                  rc};
            }
          }
        }
    }
  }
  return best;
}

TEST(SearchEndToEnd, BestAnswerMatchesBruteForce) {
  TempDir dir;
  const auto r = run_phaze(small_args() + " --threads 2 -o " + dir.file("answer.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  const json answer = json::parse(read(dir.file("answer.json")));
  const BruteBest expect = brute_force();
  ASSERT_GT(expect.throughput, 0);

  EXPECT_EQ(answer["points"], 8 * 3 * 3 * 2);
  const json& best = answer["best"];
  ASSERT_TRUE(best.is_object());
  EXPECT_DOUBLE_EQ(best["average_samples_per_s"].get<double>(), expect.throughput);
  EXPECT_EQ(best["design"]["num_tc"], expect.design.num_tc);
  EXPECT_EQ(best["design"]["num_vc"], expect.design.num_vc);
  EXPECT_EQ(best["design"]["tc_width"], expect.design.tc_width);
  EXPECT_EQ(best["design"]["tc_depth"], expect.design.tc_depth);
  EXPECT_EQ(best["design"]["glb_bytes"], expect.design.glb_bytes);
  EXPECT_EQ(best["design"]["hbm_bytes"], expect.hbm_bytes);
  EXPECT_EQ(best["micro_batch"], expect.mbs);
  EXPECT_EQ(best["recompute"], expect.recompute);
  const json& m = best["models"][0];
  EXPECT_DOUBLE_EQ(m["samples_per_s"].get<double>(), expect.throughput);
  EXPECT_DOUBLE_EQ(m["tokens_per_s"].get<double>(), expect.throughput * kSeq);
  EXPECT_EQ(m["plan"]["tensor_parallel"], expect.width);
  EXPECT_EQ(m["plan"]["data_parallel"], expect.data_parallel);
  EXPECT_EQ(m["plan"]["pipeline_stages"], expect.stages);
  const json& parts = m["time_per_batch_parts_s"];
  EXPECT_NEAR(parts["pipeline_steady_state"].get<double>() + parts["pipeline_fill_drain"].get<double>() +
                  parts["data_parallel_sync"].get<double>() + parts["optimizer_step"].get<double>(),
              kBatch / expect.throughput, 1e-12);
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
