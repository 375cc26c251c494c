#include "schedule/layer_problem.h"

namespace phaze::schedule {

namespace {

TaskKind kind_of(model::Engine engine) {
  switch (engine) {
    case model::Engine::Tensor: return TaskKind::Tensor;
    case model::Engine::Vector: return TaskKind::Vector;
    case model::Engine::Fused: return TaskKind::Fused;
    case model::Engine::Comm: return TaskKind::Comm;
    case model::Engine::None: return TaskKind::None;
  }
  return TaskKind::None;
}

}  // namespace

Problem layer_problem(const model::OperatorGraph& graph, const hw::Architecture& arch, cost::Estimator& estimator) {
  Problem problem;
  problem.tensor_cores = arch.num_tc;
  problem.vector_cores = arch.num_vc;
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const model::Operator& op = graph.ops[i];
    const cost::OperatorEstimate e = estimator.estimate(op, arch);
    problem.tasks.push_back(
        Task{op.id, kind_of(op.engine), e.single.latency_s, e.all.latency_s, e.single.energy_j, e.all.energy_j});
    for (int pred : op.predecessors) problem.edges.emplace_back(pred, static_cast<int>(i));
  }
  return problem;
}

}  // namespace phaze::schedule
