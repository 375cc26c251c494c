#include "io/measured_runs.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "io/beside_file.h"
#include "io/csv_table.h"
#include "model/hf_config.h"
#include "model/presets.h"
#include "util/input_error.h"
#include "util/read_file.h"

namespace phaze::io {

namespace {

const std::vector<std::string> kRequired = {"# GPUs",
                                            "global batch",
                                            "micro batch",
                                            "hidden size",
                                            "attention heads",
                                            "# layers",
                                            "sequence length",
                                            "tensor parallelism",
                                            "data parallelism",
                                            "pipeline parallelism",
                                            "iteration time (ms)"};
const std::vector<std::string> kOptional = {"Parameters (billion)", "vocabulary",      "virtual pipeline",
                                            "sequence parallel",    "recompute",       "distributed optimizer",
                                            "dp overlap",           "flash attention", "model"};

/// The models a file names, each read once; a path is relative to the file.
class ModelCache {
 public:
  explicit ModelCache(std::string file) : file_(std::move(file)) {}
  const model::ModelSpec& get(const std::string& name) {
    auto it = models_.find(name);
    if (it != models_.end()) return it->second;
    return models_.emplace(name, load_model_beside(file_, name)).first->second;
  }

 private:
  std::string file_;
  std::map<std::string, model::ModelSpec> models_;
};

/// The row's model: the one its `model` column names (its shape must agree with the shape columns), else a
/// Megatron-LM GPT of that shape.
model::ModelSpec row_model(const CsvRow& r, ModelCache& models, int64_t layers, int64_t hidden, int64_t heads,
                           int64_t seq) {
  const std::string named = r.text("model").value_or("");
  if (named.empty())
    return model::megatron_gpt(fmt::format("{} line {}", r.where(), r.line()), "measured GPT", layers, hidden, heads,
                               seq);
  const model::ModelSpec* found = nullptr;
  try {
    found = &models.get(named);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: column 'model': {}", r.where(), e.what()));
  }
  const model::ModelSpec& m = *found;
  if (m.num_layers != layers || m.hidden != hidden || m.heads != heads)
    throw r.bad("model", named,
                fmt::format("a model of the row's shape ({} layers, hidden {}, {} heads), not {}, {}, {}", layers,
                            hidden, heads, m.num_layers, m.hidden, m.heads));
  return m;
}

megatron::MeasuredRun parse_row(const CsvRow& r, ModelCache& models) {
  const int64_t line = r.line();
  megatron::MeasuredRun run;
  run.line = line;
  run.label = r.text("Parameters (billion)").value_or("");
  const int64_t layers = r.integer("# layers", 0, model::limits::kLayers);
  const int64_t hidden = r.integer("hidden size", 0, model::limits::kHidden);
  const int64_t heads = r.integer("attention heads", 0, model::limits::kHeads);
  const int64_t seq = r.integer("sequence length", 0, model::limits::kSequence);
  if (hidden % heads != 0)
    throw r.bad("hidden size", std::to_string(hidden), fmt::format("a multiple of the {} attention heads", heads));
  run.spec = row_model(r, models, layers, hidden, heads, seq);
  run.spec.vocab = r.integer("vocabulary", run.spec.vocab, model::limits::kVocab);
  megatron::TrainingPlan& p = run.plan;
  p.tp = r.integer("tensor parallelism", 0, model::limits::kTensorParallel);
  p.dp = r.integer("data parallelism", 0, megatron::plan_limits::kGpus);
  p.pp = r.integer("pipeline parallelism", 0, model::limits::kLayers);
  p.vp = r.integer("virtual pipeline", 1, megatron::plan_limits::kChunks);
  p.micro_batch = r.integer("micro batch", 0, model::limits::kMicroBatch);
  p.global_batch = r.integer("global batch", 0, megatron::plan_limits::kGlobalBatch);
  p.seq = seq;
  p.sequence_parallel = r.flag("sequence parallel");
  if (auto recompute = r.text("recompute"))
    p.recompute = megatron::parse_recompute(*recompute, fmt::format("{}: column 'recompute'", r.where()));
  p.zero = r.flag("distributed optimizer") ? 1 : 0;
  p.overlap_dp = r.flag("dp overlap");
  p.flash_attention = r.flag("flash attention");
  const int64_t gpus = r.integer("# GPUs", 0, megatron::plan_limits::kGpus);
  if (gpus != p.tp * p.dp * p.pp)
    throw r.bad("# GPUs", std::to_string(gpus),
                fmt::format("tensor × data × pipeline parallelism = {} × {} × {}", p.tp, p.dp, p.pp));
  try {
    megatron::validate(p, run.spec);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", r.where(), e.what()));
  }
  run.iteration_s = r.number("iteration time (ms)") / 1000.0;
  return run;
}

}  // namespace

std::vector<megatron::MeasuredRun> parse_measured_runs(const std::string& text, const std::string& source) {
  const auto table = parse_csv(text, source, kRequired, kOptional, kMaxRuns, "runs");
  std::vector<megatron::MeasuredRun> runs;
  runs.reserve(table->rows.size());
  ModelCache models(source);
  for (const CsvRow& row : table->rows) runs.push_back(parse_row(row, models));
  return runs;
}

std::vector<megatron::MeasuredRun> read_measured_runs(const std::string& path) {
  return parse_measured_runs(read_text_file(path), path);
}

}  // namespace phaze::io
