#include "io/measured_runs.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include "model/presets.h"
#include "util/input_error.h"
#include "util/read_file.h"

namespace phaze::io {

namespace {

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) out.push_back(trim(field));
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

class Row {
 public:
  Row(const std::map<std::string, size_t>& columns, std::vector<std::string> fields, std::string where)
      : columns_(columns), fields_(std::move(fields)), where_(std::move(where)) {}

  std::optional<std::string> text(const std::string& column) const {
    const auto it = columns_.find(column);
    if (it == columns_.end()) return std::nullopt;
    return fields_[it->second];
  }

  int64_t integer(const std::string& column, int64_t fallback, int64_t high) const {
    const auto value = text(column);
    if (!value) return fallback;
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
    if (ec != std::errc() || end != value->data() + value->size() || n < 1 || n > high)
      throw bad(column, *value, fmt::format("a whole number in [1, {}]", high));
    return n;
  }

  double number(const std::string& column) const {
    const std::string value = *text(column);
    double x = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
    if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(x) || x <= 0 || x > 1e12)
      throw bad(column, value, "a positive number");
    return x;
  }

  bool flag(const std::string& column) const {
    const auto value = text(column);
    if (!value) return false;
    if (*value == "1" || *value == "true") return true;
    if (*value == "0" || *value == "false" || value->empty()) return false;
    throw bad(column, *value, "0, 1, true or false");
  }

  InputError bad(const std::string& column, const std::string& value, const std::string& expected) const {
    return InputError(fmt::format("{}: column '{}' = '{}' must be {}", where_, column, value, expected));
  }
  const std::string& where() const { return where_; }

 private:
  const std::map<std::string, size_t>& columns_;
  std::vector<std::string> fields_;
  std::string where_;
};

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
const std::vector<std::string> kOptional = {"Parameters (billion)", "vocabulary",     "virtual pipeline",
                                            "sequence parallel",    "recompute",      "distributed optimizer",
                                            "dp overlap",           "flash attention"};

megatron::MeasuredRun parse_row(const Row& r, int64_t line) {
  megatron::MeasuredRun run;
  run.line = line;
  run.label = r.text("Parameters (billion)").value_or("");
  const int64_t layers = r.integer("# layers", 0, model::limits::kLayers);
  const int64_t hidden = r.integer("hidden size", 0, model::limits::kHidden);
  const int64_t heads = r.integer("attention heads", 0, model::limits::kHeads);
  const int64_t seq = r.integer("sequence length", 0, model::limits::kSequence);
  if (hidden % heads != 0)
    throw r.bad("hidden size", std::to_string(hidden), fmt::format("a multiple of the {} attention heads", heads));
  run.spec =
      model::megatron_gpt(fmt::format("{} line {}", r.where(), line), "measured GPT", layers, hidden, heads, seq);
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
  p.distributed_optimizer = r.flag("distributed optimizer");
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
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw InputError(fmt::format("{}: empty file (a header line is needed)", source));
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  std::map<std::string, size_t> columns;
  const std::vector<std::string> header = split(line);
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string& name = header[i];
    if (std::find(kRequired.begin(), kRequired.end(), name) == kRequired.end() &&
        std::find(kOptional.begin(), kOptional.end(), name) == kOptional.end())
      throw InputError(fmt::format("{}: line 1: unknown column '{}'", source, name));
    if (!columns.emplace(name, i).second)
      throw InputError(fmt::format("{}: line 1: column '{}' given twice", source, name));
  }
  for (const std::string& name : kRequired)
    if (!columns.count(name)) throw InputError(fmt::format("{}: line 1: missing column '{}'", source, name));

  std::vector<megatron::MeasuredRun> runs;
  int64_t number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (trim(line).empty()) continue;
    if (line.find('"') != std::string::npos)
      throw InputError(fmt::format("{}: line {}: quoted fields are not supported", source, number));
    std::vector<std::string> fields = split(line);
    if (fields.size() != header.size())
      throw InputError(
          fmt::format("{}: line {}: {} fields, the header has {}", source, number, fields.size(), header.size()));
    if (static_cast<int64_t>(runs.size()) == kMaxRuns)
      throw InputError(fmt::format("{}: more than {} runs", source, kMaxRuns));
    runs.push_back(parse_row(Row(columns, std::move(fields), fmt::format("{}: line {}", source, number)), number));
  }
  if (runs.empty()) throw InputError(fmt::format("{}: no runs after the header", source));
  return runs;
}

std::vector<megatron::MeasuredRun> read_measured_runs(const std::string& path) {
  return parse_measured_runs(read_text_file(path), path);
}

}  // namespace phaze::io
