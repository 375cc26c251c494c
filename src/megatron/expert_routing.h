#pragma once

// Where a mixture of experts' tokens go when its experts are spread over nodes: the nodes a token's k
// copies reach, which DeepEP's deduplicating dispatch sends across the scale-out network once each
// (docs/gpu.md, "Expert parallelism").

#include <cstdint>

#include "model/model_spec.h"

namespace phaze::megatron {

/// Expected nodes other than its own that one token's k routed copies reach when the E experts are spread
/// evenly over `nodes` nodes and routing is balanced: each token's k experts drawn uniformly without
/// replacement, (n − 1) · (1 − C(E − E/n, k) / C(E, k)). With group-limited routing whose G groups are the
/// nodes (DeepSeek-V3's node-limited routing), the token's g groups are drawn first and its k experts among
/// their g · E/n: (n − 1) · g/n · (1 − C((g − 1) · E/n, k) / C(g · E/n, k)). Groups that are not the nodes
/// leave the first form. 0 for one node.
double expected_remote_nodes(const model::ModelSpec& spec, int64_t nodes);

}  // namespace phaze::megatron
