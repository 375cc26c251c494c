#include "io/schedule_trace.h"

#include <fmt/format.h>

#include <algorithm>

namespace phaze::io {

using schedule::Problem;
using schedule::Schedule;
using schedule::TaskKind;
using schedule::TaskSlot;

namespace {

bool is_compute(TaskKind kind) {
  return kind == TaskKind::Tensor || kind == TaskKind::Vector || kind == TaskKind::Fused;
}

TaskKind effective_kind(const Problem& p, TaskKind kind) {
  return kind == TaskKind::Comm && p.comm_as_vector ? TaskKind::Vector : kind;
}

}  // namespace

std::string cores_text(const Problem& p, size_t i, const TaskSlot& s) {
  const TaskKind kind = effective_kind(p, p.tasks[i].kind);
  if (kind == TaskKind::None) return "-";
  if (kind == TaskKind::Comm) return "link";
  if (s.parallel) {
    if (kind == TaskKind::Tensor) return fmt::format("TC0-{}", p.tensor_cores - 1);
    if (kind == TaskKind::Vector) return fmt::format("VC0-{}", p.vector_cores - 1);
    return fmt::format("TC0-{} VC0-{}", p.tensor_cores - 1, p.pairs() - 1);
  }
  if (kind == TaskKind::Tensor) return fmt::format("TC{}", s.tensor_core);
  if (kind == TaskKind::Vector) return fmt::format("VC{}", s.vector_core);
  return fmt::format("TC{} VC{}", s.tensor_core, s.vector_core);
}

std::vector<ScheduleLane> schedule_lanes(const Problem& p, const Schedule& s) {
  std::vector<ScheduleLane> out;
  for (int64_t c = 0; c < p.tensor_cores; ++c) out.push_back({fmt::format("TC{}", c), {}});
  for (int64_t c = 0; c < p.vector_cores; ++c) out.push_back({fmt::format("VC{}", c), {}});
  const size_t vc0 = static_cast<size_t>(p.tensor_cores);
  const bool link = !p.comm_as_vector &&
                    std::any_of(p.tasks.begin(), p.tasks.end(), [](const auto& t) { return t.kind == TaskKind::Comm; });
  if (link) out.push_back({"link", {}});
  for (size_t i = 0; i < p.tasks.size(); ++i) {
    const TaskKind kind = effective_kind(p, p.tasks[i].kind);
    const TaskSlot& slot = s.tasks[i];
    if (kind == TaskKind::Comm) {
      out.back().tasks.push_back(i);
      continue;
    }
    if (!is_compute(kind)) continue;
    const bool tc = kind != TaskKind::Vector, vc = kind != TaskKind::Tensor;
    if (slot.parallel) {
      if (tc)
        for (int64_t c = 0; c < p.tensor_cores; ++c) out[static_cast<size_t>(c)].tasks.push_back(i);
      if (vc)
        for (int64_t c = 0; c < (kind == TaskKind::Fused ? p.pairs() : p.vector_cores); ++c)
          out[vc0 + static_cast<size_t>(c)].tasks.push_back(i);
      continue;
    }
    if (tc && slot.tensor_core >= 0) out[static_cast<size_t>(slot.tensor_core)].tasks.push_back(i);
    if (vc && slot.vector_core >= 0) out[vc0 + static_cast<size_t>(slot.vector_core)].tasks.push_back(i);
  }
  return out;
}

Timeline schedule_timeline(const std::string& title, const Problem& p, const Schedule& s) {
  Timeline out;
  out.name = title;
  const std::vector<ScheduleLane> rows = schedule_lanes(p, s);
  for (size_t r = 0; r < rows.size(); ++r) {
    out.tracks.push_back(rows[r].label);
    for (const size_t i : rows[r].tasks) {
      const TaskSlot& slot = s.tasks[i];
      const TaskKind kind = effective_kind(p, p.tasks[i].kind);
      TraceEvent e;
      e.name = p.tasks[i].id;
      e.category = kind == TaskKind::Tensor   ? "tensor"
                   : kind == TaskKind::Vector ? "vector"
                   : kind == TaskKind::Fused  ? "fused"
                                              : "communication";
      e.track = r;
      e.start_s = slot.start_s;
      e.duration_s = slot.finish_s - slot.start_s;
      e.args = {{"cores", cores_text(p, i, slot)}, {"mode", slot.parallel ? "parallel" : "single"}};
      out.events.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace phaze::io
