#include "search/question_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <type_traits>
#include <utility>

#include "cost/cost_params.h"
#include "hw/architecture_json.h"
#include "hw/system_json.h"
#include "util/input_error.h"
#include "util/json_input.h"

namespace phaze::search {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

/// Version of the question format; a file of another version is refused.
/// 2: `strategy.stop_rule` ("exact" or "buckets") in place of `strategy.exhaustive` (true or false), which a
///    file of version 1 still gives.
constexpr int64_t kQuestionVersion = 2;
/// Version of the search's point records and evaluation rules: part of the run identity, so a results file
/// written by an older evaluation is never mixed with newer points.
/// 2: a search that names no node budget gives each layer schedule kSearchScheduleNodes, not the solver's default.
/// 3: a tensor-parallel all-reduce wider than the innermost tier's groups reaches the inner group's share of
///    the outer tier (cost::group_link), as under Megatron-LM execution, not one device's.
/// 4: under PHAZE's execution the data-parallel rings and the pipeline sends run on the links of the plan's
///    layout (placement/links.h: cost::group_link, cost::send_link), not on the tier spanning the cluster.
/// 5: the stop rule is named in the question (exact by default).
/// 6: a point's record carries each stage's memory per device (PHAZE's planners).
/// 7: `adam` is mixed-precision Adam (18 bytes per parameter, Megatron-LM's); PHAZE's is `adam_phaze`.
constexpr int kSearchVersion = 7;

// ---- Names of the enumerations, both ways ----

template <typename E, size_t N>
using Names = std::array<std::pair<E, const char*>, N>;

constexpr Names<RecomputeChoice, 3> kRecompute{
    {{RecomputeChoice::Both, "both"}, {RecomputeChoice::On, "on"}, {RecomputeChoice::Off, "off"}}};
constexpr Names<Execution, 2> kExecution{{{Execution::Phaze, "phaze"}, {Execution::Megatron, "megatron"}}};
// "piper", the planner's first name, is read as "stagewise" and never written.
constexpr Names<PlannerChoice, 3> kPlanner{
    {{PlannerChoice::Phaze, "phaze"}, {PlannerChoice::Stagewise, "stagewise"}, {PlannerChoice::Stagewise, "piper"}}};
constexpr Names<StopRule, 2> kStopRule{{{StopRule::Exact, "exact"}, {StopRule::Buckets, "buckets"}}};
constexpr Names<Ranking, 2> kRanking{{{Ranking::Canonical, "canonical"}, {Ranking::SmallerArea, "smaller_area"}}};
constexpr Names<placement::Optimizer, 3> kOptimizer{{{placement::Optimizer::Sgd, "sgd"},
                                                     {placement::Optimizer::MixedPrecisionAdam, "adam"},
                                                     {placement::Optimizer::Adam, "adam_phaze"}}};
constexpr Names<model::NormKind, 2> kNorm{
    {{model::NormKind::LayerNorm, "layernorm"}, {model::NormKind::RmsNorm, "rmsnorm"}}};
constexpr Names<model::Activation, 4> kActivation{{{model::Activation::Gelu, "gelu"},
                                                   {model::Activation::GeluTanh, "gelu_tanh"},
                                                   {model::Activation::Relu, "relu"},
                                                   {model::Activation::SwiGlu, "swiglu"}}};
constexpr Names<model::MaskKind, 2> kMask{{{model::MaskKind::Causal, "causal"}, {model::MaskKind::Padding, "padding"}}};
constexpr Names<model::HeadKind, 2> kHead{
    {{model::HeadKind::CausalLm, "causal_lm"}, {model::HeadKind::BertPretraining, "bert_pretraining"}}};

const auto& names(RecomputeChoice) {
  return kRecompute;
}
const auto& names(Execution) {
  return kExecution;
}
const auto& names(PlannerChoice) {
  return kPlanner;
}
const auto& names(StopRule) {
  return kStopRule;
}
const auto& names(Ranking) {
  return kRanking;
}
const auto& names(placement::Optimizer) {
  return kOptimizer;
}
const auto& names(model::NormKind) {
  return kNorm;
}
const auto& names(model::Activation) {
  return kActivation;
}
const auto& names(model::MaskKind) {
  return kMask;
}
const auto& names(model::HeadKind) {
  return kHead;
}

template <typename E>
const char* name_of(E value) {
  for (const auto& [v, name] : names(value))
    if (v == value) return name;
  return "?";
}

/// Bounds of a number field; `open_low`: the lower bound itself is excluded.
struct Range {
  double lo, hi;
  bool open_low = false;
};

// ---- The fields, listed once for writing and reading ----
//
// Each list calls `v(key, member[, range])` per field and `v.section(key, fields)` per nested object; the
// writer (Writer) and the reader (Reader) are the two visitors.

template <typename S, typename V>
void spec_fields(S& s, V& v) {
  v("name", s.name);
  v("description", s.description);
  v("num_layers", s.num_layers);
  v("hidden", s.hidden);
  v("heads", s.heads);
  v("kv_heads", s.kv_heads);
  v("ffn", s.ffn);
  v("vocab", s.vocab);
  v("word_embedding_dim", s.word_embedding_dim);
  v("max_positions", s.max_positions);
  v("position_offset", s.position_offset);
  v("token_types", s.token_types);
  v("default_seq", s.default_seq);
  v("sliding_window", s.sliding_window);
  v("norm", s.norm);
  v("pre_norm", s.pre_norm);
  v("final_norm", s.final_norm);
  v("embedding_norm", s.embedding_norm);
  v("activation", s.activation);
  v("mask", s.mask);
  v("biases", s.biases);
  v("fused_qkv", s.fused_qkv);
  v("rotary", s.rotary);
  v("scale_query", s.scale_query);
  v("hidden_dropout", s.hidden_dropout);
  v("attention_dropout", s.attention_dropout);
  v("embedding_dropout", s.embedding_dropout);
  v("head", s.head);
  v("tied_head", s.tied_head);
  v("pad_vocab_always", s.pad_vocab_always);
  v("norm_epsilon", s.norm_epsilon);
  // Written only for models that have them, so that a dense model's question reads as before.
  const bool extras = s.head_size != 0 || s.qk_norm || s.qkv_bias || s.experts != 0;
  v.optional_section("attention_and_experts", extras, [&](auto& x) {
    x("head_size", s.head_size, Range{0, static_cast<double>(model::limits::kHidden)});
    x("qk_norm", s.qk_norm);
    x("qkv_bias", s.qkv_bias);
    x("experts", s.experts, Range{0, static_cast<double>(model::limits::kExperts)});
    x("experts_per_token", s.experts_per_token, Range{0, static_cast<double>(model::limits::kExperts)});
    x("expert_ffn", s.expert_ffn, Range{0, static_cast<double>(model::limits::kFfn)});
    x("shared_expert_ffn", s.shared_expert_ffn, Range{0, static_cast<double>(model::limits::kFfn)});
    x("shared_expert_gate", s.shared_expert_gate);
  });
  const bool latent = s.first_dense_layers != 0 || s.router_sigmoid || s.expert_groups != 0 || s.mla();
  v.optional_section("latent_attention_and_routing", latent, [&](auto& x) {
    x("first_dense_layers", s.first_dense_layers, Range{0, static_cast<double>(model::limits::kLayers)});
    x("router_sigmoid", s.router_sigmoid);
    x("expert_groups", s.expert_groups, Range{0, static_cast<double>(model::limits::kExperts)});
    x("expert_groups_per_token", s.expert_groups_per_token, Range{0, static_cast<double>(model::limits::kExperts)});
    x("q_lora_rank", s.q_lora_rank, Range{0, static_cast<double>(model::limits::kHidden)});
    x("kv_lora_rank", s.kv_lora_rank, Range{0, static_cast<double>(model::limits::kHidden)});
    x("rope_head_size", s.rope_head_size, Range{0, static_cast<double>(model::limits::kHidden)});
    x("value_head_size", s.value_head_size, Range{0, static_cast<double>(model::limits::kHidden)});
  });
}

template <typename M, typename V>
void model_fields(M& m, V& v) {
  v("source", m.source);
  v("seq", m.seq, Range{1, static_cast<double>(model::limits::kSequence)});
  v("tensor_parallel", m.widths);
  // Written only with expert parallelism, so that the questions and results files without it stay as they were.
  v.optional_section("experts", m.expert_widths != std::vector<int64_t>{1},
                     [&](auto& x) { x("expert_parallel", m.expert_widths); });
  v.section("hyperparameters", [&](auto& h) { spec_fields(m.spec, h); });
}

template <typename Q, typename V>
void question_fields(Q& q, V& v) {
  v("models", q.models);
  v("devices", q.devices, Range{1, static_cast<double>(limits::kDevices)});
  v("global_batch", q.global_batch, Range{1, static_cast<double>(limits::kGlobalBatch)});
  v("micro_batches", q.micro_batches);
  v("recompute", q.recompute);
  v("optimizer", q.optimizer);
  // Written only when not PHAZE's own, so that the questions and results files of earlier versions stay valid.
  v.optional_section("execution", q.execution != Execution::Phaze, [&](auto& e) {
    e("kind", q.execution);
    e("overlap_dp", q.overlap_dp);
  });
  v.optional_section("placement", q.planner != PlannerChoice::Phaze, [&](auto& e) { e("planner", q.planner); });
  v.optional_section("attention", q.fused_attention, [&](auto& e) { e("fused", q.fused_attention); });
  // The one chip of `phaze evaluate`, in the form of an architecture file.
  v.optional_field("chip", q.chip.has_value(), q.chip);
  // Written only when not PHAZE's, so that earlier files stay valid.
  v.optional_field("ranking", q.ranking != Ranking::Canonical, q.ranking);
  // The network joining the devices (the system's tiers, innermost first; hw/system_json.h).
  v.section("system", [&](auto& s) { s("network", q.network); });
  // Written only when given, so that earlier files stay valid.
  v.optional_field("gpu_baselines", !q.gpu_baselines.empty(), q.gpu_baselines);
  v.section("space", [&](auto& s) {
    s("hbm_bytes", q.hbm_bytes);
    s("area_budget_um2", q.space.budget_um2, Range{0, limits::kAreaUm2});
    s("lower_fraction", q.space.lower_fraction, Range{0, 1});
    s("single_core_exemption", q.space.single_core_exemption);
    s("untie_vector_width", q.space.untie_vector_width);
    s("hbm_bandwidth_bytes_per_s", q.space.base.hbm_bandwidth, Range{0, 1e18, true});
    // Written only when bandwidths are searched, so that earlier files stay valid.
    s.optional_field("hbm_bandwidths_bytes_per_s", !q.space.hbm_bandwidths.empty(), q.space.hbm_bandwidths);
    s.optional_field("core_overheads_um2", !q.space.core_overheads.none(), q.space.core_overheads);
    s("clock_hz", q.space.base.clock_hz, Range{0, 1e15, true});
    s.section("ranges", [&](auto& r) {
      r("num_tc", q.space.num_tc);
      r("num_vc", q.space.num_vc);
      r("width", q.space.width);
      r("vc_width", q.space.vc_width);
      r("depth", q.space.depth);
      r("glb_bytes", q.space.glb_bytes);
    });
    s.section("filter", [&](auto& f) {
      f("num_tc", q.filter.num_tc);
      f("num_vc", q.filter.num_vc);
      f("width", q.filter.width);
      f("depth", q.filter.depth);
      f("glb_bytes", q.filter.glb_bytes);
    });
  });
  v.section("strategy", [&](auto& s) {
    s("stop_rule", q.stop_rule);
    s("stop_window", q.stop_window, Range{1, static_cast<double>(limits::kStopWindow)});
    s("bucket_um2", q.bucket_um2, Range{0, limits::kAreaUm2, true});
    s("schedule_node_budget", q.schedule_node_budget, Range{0, static_cast<double>(limits::kScheduleNodes)});
  });
}

// ---- Writing ----

struct Writer {
  ordered_json& out;

  template <typename T>
  void operator()(const char* key, const T& value, std::optional<Range> = {}) {
    out[key] = to_value(value);
  }
  template <typename F>
  void section(const char* key, F&& fields) {
    ordered_json object = ordered_json::object();
    Writer inner{object};
    fields(inner);
    out[key] = std::move(object);
  }
  template <typename F>
  void optional_section(const char* key, bool present, F&& fields) {
    if (present) section(key, std::forward<F>(fields));
  }
  template <typename T>
  void optional_field(const char* key, bool present, const T& value) {
    if (present) out[key] = to_value(value);
  }

  template <typename T>
  static ordered_json to_value(const T& value) {
    if constexpr (std::is_enum_v<T>) {
      return name_of(value);
    } else if constexpr (std::is_same_v<T, hw::PowerOfTwoRange>) {
      return ordered_json::array({value.min, value.max});
    } else if constexpr (std::is_same_v<T, hw::Network>) {
      ordered_json tiers = ordered_json::array();
      for (const hw::NetworkTier& t : value.tiers) {
        ordered_json tier{{"name", t.name},
                          {"members", t.members},
                          {"bandwidth", t.bandwidth},
                          {"latency_s", t.latency_s},
                          {"efficiency", t.efficiency}};
        if (t.torus) tier["torus"] = hw::to_json(*t.torus);
        tiers.push_back(tier);
      }
      return tiers;
    } else if constexpr (std::is_same_v<T, std::optional<double>>) {
      return value ? ordered_json(*value) : ordered_json(nullptr);
    } else if constexpr (std::is_same_v<T, hw::CoreOverheads>) {
      return ordered_json{{"per_tensor_core", value.per_tensor_core_um2},
                          {"per_vector_core", value.per_vector_core_um2}};
    } else if constexpr (std::is_same_v<T, std::optional<hw::Architecture>>) {
      return hw::architecture_file_json(*value);
    } else if constexpr (std::is_same_v<T, std::vector<hw::System>>) {
      ordered_json list = ordered_json::array();
      for (const hw::System& s : value) list.push_back(ordered_json::parse(hw::to_json(s).dump()));
      return list;
    } else if constexpr (std::is_same_v<T, std::vector<ModelCase>>) {
      ordered_json list = ordered_json::array();
      for (const ModelCase& m : value) {
        ordered_json object = ordered_json::object();
        Writer w{object};
        model_fields(m, w);
        list.push_back(std::move(object));
      }
      return list;
    } else {
      return value;
    }
  }
};

// ---- Reading ----

/// Reads one JSON object's fields; every error names the file, the field's place and the value.
class Reader {
 public:
  Reader(const json& object, std::string place, const std::string& source)
      : object_(object), place_(std::move(place)), source_(source) {
    if (!object_.is_object()) bad(place_, object_, "an object");
  }

  template <typename T>
  void operator()(const char* key, T& value, std::optional<Range> range = {}) {
    const std::string place = at(key);
    const json& j = object_.at(key);
    read(j, place, value);
    if (range) check(j, place, *range, std::is_same_v<T, int64_t>);
  }
  template <typename F>
  void section(const char* key, F&& fields) {
    const std::string place = at(key);
    Reader inner(object_.at(key), place, source_);
    fields(inner);
    inner.finish();
  }
  template <typename F>
  void optional_section(const char* key, bool, F&& fields) {
    if (object_.contains(key)) section(key, std::forward<F>(fields));
  }
  template <typename T>
  void optional_field(const char* key, bool, T& value) {
    if (object_.contains(key)) (*this)(key, value);
  }
  /// Refuses a field no list named.
  void finish() const {
    for (const auto& [key, value] : object_.items())
      if (!seen_.contains(key))
        throw InputError(fmt::format("{}: unknown field {} = {}", source_, join(place_, key), value.dump()));
  }

 private:
  static std::string join(const std::string& place, const std::string& key) {
    return place.empty() ? key : place + "." + key;
  }
  /// The place of a required field, marked as read.
  std::string at(const char* key) {
    const std::string place = join(place_, key);
    if (!object_.contains(key)) throw InputError(fmt::format("{}: missing field {}", source_, place));
    seen_.insert(key);
    return place;
  }
  [[noreturn]] void bad(const std::string& place, const json& value, const std::string& what) const {
    throw InputError(
        fmt::format("{}: {} = {}: must be {}", source_, place.empty() ? "the question" : place, value.dump(), what));
  }
  void check(const json& j, const std::string& place, const Range& r, bool integer) const {
    if (!j.is_number()) return;  // an optional given as null
    const double v = j.get<double>();
    if (!((r.open_low ? v > r.lo : v >= r.lo) && v <= r.hi))
      bad(place, j,
          integer ? fmt::format("an integer from {} to {}", static_cast<int64_t>(r.lo), static_cast<int64_t>(r.hi))
                  : fmt::format("a number {} {} and at most {}", r.open_low ? ">" : "≥", r.lo, r.hi));
  }

  void read(const json& j, const std::string& place, int64_t& v) const {
    if (!j.is_number_integer()) bad(place, j, "an integer");
    v = j.get<int64_t>();
  }
  void read(const json& j, const std::string& place, double& v) const {
    if (!j.is_number()) bad(place, j, "a number");
    v = j.get<double>();
  }
  void read(const json& j, const std::string& place, std::optional<double>& v) const {
    if (j.is_null()) {
      v.reset();
      return;
    }
    read(j, place, v.emplace());
  }
  void read(const json& j, const std::string& place, bool& v) const {
    if (!j.is_boolean()) bad(place, j, "true or false");
    v = j.get<bool>();
  }
  void read(const json& j, const std::string& place, std::string& v) const {
    if (!j.is_string()) bad(place, j, "a string");
    v = j.get<std::string>();
  }
  void read(const json& j, const std::string& place, hw::CoreOverheads& v) const {
    Reader r(j, place, source_);
    r("per_tensor_core", v.per_tensor_core_um2, Range{0, hw::kMaxBudgetUm2});
    r("per_vector_core", v.per_vector_core_um2, Range{0, hw::kMaxBudgetUm2});
    r.finish();
  }
  void read(const json& j, const std::string& place, std::vector<double>& v) const {
    if (!j.is_array()) bad(place, j, "an array of numbers");
    v.assign(j.size(), 0);
    for (size_t i = 0; i < j.size(); ++i) read(j[i], fmt::format("{}[{}]", place, i), v[i]);
  }
  void read(const json& j, const std::string& place, std::vector<int64_t>& v) const {
    if (!j.is_array()) bad(place, j, "an array of integers");
    v.assign(j.size(), 0);
    for (size_t i = 0; i < j.size(); ++i) read(j[i], fmt::format("{}[{}]", place, i), v[i]);
  }
  void read(const json& j, const std::string& place, std::optional<hw::Architecture>& v) const {
    v = hw::architecture_from_json(j, fmt::format("{}: {}", source_, place));
  }
  void read(const json& j, const std::string& place, std::vector<hw::System>& v) const {
    if (!j.is_array()) bad(place, j, "an array of GPU systems");
    v.clear();
    for (size_t i = 0; i < j.size(); ++i) {
      v.push_back(hw::system_from_json(j[i], fmt::format("{}: {}[{}]", source_, place, i)));
      hw::gpu_of(v.back());  // a GPU system, or an error naming it
    }
  }
  void read(const json& j, const std::string& place, hw::Network& v) const {
    v = hw::network_from_json(j, fmt::format("{}: {}", source_, place));
  }
  void read(const json& j, const std::string& place, hw::PowerOfTwoRange& v) const {
    if (!j.is_array() || j.size() != 2) bad(place, j, "an array [min, max]");
    read(j[0], place + "[0]", v.min);
    read(j[1], place + "[1]", v.max);
  }
  template <typename E>
  requires std::is_enum_v<E>
  void read(const json& j, const std::string& place, E& v) const {
    std::string choices;
    for (const auto& [value, name] : names(v)) {
      if (j.is_string() && j.get<std::string>() == name) {
        v = value;
        return;
      }
      choices += fmt::format("{}{}", choices.empty() ? "" : ", ", name);
    }
    bad(place, j, "one of " + choices);
  }
  void read(const json& j, const std::string& place, std::vector<ModelCase>& v) const {
    if (!j.is_array()) bad(place, j, "an array of models");
    v.assign(j.size(), ModelCase{});
    for (size_t i = 0; i < j.size(); ++i) {
      const std::string item = fmt::format("{}[{}]", place, i);
      Reader r(j[i], item, source_);
      model_fields(v[i], r);
      r.finish();
      std::sort(v[i].widths.begin(), v[i].widths.end());  // tried in ascending order, as the options give them
      std::sort(v[i].expert_widths.begin(), v[i].expert_widths.end());
      model::validate(v[i].spec, fmt::format("{}: {}.hyperparameters", source_, item));
    }
  }

  const json& object_;
  std::string place_;
  const std::string& source_;
  std::set<std::string> seen_;
};

/// The question as written: the area budget resolved.
SearchQuestion resolved(const SearchQuestion& q) {
  SearchQuestion r = q;
  if (!r.space.budget_um2) r.space.budget_um2 = hw::default_area_budget_um2(r.space.core_overheads);
  return r;
}

}  // namespace

ordered_json question_json(const SearchQuestion& question) {
  const SearchQuestion q = resolved(question);
  ordered_json out{{"version", kQuestionVersion}};
  Writer w{out};
  question_fields(q, w);
  return out;
}

SearchQuestion read_question(const json& j, const std::string& source) {
  SearchQuestion q;
  Reader r(j, "", source);
  int64_t version = 0;
  r("version", version);
  if (version != kQuestionVersion && version != 1)
    throw InputError(
        fmt::format("{}: version = {}: only versions 1 and {} are known", source, version, kQuestionVersion));
  if (version == 1) {
    // Version 1 named the rule by `strategy.exhaustive`: true is the exact rule, false the bucket rule.
    json upgraded = j;
    json* strategy = upgraded.contains("strategy") ? &upgraded["strategy"] : nullptr;
    if (strategy && strategy->is_object() && strategy->contains("exhaustive")) {
      const json& exhaustive = (*strategy)["exhaustive"];
      if (!exhaustive.is_boolean())
        throw InputError(fmt::format("{}: strategy.exhaustive = {}: must be true or false", source, exhaustive.dump()));
      (*strategy)["stop_rule"] = exhaustive.get<bool>() ? "exact" : "buckets";
      strategy->erase("exhaustive");
    }
    upgraded["version"] = kQuestionVersion;
    return read_question(upgraded, source);
  }
  question_fields(q, r);
  r.finish();
  return q;
}

SearchQuestion parse_question(const std::string& text, const std::string& source) {
  const SearchQuestion q = read_question(parse_json_input(text, source), source);
  try {
    validate(q);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", source, e.what()));
  }
  return q;
}

const char* optimizer_name(placement::Optimizer optimizer) {
  return name_of(optimizer);
}

std::string run_identity(const SearchQuestion& question) {
  SearchQuestion q = question;
  // The window and the bucket width decide which points an answer is built from; the exact rule takes
  // every point whatever they are.
  if (q.stop_rule == StopRule::Exact) {
    q.stop_window = SearchQuestion{}.stop_window;
    q.bucket_um2 = SearchQuestion{}.bucket_um2;
  }
  return fmt::format("phaze search v{}; cost model v{}; {}", kSearchVersion, cost::kCostModelVersion,
                     question_json(q).dump());
}

}  // namespace phaze::search
