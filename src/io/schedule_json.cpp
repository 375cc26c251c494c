#include "io/schedule_json.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

#include "util/input_error.h"
#include "util/json_input.h"

namespace phaze::io {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using schedule::Problem;
using schedule::Schedule;
using schedule::Task;
using schedule::TaskKind;
using schedule::TaskSlot;

/// Reads typed fields of one JSON object; errors name the source, the item and the key.
class Fields {
 public:
  Fields(const json& object, std::string source, std::string item)
      : j_(object), source_(std::move(source)), item_(std::move(item)) {
    if (!j_.is_object()) fail(fmt::format("{} must be an object", item_.empty() ? "the input" : item_));
  }

  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }

  const json& get(const char* key) const {
    if (!has(key)) fail(fmt::format("{}missing key '{}'", where(), key));
    return j_.at(key);
  }

  double non_negative(const char* key) const {
    const json& v = get(key);
    if (!v.is_number()) fail(fmt::format("{}'{}' = {} must be a number", where(), key, v.dump()));
    const double x = v.get<double>();
    if (!std::isfinite(x)) fail(fmt::format("{}'{}' = {} must be finite", where(), key, v.dump()));
    if (x < 0) fail(fmt::format("{}'{}' = {} must not be negative", where(), key, v.dump()));
    return x;
  }

  int64_t integer_in(const char* key, int64_t lo, int64_t hi) const {
    const json& v = get(key);
    int64_t x = 0;
    if (v.is_number_integer()) {
      x = v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi) ? hi + 1 : v.get<int64_t>();
    } else if (v.is_number_float() && std::isfinite(v.get<double>()) &&
               v.get<double>() == std::floor(v.get<double>()) && std::abs(v.get<double>()) < 9e15) {
      x = static_cast<int64_t>(v.get<double>());
    } else {
      fail(fmt::format("{}'{}' = {} must be an integer", where(), key, v.dump()));
    }
    if (x < lo || x > hi) fail(fmt::format("{}'{}' = {} must lie in [{}, {}]", where(), key, v.dump(), lo, hi));
    return x;
  }

  bool boolean(const char* key) const {
    const json& v = get(key);
    if (!v.is_boolean()) fail(fmt::format("{}'{}' = {} must be true or false", where(), key, v.dump()));
    return v.get<bool>();
  }

  std::string string(const char* key) const {
    const json& v = get(key);
    if (!v.is_string()) fail(fmt::format("{}'{}' = {} must be a string", where(), key, v.dump()));
    return v.get<std::string>();
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw InputError(fmt::format("{}: {}", source_, message));
  }
  /// Fails with the item named first.
  [[noreturn]] void fail_item(const std::string& message) const { fail(where() + message); }

 private:
  std::string where() const { return item_.empty() ? "" : item_ + ": "; }

  const json& j_;
  std::string source_;
  std::string item_;
};

/// Short JSON text of a value for messages (one line, at most ~60 characters).
std::string shown(const json& v) {
  std::string text = v.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

}  // namespace

std::optional<TaskKind> parse_unit(std::string_view unit) {
  for (TaskKind kind : {TaskKind::Tensor, TaskKind::Vector, TaskKind::Fused, TaskKind::Comm, TaskKind::None})
    if (unit == schedule::to_string(kind)) return kind;
  return std::nullopt;
}

Problem parse_schedule_input(const std::string& text, const std::string& source) {
  const json j = parse_json_input(text, source);
  const Fields top(j, source, "");
  Problem problem;
  constexpr int64_t kMaxCores = 1 << 16;
  problem.tensor_cores = top.integer_in("tensor_cores", 1, kMaxCores);
  problem.vector_cores = top.integer_in("vector_cores", 1, kMaxCores);
  if (top.has("comm_as_vector")) problem.comm_as_vector = top.boolean("comm_as_vector");
  if (top.has("overlap_across_types")) problem.overlap_across_types = top.boolean("overlap_across_types");

  const json& ops = top.get("ops");
  if (!ops.is_array() || ops.empty()) top.fail("'ops' must be a non-empty array");
  if (ops.size() > static_cast<size_t>(schedule::kMaxTasks))
    top.fail(fmt::format("'ops' has {} operators, at most {} allowed", ops.size(), schedule::kMaxTasks));
  std::map<std::string, int> index;
  for (size_t k = 0; k < ops.size(); ++k) {
    std::string item = fmt::format("ops[{}]", k);
    const Fields f(ops[k], source, item);
    Task task;
    task.id = f.string("id");
    if (task.id.empty()) f.fail_item("'id' must not be empty");
    item = fmt::format("ops[{}] (id '{}')", k, task.id);
    const Fields g(ops[k], source, item);
    if (!index.emplace(task.id, static_cast<int>(k)).second)
      g.fail_item(fmt::format("duplicate op id '{}' (also ops[{}])", task.id, index.at(task.id)));
    const json& unit = g.get("unit");
    const std::optional<TaskKind> kind = unit.is_string() ? parse_unit(unit.get<std::string>()) : std::nullopt;
    if (!kind)
      g.fail_item(
          fmt::format("'unit' = {} must be \"tensor\", \"vector\", \"fused\", \"comm\" or \"none\"", shown(unit)));
    task.kind = *kind;
    task.single_s = g.non_negative("latency_s");
    const bool compute = task.kind == TaskKind::Tensor || task.kind == TaskKind::Vector || task.kind == TaskKind::Fused;
    task.parallel_s = compute || g.has("parallel_latency_s") ? g.non_negative("parallel_latency_s") : task.single_s;
    task.single_energy_j = g.has("energy_j") ? g.non_negative("energy_j") : 0.0;
    task.parallel_energy_j = g.has("parallel_energy_j") ? g.non_negative("parallel_energy_j") : task.single_energy_j;
    problem.tasks.push_back(std::move(task));
  }

  if (top.has("edges")) {
    const json& edges = top.get("edges");
    if (!edges.is_array()) top.fail("'edges' must be an array of [from, to] pairs");
    std::set<std::pair<int, int>> seen;
    for (size_t k = 0; k < edges.size(); ++k) {
      const json& e = edges[k];
      if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_string())
        top.fail(fmt::format("edges[{}] = {} must be a pair of op ids [\"from\", \"to\"]", k, shown(e)));
      const std::string from = e[0].get<std::string>(), to = e[1].get<std::string>();
      for (const std::string& id : {from, to})
        if (!index.count(id)) top.fail(fmt::format("edges[{}]: unknown op id '{}'", k, id));
      if (from == to) top.fail(fmt::format("edges[{}]: self-loop on op '{}'", k, from));
      const std::pair<int, int> edge{index.at(from), index.at(to)};
      if (!seen.insert(edge).second) top.fail(fmt::format("edges[{}]: duplicate edge '{}' -> '{}'", k, from, to));
      problem.edges.push_back(edge);
    }
  }
  // Cycles (and anything else the problem's own check finds).
  const std::string reason = schedule::validate(problem);
  if (!reason.empty()) top.fail(reason);
  return problem;
}

ordered_json schedule_input_json(const Problem& problem) {
  ordered_json out{{"tensor_cores", problem.tensor_cores}, {"vector_cores", problem.vector_cores}};
  if (problem.comm_as_vector) out["comm_as_vector"] = true;
  if (problem.overlap_across_types) out["overlap_across_types"] = true;
  ordered_json ops = ordered_json::array();
  for (const Task& t : problem.tasks)
    ops.push_back({{"id", t.id},
                   {"unit", schedule::to_string(t.kind)},
                   {"latency_s", t.single_s},
                   {"parallel_latency_s", t.parallel_s},
                   {"energy_j", t.single_energy_j},
                   {"parallel_energy_j", t.parallel_energy_j}});
  out["ops"] = ops;
  ordered_json edges = ordered_json::array();
  for (const auto& [from, to] : problem.edges)
    edges.push_back(ordered_json::array({problem.tasks[from].id, problem.tasks[to].id}));
  out["edges"] = edges;
  return out;
}

ordered_json schedule_output_json(const Problem& problem, const Schedule& schedule, std::string_view solver) {
  const auto number = [&](double x) { return schedule.feasible ? ordered_json(x) : ordered_json(nullptr); };
  const auto core = [](int64_t c) { return c >= 0 ? ordered_json(c) : ordered_json(nullptr); };
  ordered_json out;
  out["solver"] = std::string(solver);
  out["feasible"] = schedule.feasible;
  out["proven_optimal"] = schedule.feasible && schedule.proven_optimal;
  out["lower_bound_s"] = schedule.feasible && schedule.lower_bound_s > 0
                             ? nlohmann::ordered_json(schedule.lower_bound_s)
                             : nlohmann::ordered_json(nullptr);
  out["tensor_cores"] = problem.tensor_cores;
  out["vector_cores"] = problem.vector_cores;
  out["makespan_s"] = number(schedule.makespan_s);
  out["energy_j"] = number(schedule.energy_j);
  out["tensor_utilisation"] = number(schedule.tensor_utilisation);
  out["vector_utilisation"] = number(schedule.vector_utilisation);
  out["tensor_peak"] = number(schedule.tensor_peak);
  out["vector_peak"] = number(schedule.vector_peak);
  ordered_json ops = ordered_json::array();
  for (size_t i = 0; i < problem.tasks.size(); ++i) {
    const Task& t = problem.tasks[i];
    ordered_json op{{"id", t.id}, {"unit", schedule::to_string(t.kind)}};
    if (schedule.feasible && i < schedule.tasks.size()) {
      const TaskSlot& s = schedule.tasks[i];
      op["start_s"] = s.start_s;
      op["finish_s"] = s.finish_s;
      op["parallel"] = s.parallel;
      op["tensor_core"] = core(s.tensor_core);
      op["vector_core"] = core(s.vector_core);
    } else {
      op["start_s"] = nullptr;
      op["finish_s"] = nullptr;
      op["parallel"] = nullptr;
      op["tensor_core"] = nullptr;
      op["vector_core"] = nullptr;
    }
    ops.push_back(op);
  }
  out["ops"] = ops;
  return out;
}

}  // namespace phaze::io
