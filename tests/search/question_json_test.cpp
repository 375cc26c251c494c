// The search question as a file: the JSON round trip keeps every setting (every preset's hyper-parameters
// included), every field of the file reaches the run identity, and bad files are refused naming the field.

#include "search/question_json.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "hw/area.h"
#include "hw/presets.h"
#include "model/hf_config.h"
#include "model/presets.h"
#include "search/question.h"
#include "util/input_error.h"

namespace {

using namespace phaze;
using nlohmann::json;

search::SearchQuestion question_of(const std::vector<std::string>& presets) {
  search::SearchQuestion q;
  for (const std::string& name : presets) {
    search::ModelCase m;
    m.source = name;
    m.spec = model::load_model(name);
    m.seq = m.spec.default_seq;
    m.widths = search::default_widths(m.spec);
    q.models.push_back(m);
  }
  return q;
}

json text_of(const search::SearchQuestion& q) {
  return json::parse(search::question_json(q).dump());
}

TEST(QuestionJson, RoundTripKeepsEverySettingAndEveryPresetsHyperparameters) {
  search::SearchQuestion q = question_of(model::preset_names());
  q.devices = 96;
  q.global_batch = 192;
  q.micro_batches = {3, 1};
  q.hbm_bytes = {1ll << 30};
  q.recompute = search::RecomputeChoice::Off;
  // Two tiers, a bandwidth not exactly representable: the text must keep every bit.
  q.network = hw::Network{{hw::NetworkTier{"node", 8, 0.1 + 0.2, 1e-6, 0.7}, hw::NetworkTier{"all", 0, 3e9, 0, 1}}};
  q.optimizer = placement::Optimizer::Adam;
  q.space.lower_fraction = 1.0 / 3.0;
  q.space.single_core_exemption = false;
  q.filter.num_tc = {8, 2};
  q.filter.glb_bytes = {4 << 20};
  q.stop_window = 7;
  q.bucket_um2 = 12345.5;
  q.schedule_node_budget = 99;
  const search::SearchQuestion back = search::read_question(text_of(q), "q.json");
  ASSERT_EQ(back.models.size(), q.models.size());
  for (size_t i = 0; i < q.models.size(); ++i) {
    EXPECT_EQ(back.models[i].spec, q.models[i].spec) << q.models[i].source;
    EXPECT_EQ(back.models[i].source, q.models[i].source);
    EXPECT_EQ(back.models[i].seq, q.models[i].seq);
    EXPECT_EQ(back.models[i].widths, q.models[i].widths);
  }
  EXPECT_EQ(back.network, q.network);
  EXPECT_EQ(back.micro_batches, q.micro_batches);
  EXPECT_EQ(back.filter.num_tc, q.filter.num_tc);
  EXPECT_EQ(back.space.lower_fraction, q.space.lower_fraction);
  EXPECT_EQ(back.space.budget_um2, hw::default_area_budget_um2());  // written resolved
  EXPECT_EQ(search::question_json(back), search::question_json(q));
  EXPECT_EQ(search::run_identity(back), search::run_identity(q));
}

/// Candidates for another value of a leaf, tried in turn until the reader accepts one: numbers doubled, halved,
/// one more, 1; booleans flipped; an enumeration's other names; other strings lengthened; an empty list [2].
std::vector<json> other_values(const std::string& key, const json& v) {
  static const std::map<std::string, std::vector<std::string>> kChoices = {
      {"recompute", {"both", "on", "off"}}, {"optimizer", {"sgd", "adam"}},
      {"norm", {"layernorm", "rmsnorm"}},   {"activation", {"gelu", "gelu_tanh", "relu", "swiglu"}},
      {"mask", {"causal", "padding"}},      {"head", {"causal_lm", "bert_pretraining"}},
      {"kind", {"phaze", "megatron"}},      {"stop_rule", {"exact", "buckets"}}};
  if (v.is_array()) return {json::array({2})};  // an empty filter gets one value
  if (v.is_boolean()) return {!v.get<bool>()};
  if (v.is_string()) {
    const auto c = kChoices.find(key);
    if (c == kChoices.end()) return {v.get<std::string>() + "x"};
    std::vector<json> out;
    for (const std::string& name : c->second)
      if (name != v.get<std::string>()) out.push_back(name);
    return out;
  }
  if (v.is_number_integer()) {
    const int64_t x = v.get<int64_t>();
    return {x == 0 ? 1 : x * 2, x / 2, x + 1, 1};
  }
  if (v.is_number()) {
    const double x = v.get<double>();
    return {x == 0 ? 0.5 : x * 2, x / 2};
  }
  return {};
}

/// Calls `visit` with every leaf (number, string, boolean) of `j` and its parent key, empty arrays too.
void for_each_leaf(json& j, const std::string& key, const std::function<void(json&, const std::string&)>& visit) {
  if (j.is_object()) {
    for (auto& [k, v] : j.items()) for_each_leaf(v, k, visit);
  } else if (j.is_array()) {
    if (j.empty()) visit(j, key);
    for (json& v : j) for_each_leaf(v, key, visit);
  } else {
    visit(j, key);
  }
}

TEST(QuestionJson, EveryFieldOfTheFileChangesTheRunIdentity) {
  // A field the reader or the identity forgot would read back unchanged: each leaf is changed to another value
  // the reader accepts, and the identity must differ. The bucket rule, so that its fields count.
  // DeepSeek-V3 writes the sections of a mixture of experts and of latent attention.
  for (const char* model : {"gpt2-xl", "deepseek-v3"}) {
    SCOPED_TRACE(model);
    search::SearchQuestion q = question_of({model});
    q.stop_rule = search::StopRule::Buckets;
    const std::string base = search::run_identity(q);
    json original = text_of(q);
    int leaves = 0;
    for_each_leaf(original, "", [&](json& leaf, const std::string& key) {
      if (key == "version") return;
      const json kept = leaf;
      bool read = false;
      for (const json& value : other_values(key, kept)) {
        if (value == kept) continue;
        leaf = value;
        try {
          EXPECT_NE(search::run_identity(search::read_question(original, "q.json")), base) << key << " = " << leaf;
          read = true;
          break;
        } catch (const InputError&) {
          // out of this field's range: try the next value
        }
      }
      // The outermost network tier joins every device: members 0 is its only value.
      // Latent attention takes one key and value per head, RoPE and unfused projections: none of these four
      // has another value alone.
      const bool latent = std::string(model) == "deepseek-v3" &&
                          (key == "heads" || key == "kv_heads" || key == "rotary" || key == "fused_qkv");
      const bool fixed = (key == "members" && kept == 0) || latent;
      EXPECT_TRUE(read || fixed) << "no other value of " << key << " was accepted";
      leaf = kept;
      ++leaves;
    });
    EXPECT_GT(leaves, 50);
    EXPECT_EQ(search::run_identity(search::read_question(original, "q.json")), base);
  }
}

std::string error_of(const json& j);

TEST(QuestionJson, MegatronExecutionIsKeptAndOnlyWrittenWhenChosen) {
  search::SearchQuestion q = question_of({"gpt2-xl"});
  EXPECT_FALSE(text_of(q).contains("execution"));  // the files of PHAZE's execution stay as they were
  q.execution = search::Execution::Megatron;
  q.optimizer = placement::Optimizer::MixedPrecisionAdam;
  q.overlap_dp = true;
  const json text = text_of(q);
  EXPECT_EQ(text.at("execution"), json({{"kind", "megatron"}, {"overlap_dp", true}}));
  const search::SearchQuestion back = search::read_question(text, "q.json");
  EXPECT_EQ(back.execution, search::Execution::Megatron);
  EXPECT_TRUE(back.overlap_dp);
  EXPECT_EQ(search::run_identity(back), search::run_identity(q));
  q.overlap_dp = false;
  EXPECT_NE(search::run_identity(back), search::run_identity(q));
  q.execution = search::Execution::Phaze;
  EXPECT_NE(search::run_identity(back), search::run_identity(q));
}

TEST(QuestionJson, FusedAttentionIsKeptAndOnlyWrittenWhenChosen) {
  search::SearchQuestion q = question_of({"gpt2-xl"});
  EXPECT_FALSE(text_of(q).contains("attention"));  // the files of PHAZE's materialised attention stay as they were
  q.fused_attention = true;
  const json text = text_of(q);
  EXPECT_EQ(text.at("attention"), json({{"fused", true}}));
  const search::SearchQuestion back = search::read_question(text, "q.json");
  EXPECT_TRUE(back.fused_attention);
  EXPECT_EQ(search::run_identity(back), search::run_identity(q));
  q.fused_attention = false;
  EXPECT_NE(search::run_identity(back), search::run_identity(q));
}

TEST(QuestionJson, SmallerAreaRankingIsKeptAndOnlyWrittenWhenChosen) {
  search::SearchQuestion q = question_of({"gpt2-xl"});
  EXPECT_FALSE(text_of(q).contains("ranking"));
  q.ranking = search::Ranking::SmallerArea;
  const json text = text_of(q);
  EXPECT_EQ(text.at("ranking"), "smaller_area");
  const search::SearchQuestion back = search::read_question(text, "q.json");
  EXPECT_EQ(back.ranking, search::Ranking::SmallerArea);
  EXPECT_EQ(search::run_identity(back), search::run_identity(q));
  q.ranking = search::Ranking::Canonical;
  EXPECT_NE(search::run_identity(back), search::run_identity(q));
}

TEST(QuestionJson, HbmBandwidthsAreKeptAndOnlyWrittenWhenSearched) {
  search::SearchQuestion q = question_of({"gpt2-xl"});
  EXPECT_FALSE(text_of(q).at("space").contains("hbm_bandwidths_bytes_per_s"));
  q.space.hbm_bandwidths = {6e11, 2.4e12};
  const json text = text_of(q);
  EXPECT_EQ(text.at("space").at("hbm_bandwidths_bytes_per_s"), json::array({6e11, 2.4e12}));
  const search::SearchQuestion back = search::read_question(text, "q.json");
  EXPECT_EQ(back.space.hbm_bandwidths, q.space.hbm_bandwidths);
  EXPECT_EQ(search::run_identity(back), search::run_identity(q));
  q.space.hbm_bandwidths = {6e11};
  EXPECT_NE(search::run_identity(back), search::run_identity(q));
}

TEST(QuestionJson, CoreOverheadsAreKeptAndOnlyWrittenWhenGiven) {
  search::SearchQuestion q = question_of({"gpt2-xl"});
  EXPECT_FALSE(text_of(q).at("space").contains("core_overheads_um2"));
  q.space.core_overheads = {50000, 20000};
  const json text = text_of(q);
  EXPECT_EQ(text.at("space").at("core_overheads_um2"),
            json({{"per_tensor_core", 50000.0}, {"per_vector_core", 20000.0}}));
  // The budget is written resolved: the tpuv4-like chip's area with its own cores' overheads.
  EXPECT_EQ(text.at("space").at("area_budget_um2").get<double>(),
            hw::area_um2(hw::tpuv4_like(), q.space.core_overheads));
  const search::SearchQuestion back = search::read_question(text, "q.json");
  EXPECT_EQ(back.space.core_overheads, q.space.core_overheads);
  EXPECT_EQ(search::run_identity(back), search::run_identity(q));
  json negative = text;
  negative["space"]["core_overheads_um2"]["per_vector_core"] = -1;
  EXPECT_TRUE(error_of(negative).starts_with("q.json: space.core_overheads_um2.per_vector_core")) << error_of(negative);
}

TEST(QuestionJson, AChipOutsideAnArchitectureFilesBoundsIsRefused) {
  search::SearchQuestion q = question_of({"gpt2-xl"});
  q.chip = hw::tpuv4_like();
  search::validate(q);
  q.chip->num_tc = 0;
  try {
    search::validate(q);
    ADD_FAILURE() << "a chip of no tensor cores was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("num_tc"), std::string::npos) << e.what();
  }
}

TEST(QuestionJson, StagewisePlannerIsKeptAndOnlyWrittenWhenChosen) {
  search::SearchQuestion q = question_of({"gpt2-xl"});
  EXPECT_FALSE(text_of(q).contains("placement"));  // the files of PHAZE's planner stay as they were
  q.planner = search::PlannerChoice::Stagewise;
  const json text = text_of(q);
  EXPECT_EQ(text.at("placement"), json({{"planner", "stagewise"}}));
  const search::SearchQuestion back = search::read_question(text, "q.json");
  EXPECT_EQ(back.planner, search::PlannerChoice::Stagewise);
  EXPECT_EQ(search::run_identity(back), search::run_identity(q));
  // Its first name is read as the same question.
  json old_name = text;
  old_name["placement"]["planner"] = "piper";
  EXPECT_EQ(search::run_identity(search::read_question(old_name, "q.json")), search::run_identity(q));
  q.planner = search::PlannerChoice::Phaze;
  EXPECT_NE(search::run_identity(back), search::run_identity(q));

  json wrong = text;
  wrong["placement"]["planner"] = "greedy";
  EXPECT_TRUE(error_of(wrong).starts_with("q.json: placement.planner"));
  json deep = text;
  deep["models"][0]["hyperparameters"]["num_layers"] = 513;
  EXPECT_EQ(error_of(deep), "q.json: --planner stagewise: model gpt2-xl has 513 layers, at most 512 allowed");
  json megatron = text;
  megatron["execution"] = {{"kind", "megatron"}, {"overlap_dp", false}};
  megatron["optimizer"] = "adam";
  EXPECT_EQ(error_of(megatron),
            "q.json: --planner stagewise: plans PHAZE's execution; Megatron-LM's has equal stages (drop --execution "
            "megatron)");
}

TEST(QuestionJson, ExpertWidthsAreKeptAndOnlyWrittenWithExpertParallelism) {
  search::SearchQuestion q = question_of({"mixtral-8x7b"});
  q.execution = search::Execution::Megatron;
  q.optimizer = placement::Optimizer::MixedPrecisionAdam;
  EXPECT_FALSE(text_of(q).at("models").at(0).contains("experts"));  // files without it stay as they were
  q.models[0].expert_widths = {1, 8};
  const json text = text_of(q);
  EXPECT_EQ(text.at("models").at(0).at("experts"), json({{"expert_parallel", {1, 8}}}));
  const search::SearchQuestion back = search::read_question(text, "q.json");
  EXPECT_EQ(back.models[0].expert_widths, (std::vector<int64_t>{1, 8}));
  EXPECT_EQ(search::run_identity(back), search::run_identity(q));
  q.models[0].expert_widths = {1, 4};
  EXPECT_NE(search::run_identity(back), search::run_identity(q));
  // A width that does not divide the experts, expert parallelism under PHAZE's execution or for a dense
  // model: refused naming --ep.
  json three = text;
  three["models"][0]["experts"]["expert_parallel"] = {3};
  EXPECT_NE(error_of(three).find("--ep 3"), std::string::npos) << error_of(three);
  json phaze_execution = text;
  phaze_execution.erase("execution");
  phaze_execution["optimizer"] = "sgd";
  EXPECT_NE(error_of(phaze_execution).find("--execution megatron"), std::string::npos) << error_of(phaze_execution);
  search::SearchQuestion dense = question_of({"gpt2-xl"});
  dense.execution = search::Execution::Megatron;
  dense.optimizer = placement::Optimizer::MixedPrecisionAdam;
  dense.models[0].expert_widths = {2};
  EXPECT_THROW(search::validate(dense), InputError);
  // On 12 devices no width t gives 8 groups of t dividing them.
  search::SearchQuestion twelve = q;
  twelve.devices = 12;
  twelve.models[0].expert_widths = {8};
  try {
    search::validate(twelve);
    ADD_FAILURE() << "e = 8 on 12 devices was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--ep 8"), std::string::npos) << e.what();
  }
}

TEST(QuestionJson, MegatronExecutionNeedsAdamAndOverlapNeedsIt) {
  search::SearchQuestion q = question_of({"gpt2-xl"});
  q.execution = search::Execution::Megatron;
  json sgd = text_of(q);
  EXPECT_EQ(error_of(sgd),
            "q.json: --optimizer sgd: --execution megatron trains with Megatron-LM's mixed-precision Adam; give "
            "--optimizer adam");
  json overlap = text_of(question_of({"gpt2-xl"}));
  overlap["execution"] = {{"kind", "phaze"}, {"overlap_dp", true}};
  EXPECT_EQ(error_of(overlap),
            "q.json: --overlap-dp: needs --execution megatron (PHAZE's placement reduces after the backward pass)");
  json kind = overlap;
  kind["execution"]["kind"] = "deepspeed";
  EXPECT_EQ(error_of(kind), "q.json: execution.kind = \"deepspeed\": must be one of phaze, megatron");
}

TEST(QuestionJson, ExactRuleIdentityIgnoresTheBucketRulesSettings) {
  search::SearchQuestion a = question_of({"gpt2-xl"}), b = a;
  EXPECT_EQ(a.stop_rule, search::StopRule::Exact);  // the default
  b.stop_window = 3;
  b.bucket_um2 = 1;
  EXPECT_EQ(search::run_identity(a), search::run_identity(b));
  b.stop_rule = search::StopRule::Buckets;
  EXPECT_NE(search::run_identity(a), search::run_identity(b));
}

TEST(QuestionJson, VersionOneFilesNameTheRuleByExhaustive) {
  // A file of version 1 said `"exhaustive": false` for the bucket rule (then the default) and true for the
  // exact one; it reads as the question it was.
  search::SearchQuestion q = question_of({"gpt2-xl"});
  for (const search::StopRule rule : {search::StopRule::Exact, search::StopRule::Buckets}) {
    q.stop_rule = rule;
    json old = text_of(q);
    old["version"] = 1;
    old["strategy"].erase("stop_rule");
    old["strategy"]["exhaustive"] = rule == search::StopRule::Exact;
    const search::SearchQuestion back = search::read_question(old, "q.json");
    EXPECT_EQ(back.stop_rule, rule);
    EXPECT_EQ(search::run_identity(back), search::run_identity(q));
  }
  json old = text_of(q);
  old["version"] = 1;
  old["strategy"].erase("stop_rule");
  old["strategy"]["exhaustive"] = "yes";
  EXPECT_EQ(error_of(old), "q.json: strategy.exhaustive = \"yes\": must be true or false");
  json mixed = text_of(q);  // version 2 has no `exhaustive`
  mixed["strategy"]["exhaustive"] = true;
  EXPECT_NE(error_of(mixed).find("exhaustive"), std::string::npos);
  json future = text_of(q);
  future["version"] = 3;
  EXPECT_EQ(error_of(future), "q.json: version = 3: only versions 1 and 2 are known");
}

std::string error_of(const json& j) {
  try {
    search::parse_question(j.dump(), "q.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(QuestionJson, BadFilesNameTheFileTheFieldAndTheValue) {
  const json good = text_of(question_of({"gpt2-xl"}));
  EXPECT_EQ(error_of(good), "accepted");
  json missing = good;
  missing["space"].erase("lower_fraction");
  EXPECT_EQ(error_of(missing), "q.json: missing field space.lower_fraction");
  json unknown = good;
  unknown["system"]["latency_s"] = 1e-6;
  EXPECT_EQ(error_of(unknown), "q.json: unknown field system.latency_s = 1e-06");
  json type = good;
  type["devices"] = "many";
  EXPECT_EQ(error_of(type), "q.json: devices = \"many\": must be an integer");
  json range = good;
  range["devices"] = 0;
  EXPECT_EQ(error_of(range), "q.json: devices = 0: must be an integer from 1 to 1048576");
  json bandwidth = good;
  bandwidth["system"]["network"][0]["bandwidth"] = 0;
  EXPECT_NE(error_of(bandwidth).find("q.json: system.network[0]: key 'bandwidth' = 0 must be"), std::string::npos)
      << error_of(bandwidth);
  json tiers = good;
  tiers["system"]["network"][0]["members"] = 8;  // the outermost tier must join every device
  EXPECT_NE(error_of(tiers).find("q.json: system.network: tier 1 ('link'): members = 8 must be 0"), std::string::npos)
      << error_of(tiers);
  json choice = good;
  choice["recompute"] = "sometimes";
  EXPECT_EQ(error_of(choice), "q.json: recompute = \"sometimes\": must be one of both, on, off");
  json model = good;
  model["models"][0]["hyperparameters"]["heads"] = 7;
  EXPECT_NE(error_of(model).find("q.json: models[0].hyperparameters"), std::string::npos);
  json list = good;
  list["micro_batches"][1] = 2.5;
  EXPECT_EQ(error_of(list), "q.json: micro_batches[1] = 2.5: must be an integer");
  json divides = good;
  divides["micro_batches"] = {3};
  EXPECT_EQ(error_of(divides), "q.json: --mbs 3: does not divide the global batch of 4096");
  json version = good;
  version["version"] = 0;
  EXPECT_EQ(error_of(version), "q.json: version = 0: only versions 1 and 2 are known");
  json rule = good;
  rule["strategy"]["stop_rule"] = "soon";
  EXPECT_EQ(error_of(rule), "q.json: strategy.stop_rule = \"soon\": must be one of exact, buckets");
  EXPECT_EQ(error_of(json::array()), "q.json: the question = []: must be an object");
}

}  // namespace
