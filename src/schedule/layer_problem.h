#pragma once

#include "cost/operator_cost.h"
#include "hw/architecture.h"
#include "model/operator_graph.h"
#include "schedule/problem.h"

namespace phaze::schedule {

/// The scheduling problem of one layer pass on a design: the graph's operators with their single-core and
/// all-cores estimates, its dependencies, the design's core counts.
Problem layer_problem(const model::OperatorGraph& graph, const hw::Architecture& arch, cost::Estimator& estimator);

}  // namespace phaze::schedule
