// The baselines of a search answer (method.md 8): the hand-set Megatron-style table and stage rule (D26),
// a hand-set plan's time per batch against the closed-form formula of placement.md with the corrected
// terms, infeasible plans with their reasons (D25), the Spotlight-style argmin against a brute-force loop
// that schedules every design, and end to end through `phaze search`: the strict 32 GiB TPUv4-like point
// against a search of that chip alone, the Spotlight-style baseline against a search of its design alone,
// and a preset's hand-set plan recomputed from the reported layer latencies.

#include "search/baselines.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cost/cost_params.h"
#include "model/hf_config.h"
#include "model/layer_graph.h"
#include "model/presets.h"
#include "schedule/layer_problem.h"
#include "support/run_phaze.h"
#include "support/temp_dir.h"

namespace {

using namespace phaze;
using nlohmann::json;
using phaze_test::parse_json;
using phaze_test::run_phaze;
using phaze_test::TempDir;

const std::string kGpt2 = std::string(PHAZE_TEST_DATA) + "/hf/tiny-gpt2/config.json";  // L = 3, h = 64
constexpr double kGiB = 1073741824.0;

search::ModelCase model_case(const std::string& source, int64_t seq, std::vector<int64_t> widths = {1}) {
  search::ModelCase m;
  m.source = source;
  m.spec = model::load_model(source);
  m.seq = seq;
  m.widths = std::move(widths);
  return m;
}

/// Eight devices, 16 sequences per batch, a slow link: tiny-gpt2 at seq 64.
search::SearchQuestion small_question() {
  search::SearchQuestion q;
  q.models = {model_case(kGpt2, 64)};
  q.devices = 8;
  q.global_batch = 16;
  q.micro_batches = {1, 2};
  q.hbm_bytes = {1ll << 30};
  q.network = hw::one_tier_network(0.5 * kGiB);
  q.space.lower_fraction = 0;
  return q;
}

/// One tensor core of 8 × 8, one vector core, 2 MiB of GLB, as the search's enumeration builds it.
hw::Architecture small_design(const search::SearchQuestion& q, int64_t hbm_bytes) {
  hw::Architecture a;
  a.num_tc = 1;
  a.tc_width = 8;
  a.tc_depth = 8;
  a.num_vc = 1;
  a.vc_width = 8;
  a.glb_bytes = 2 << 20;
  a.hbm_bytes = hbm_bytes;
  return search::point_architecture(q, a);
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SearchBaselines, MegatronTableByPresetName) {
  using P = placement::HandSetPlan;
  EXPECT_EQ(search::megatron_table_plan("opt-350m"), (P{12, 1, 85}));
  EXPECT_EQ(search::megatron_table_plan("bert-large"), (P{8, 1, 128}));
  EXPECT_EQ(search::megatron_table_plan("gpt2-xl"), (P{32, 1, 32}));
  EXPECT_EQ(search::megatron_table_plan("megatron-bert"), (P{8, 1, 128}));
  EXPECT_EQ(search::megatron_table_plan("megatron-gpt2-xl"), (P{8, 1, 128}));
  EXPECT_EQ(search::megatron_table_plan("megatron-gpt2-54"), (P{8, 4, 32}));
  EXPECT_EQ(search::megatron_table_plan("megatron-gpt2-72"), (P{8, 8, 16}));
  EXPECT_EQ(search::megatron_table_plan("gpt3-175b"), (P{32, 4, 8}));
  EXPECT_EQ(search::megatron_table_plan("llama2-7b"), (P{8, 1, 128}));
  EXPECT_FALSE(search::megatron_table_plan(kGpt2).has_value());
  EXPECT_FALSE(search::megatron_table_plan("gpt2").has_value());
  // Every dense model of the seed zoo (method.md 8.2) has a row, and its width divides the heads (the plan is
  // buildable); the table has no mixture of experts and none of the models added since.
  const std::set<std::string> zoo{"opt-350m",         "bert-large",       "gpt2-xl",
                                  "megatron-bert",    "megatron-gpt2-xl", "megatron-gpt2-54",
                                  "megatron-gpt2-72", "gpt3-175b",        "llama2-7b"};
  for (const std::string& name : model::preset_names()) {
    const auto plan = search::megatron_table_plan(name);
    if (zoo.count(name) == 0) {
      EXPECT_FALSE(plan.has_value()) << name;
      continue;
    }
    ASSERT_TRUE(plan.has_value()) << name;
    EXPECT_EQ(model::find_preset(name)->heads % plan->width, 0) << name;
  }
}

TEST(SearchBaselines, StagesOfTwentyFourLayersInEight) {
  // ⌈24/8⌉ = 3 layers per stage; the embedding (position 0) joins the first, the head (25) the last.
  const std::vector<placement::Stage> expect = {{0, 4, 1},   {4, 7, 1},   {7, 10, 1},  {10, 13, 1},
                                                {13, 16, 1}, {16, 19, 1}, {19, 22, 1}, {22, 26, 1}};
  EXPECT_EQ(placement::hand_set_stages(24, {8, 1, 128}), expect);
}

TEST(SearchBaselines, StagesWithARemainder) {
  // 54 layers in 8 stages: ⌈54/8⌉ = 7 per stage, the last gets the remaining 54 − 7·7 = 5 and the head.
  const std::vector<placement::Stage> expect = {{0, 8, 4},   {8, 15, 4},  {15, 22, 4}, {22, 29, 4},
                                                {29, 36, 4}, {36, 43, 4}, {43, 50, 4}, {50, 56, 4}};
  EXPECT_EQ(placement::hand_set_stages(54, {8, 4, 32}), expect);
  // 3 layers in 2 stages: embedding and layers 1–2, then layer 3 and the head.
  EXPECT_EQ(placement::hand_set_stages(3, {2, 1, 1}), (std::vector<placement::Stage>{{0, 3, 1}, {3, 5, 1}}));
  // 48 layers in 32 stages (the table's GPT-2 XL row): 2 per stage fill 24 stages; stages 25–31 are empty and
  // the last holds the head alone.
  const auto gpt2 = placement::hand_set_stages(48, {32, 1, 32});
  ASSERT_EQ(gpt2.size(), 32u);
  EXPECT_EQ(gpt2[23], (placement::Stage{47, 49, 1}));
  for (size_t k = 24; k < 31; ++k) EXPECT_EQ(gpt2[k].first, gpt2[k].last) << k;
  EXPECT_EQ(gpt2[31], (placement::Stage{49, 50, 1}));
}

/// Forward and backward makespans of the embedding, transformer layer and head, scheduled here directly.
std::array<double, 6> pass_latencies(const model::LayerGraph& g, const hw::Architecture& design) {
  auto solver = schedule::make_exact_solver();
  cost::Estimator estimator;
  std::array<double, 6> out{};
  const model::Layer* layers[3] = {&g.embedding, &g.transformer, &g.head};
  for (size_t k = 0; k < 3; ++k) {
    out[2 * k] = solver->solve(schedule::layer_problem(layers[k]->forward, design, estimator)).makespan_s;
    out[2 * k + 1] = solver->solve(schedule::layer_problem(layers[k]->backward, design, estimator)).makespan_s;
  }
  return out;
}

TEST(SearchBaselines, HandSetTimeIsTheClosedForm) {
  // tiny-gpt2 (3 layers) in p = 2 stages on t = 1, d = 2 replicas, micro-batch 2 (N = 8 micro-batches):
  // stage A = embedding, layers 1–2; stage B = layer 3, head. The boundary tensor is 2·b·s·h bytes.
  search::SearchQuestion q = small_question();
  const hw::Architecture design = small_design(q, 1ll << 30);
  const int64_t b = 2;
  const model::LayerGraph g =
      model::build_layer_graph(q.models[0].spec, model::Shape{64, b, 1}, model::Precision{}, "tiny");
  const auto [ef, eb, tf, tb, hf, hb] = pass_latencies(g, design);
  const double bw = 0.5 * kGiB, edge = 2.0 * b * 64 * 64 / bw;
  const double params_a = double(g.embedding.parameter_bytes + 2 * g.transformer.parameter_bytes);
  const double params_b = double(g.transformer.parameter_bytes + g.head.parameter_bytes);
  const double p_max = std::max(params_a, params_b);
  const double d = 2, sync = 2 * (d - 1) / d * p_max / bw + 2 * (d - 1) * 0.0;  // the one link has no latency term
  const double optimizer = p_max * 3 / design.hbm_bandwidth;
  const double slots = 8 / 2 + 2 - 1;  // ⌈N/d⌉ + p − 1
  search::ScheduleCache cache;
  search::Scheduling s = search::make_scheduling(q, cache);

  for (bool recompute : {false, true}) {
    SCOPED_TRACE(recompute ? "recomputation on" : "recomputation off");
    // Stage A: forward from time 0; backward starts when the gradient from B has crossed the link. With
    // recomputation it re-runs its forward first (placement.md: backward floored by F0 = Σ forward).
    const double fa = ef + 2 * tf;
    const double ba = recompute ? std::max(fa, edge) + 2 * tb + eb : edge + 2 * tb + eb;
    // Stage B (last, never recomputes): forward waits for the activation, backward from time 0.
    const double fb = edge + tf + hf, bb = hb + tb;
    const double load = std::max(fa + ba, fb + bb);
    const double expect = load * slots + sync + optimizer;

    const search::HandSetOutcome h = search::evaluate_hand_set_plan(q, 0, {2, 1, 2}, design, b, recompute, s);
    ASSERT_TRUE(h.feasible) << h.reason;
    EXPECT_EQ(h.stages, (std::vector<placement::Stage>{{0, 3, 1}, {3, 5, 1}}));
    EXPECT_NEAR(h.time_per_batch_s, expect, 1e-12 * expect);
    EXPECT_NEAR(h.parts.steady_state, load * 4, 1e-12 * expect);
    EXPECT_NEAR(h.parts.fill_drain, load, 1e-12 * expect);
    EXPECT_NEAR(h.parts.data_parallel_sync, sync, 1e-12 * expect);
    EXPECT_NEAR(h.parts.optimizer_step, optimizer, 1e-12 * expect);
    EXPECT_DOUBLE_EQ(h.samples_per_s, 16 / h.time_per_batch_s);
  }
}

TEST(SearchBaselines, InfeasibleHandSetPlansSayWhy) {
  search::SearchQuestion q = small_question();
  search::ScheduleCache cache;
  search::Scheduling s = search::make_scheduling(q, cache);
  const hw::Architecture roomy = small_design(q, 1ll << 30);
  auto reason = [&](const placement::HandSetPlan& plan, const hw::Architecture& design, int64_t b) {
    const search::HandSetOutcome h = search::evaluate_hand_set_plan(q, 0, plan, design, b, false, s);
    EXPECT_TRUE(h.has_plan);
    EXPECT_FALSE(h.feasible);
    return h.reason;
  };
  // A few hundred bytes of HBM hold no stage.
  EXPECT_NE(reason({2, 1, 2}, small_design(q, 400), 1).find("memory"), std::string::npos);
  // 3 · 1 · 4 = 12 devices of 8.
  EXPECT_NE(reason({3, 1, 4}, roomy, 1).find("12 devices"), std::string::npos);
  // Micro-batch 2: 8 micro-batches, fewer than 16 replicas (on 2 · 16 = 32 devices of 64).
  q.devices = 64;
  EXPECT_NE(reason({2, 1, 16}, roomy, 2).find("8 micro-batches"), std::string::npos);
  // 3 layers in 5 stages of ⌈3/5⌉ = 1: the fourth stage has none.
  EXPECT_NE(reason({5, 1, 1}, roomy, 1).find("stage 4 of 5 empty"), std::string::npos);
  // A width the search did not try (the question's widths are {1}) is scheduled anyway.
  const search::HandSetOutcome wide = search::evaluate_hand_set_plan(q, 0, {2, 2, 2}, roomy, 1, false, s);
  EXPECT_TRUE(wide.feasible) << wide.reason;
  EXPECT_EQ(wide.stages, (std::vector<placement::Stage>{{0, 3, 2}, {3, 5, 2}}));
}

TEST(SearchBaselines, ModelOutsideTheTableHasNoPlan) {
  search::SearchQuestion q = small_question();
  search::ScheduleCache cache;
  search::Scheduling s = search::make_scheduling(q, cache);
  search::PointOutcome point;
  point.design = small_design(q, 1ll << 30);
  point.micro_batch = 1;
  point.models.resize(1);
  const auto plans = search::hand_set_at(q, point, s);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_FALSE(plans[0].has_plan);
  EXPECT_FALSE(plans[0].feasible);
  EXPECT_NE(plans[0].reason.find("no hand-set plan"), std::string::npos);
}

std::string describe(const hw::Design& d) {
  return fmt::format("{} × {}×{} TC, {} VC, {} MiB GLB, {} µm²", d.arch.num_tc, d.arch.tc_width, d.arch.tc_depth,
                     d.arch.num_vc, d.arch.glb_bytes >> 20, d.area_um2);
}

TEST(SearchBaselines, SpotlightArgminMatchesBruteForce) {
  // Two models (tiny-gpt2 at sequence lengths 64 and 32) over 16 designs; GLB sizes that no tile of these layers
  // fills give designs of equal latency, which the smaller area must win.
  search::SearchQuestion q = small_question();
  q.models = {model_case(kGpt2, 64), model_case(kGpt2, 32)};
  q.filter.num_tc = {1, 2};
  q.filter.num_vc = {1, 2};
  q.filter.width = {8, 16};
  q.filter.depth = {8};
  q.filter.glb_bytes = {2 << 20, 4 << 20};
  const std::vector<hw::Design> designs = search::search_designs(q);
  ASSERT_EQ(designs.size(), 16u);

  for (int64_t b : {1, 2}) {
    SCOPED_TRACE(fmt::format("micro-batch {}", b));
    // Brute force: every design, every pass scheduled; Σ (forward + backward) over embedding, L layers and
    // head, per sample, averaged over the models; ties by area, then canonical order.
    std::vector<std::array<double, 6>> per_model_passes;
    double best = std::numeric_limits<double>::infinity();
    size_t best_index = 0;
    for (size_t i = 0; i < designs.size(); ++i) {
      double sum = 0;
      for (const search::ModelCase& m : q.models) {
        const auto g = model::build_layer_graph(m.spec, model::Shape{m.seq, b, 1}, model::Precision{}, "m");
        const auto [ef, eb, tf, tb, hf, hb] = pass_latencies(g, designs[i].arch);
        sum += ((ef + eb) + double(m.spec.num_layers) * (tf + tb) + (hf + hb)) / double(b);
      }
      const double objective = sum / double(q.models.size());
      if (std::tie(objective, designs[i].area_um2, i) < std::tie(best, designs[best_index].area_um2, best_index)) {
        best = objective;
        best_index = i;
      }
    }
    // As the search runs it (these passes are all proven within the quick nodes), with every pass first
    // bounded by the solver's probes before it is scheduled, and with every pass scheduled exactly.
    for (const int64_t quick_nodes : {search::kSpotlightQuickNodes, int64_t{0}, int64_t{-1}}) {
      SCOPED_TRACE(fmt::format("quick nodes {}", quick_nodes));
      search::ScheduleCache cache;
      search::Scheduling s = search::make_scheduling(q, cache);
      const search::SpotlightChoice choice = search::spotlight_choice(q, designs, b, s, quick_nodes);
      ASSERT_TRUE(choice.found);
      EXPECT_EQ(describe(choice.design), describe(designs[best_index]));
      EXPECT_DOUBLE_EQ(choice.seconds_per_sample, best);
      // The bounds spare most designs their estimates and schedules (here 4 estimated, 2 scheduled of 16).
      EXPECT_LE(choice.designs_scheduled, choice.designs_estimated);
      EXPECT_LT(choice.designs_estimated, static_cast<int64_t>(designs.size()));
    }
  }
}

TEST(SearchBaselines, SpotlightArgminsTakenByThreadsAreTheArgminsOneByOne) {
  // Threads of the search take the argmins of the micro-batch sizes in any order, or none of them (take()
  // computes what is left): the choices are those of each size on its own, in the question's order.
  search::SearchQuestion q = small_question();
  q.models = {model_case(kGpt2, 64)};
  q.micro_batches = {1, 2, 4};
  q.filter.num_tc = {1, 2};
  q.filter.num_vc = {1, 2};
  q.filter.width = {8, 16};
  q.filter.depth = {8};
  q.filter.glb_bytes = {2 << 20};
  const std::vector<hw::Design> designs = search::search_designs(q);
  search::ScheduleCache shared;
  search::SpotlightArgmins by_threads(q, designs, shared);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) threads.emplace_back([&] { by_threads.work(); });
  for (std::thread& t : threads) t.join();
  search::ScheduleCache own;
  search::SpotlightArgmins untaken(q, designs, own);
  for (std::vector<search::SpotlightChoice> choices : {by_threads.take(), untaken.take()}) {
    ASSERT_EQ(choices.size(), 3u);
    for (size_t i = 0; i < choices.size(); ++i) {
      search::ScheduleCache cache;
      search::Scheduling s = search::make_scheduling(q, cache);
      const search::SpotlightChoice alone = search::spotlight_choice(q, designs, q.micro_batches[i], s);
      ASSERT_TRUE(alone.found && choices[i].found);
      EXPECT_EQ(choices[i].micro_batch, q.micro_batches[i]);
      EXPECT_EQ(describe(choices[i].design), describe(alone.design));
      EXPECT_EQ(choices[i].seconds_per_sample, alone.seconds_per_sample);
    }
  }
  EXPECT_GT(by_threads.seconds(), 0.0);
}

// ---- End to end ----

const std::string kSmall = fmt::format(
    "search --model '{}' --devices 8 --global-batch 16 --seq 64 --mbs 1,2,4 --hbm 0.0004,0.0008,0.002 "
    "--link-bandwidth 0.5 --phaze-compat",
    kGpt2);
const std::string kSmallSpace = " --tc 1,2 --vc 1,2 --width 8,16 --depth 8 --glb-mib 2 --lower-fraction 0";

json search_json(const std::string& args) {
  TempDir dir;
  const auto r = run_phaze(args + " -o " + dir.file("answer.json"));
  EXPECT_EQ(r.status, 0) << r.err;
  return parse_json(read(dir.file("answer.json")));
}

TEST(SearchBaselinesEndToEnd, StrictPointIsASearchOfTheChipWith32GiB) {
  // The question's HBM sizes do not include 32 GiB; the strict point must still be the TPUv4-like chip at
  // exactly 32 GiB, as a search of that chip alone with --hbm 32 finds it.
  const json wide = search_json(kSmall + kSmallSpace);
  const json chip =
      search_json(fmt::format("search --model '{}' --devices 8 --global-batch 16 --seq 64 --mbs 1,2,4 --hbm 32 "
                              "--link-bandwidth 0.5 --phaze-compat --tc 8 "
                              "--vc 2 --width 128 --depth 128 --glb-mib 128",
                              kGpt2));
  ASSERT_TRUE(chip.at("best").is_object());
  const json& strict = wide.at("baselines").at("tpuv4_like_32gib");
  ASSERT_TRUE(strict.is_object());
  EXPECT_EQ(strict.at("design"), chip.at("best").at("design"));
  EXPECT_EQ(strict.at("design").at("hbm_bytes"), 32ll << 30);
  EXPECT_EQ(strict.at("micro_batch"), chip.at("best").at("micro_batch"));
  EXPECT_EQ(strict.at("recompute"), chip.at("best").at("recompute"));
  EXPECT_EQ(strict.at("models"), chip.at("best").at("models"));
  EXPECT_DOUBLE_EQ(strict.at("average_samples_per_s").get<double>(),
                   chip.at("best").at("average_samples_per_s").get<double>());
  EXPECT_DOUBLE_EQ(
      strict.at("speedup_of_best").get<double>(),
      wide.at("best").at("average_samples_per_s").get<double>() / strict.at("average_samples_per_s").get<double>());
  // The model is a config.json: no hand-set plan, said so at both points.
  for (const char* at : {"on_best", "on_tpuv4_like"}) {
    const json& m = wide.at("baselines").at("megatron_hand_set").at(at).at("models").at(0);
    EXPECT_TRUE(m.at("plan").is_null()) << at;
    EXPECT_EQ(m.at("feasible"), false) << at;
    EXPECT_NE(m.at("reason").get<std::string>().find("no hand-set plan"), std::string::npos) << at;
  }
}

TEST(SearchBaselinesEndToEnd, SpotlightBaselineIsItsDesignsBestPoint) {
  const json wide = search_json(kSmall + kSmallSpace);
  const json& spotlight = wide.at("baselines").at("spotlight_style");
  ASSERT_EQ(spotlight.at("per_micro_batch").size(), 3u);
  // Each micro-batch's design, searched alone at that micro-batch, has the reported best point; the
  // baseline is the best of them.
  double best = -1;
  for (const json& choice : spotlight.at("per_micro_batch")) {
    const json& d = choice.at("design");
    ASSERT_TRUE(d.is_object());
    const json alone = search_json(fmt::format(
        "search --model '{}' --devices 8 --global-batch 16 --seq 64 --mbs {} --hbm 0.0004,0.0008,0.002 "
        "--link-bandwidth 0.5 --phaze-compat --tc {} --vc {} --width {} --depth {} --glb-mib {} --lower-fraction 0",
        kGpt2, choice.at("micro_batch").get<int64_t>(), d.at("num_tc").get<int64_t>(), d.at("num_vc").get<int64_t>(),
        d.at("tc_width").get<int64_t>(), d.at("tc_depth").get<int64_t>(), d.at("glb_bytes").get<int64_t>() >> 20));
    EXPECT_EQ(choice.at("best_point"), alone.at("best"));
    if (alone.at("best").is_object()) best = std::max(best, alone.at("best").at("average_samples_per_s").get<double>());
  }
  ASSERT_GT(best, 0);
  EXPECT_EQ(spotlight.at("average_samples_per_s").get<double>(), best);
  EXPECT_DOUBLE_EQ(spotlight.at("speedup_of_best").get<double>(),
                   wide.at("best").at("average_samples_per_s").get<double>() / best);
  EXPECT_GE(spotlight.at("speedup_of_best").get<double>(), 1.0);
}

TEST(SearchBaselinesEndToEnd, PresetHandSetPlanFromTheReportedLatencies) {
  // BERT-large (24 layers, h = 1024) at seq 64 on one small design, t = 1 only, no recomputation: the table's
  // plan p = 8, t = 1, d = 128 on 1024 devices. Its time per batch follows from the best point's reported
  // layer latencies (the same width), the layers' parameter bytes and the 2·b·s·h-byte boundary tensor.
  const json answer = search_json(
      "search --model bert-large --seq 64 --tp 1 --mbs 1 --hbm 32 --recompute off --phaze-compat --tc 1 --vc 1 --width "
      "8 "
      "--depth 8 --glb-mib 2 --lower-fraction 0");
  const json& best = answer.at("best");
  ASSERT_TRUE(best.is_object());
  const json& on_best = answer.at("baselines").at("megatron_hand_set").at("on_best");
  ASSERT_TRUE(on_best.is_object());
  EXPECT_EQ(on_best.at("design"), best.at("design"));
  const json& h = on_best.at("models").at(0);
  ASSERT_EQ(h.at("feasible"), true) << h.dump();
  EXPECT_EQ(h.at("plan").at("pipeline_stages"), 8);
  EXPECT_EQ(h.at("plan").at("tensor_parallel"), 1);
  EXPECT_EQ(h.at("plan").at("data_parallel"), 128);
  EXPECT_EQ(h.at("plan").at("devices_used"), 1024);
  ASSERT_EQ(h.at("plan").at("stages").size(), 8u);
  EXPECT_EQ(h.at("plan").at("stages").at(0).at("first_layer"), "embedding");
  EXPECT_EQ(h.at("plan").at("stages").at(0).at("last_layer"), "layer3");
  EXPECT_EQ(h.at("plan").at("stages").at(1).at("first_layer"), "layer4");
  EXPECT_EQ(h.at("plan").at("stages").at(7).at("first_layer"), "layer22");
  EXPECT_EQ(h.at("plan").at("stages").at(7).at("last_layer"), "head");

  const json& lat = best.at("models").at(0).at("layer_schedules");
  const double ef = lat.at("embedding").at("forward_s"), eb = lat.at("embedding").at("backward_s");
  const double tf = lat.at("transformer").at("forward_s"), tb = lat.at("transformer").at("backward_s");
  const double hf = lat.at("head").at("forward_s"), hb = lat.at("head").at("backward_s");
  const double bw = 4 * kGiB, edge = 2.0 * 1 * 64 * 1024 / bw;
  // First stage: no input from outside; last: no gradient from outside; the middle six wait for both.
  const double first = (ef + 3 * tf) + (edge + 3 * tb + eb);
  const double middle = (edge + 3 * tf) + (edge + 3 * tb);
  const double last = (edge + 3 * tf + hf) + (3 * tb + hb);
  const double load = std::max({first, middle, last});
  const auto g =
      model::build_layer_graph(*model::find_preset("bert-large"), model::Shape{64, 1, 1}, model::Precision{}, "b");
  const double p_max =
      double(std::max({g.embedding.parameter_bytes + 3 * g.transformer.parameter_bytes,
                       3 * g.transformer.parameter_bytes, 3 * g.transformer.parameter_bytes + g.head.parameter_bytes}));
  const double sync = 2.0 * 127 / 128 * p_max / bw, optimizer = p_max * 3 / 1.2e12;
  const double expect = load * (4096.0 / 128 + 8 - 1) + sync + optimizer;
  EXPECT_NEAR(h.at("time_per_batch_s").get<double>(), expect, 1e-9 * expect);
  EXPECT_NEAR(h.at("samples_per_s").get<double>(), 4096 / expect, 1e-9 * 4096 / expect);
  EXPECT_DOUBLE_EQ(h.at("searched_samples_per_s").get<double>(),
                   best.at("models").at(0).at("samples_per_s").get<double>());
  EXPECT_DOUBLE_EQ(h.at("searched_over_hand_set").get<double>(),
                   best.at("models").at(0).at("samples_per_s").get<double>() / h.at("samples_per_s").get<double>());
  // The searched plan is the optimum over all plans, the hand-set one among them.
  EXPECT_GE(h.at("searched_over_hand_set").get<double>(), 1.0);
  // At the TPUv4-like point too (the same plan on another chip).
  const json& on_tpu = answer.at("baselines").at("megatron_hand_set").at("on_tpuv4_like");
  ASSERT_TRUE(on_tpu.is_object());
  EXPECT_EQ(on_tpu.at("design"), answer.at("baselines").at("tpuv4_like").at("design"));
  EXPECT_EQ(on_tpu.at("models").at(0).at("feasible"), true);
}

}  // namespace
