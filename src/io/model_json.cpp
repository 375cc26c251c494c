#include "io/model_json.h"

#include "model/model_spec_json.h"

namespace phaze::io {

using nlohmann::json;
using namespace phaze::model;

json to_json(const OperatorGraph& graph) {
  json ops = json::array();
  for (const Operator& op : graph.ops) {
    json o{{"id", op.id}, {"name", op.name}, {"engine", to_string(op.engine)}};
    if (op.gemm) o["gemm"] = {{"m", op.gemm->m}, {"n", op.gemm->n}, {"k", op.gemm->k}, {"batch", op.gemm->batch}};
    if (op.attention) {
      // A fused attention kernel: its products, on chip, in the order it runs them.
      json products = json::array();
      for (const Gemm& g : op.attention->products())
        products.push_back({{"m", g.m}, {"n", g.n}, {"k", g.k}, {"batch", g.batch}});
      o["fused_attention"] = {{"heads", op.attention->heads},
                              {"group", op.attention->group},
                              {"seq", op.attention->seq},
                              {"products", products}};
    }
    if (!op.passes.empty()) {
      json passes = json::array();
      for (const VectorPass& p : op.passes) {
        json pass{{"kind", to_string(p.kind)}, {"direction", to_string(p.direction)}, {"elements", p.elements}};
        if (p.row_length > 0) pass["row_length"] = p.row_length;
        passes.push_back(pass);
      }
      o["passes"] = passes;
    }
    if (op.collective)
      o["collective"] = {
          {"kind", op.collective->kind == model::Collective::Kind::AllToAll ? "all_to_all" : "all_reduce"},
          {"bytes", op.collective->bytes},
          {"ranks", op.collective->ranks}};
    json preds = json::array();
    for (int p : op.predecessors) preds.push_back(graph.ops[p].id);
    o["predecessors"] = preds;
    o["read_bytes"] = op.read_bytes;
    o["write_bytes"] = op.write_bytes;
    if (op.weight_gradient) o["weight_gradient"] = true;
    ops.push_back(o);
  }
  return ops;
}

json model_report_json(const LayerGraph& g, const ModelTotals& totals, bool with_operators) {
  json layers = json::array();
  json edges = json::array();
  for (int64_t i = 0; i < g.size(); ++i) {
    const Layer& layer = g.node(i);
    layers.push_back({{"name", g.node_name(i)},
                      {"kind", to_string(layer.kind)},
                      {"parameters", layer.parameters},
                      {"parameter_bytes", layer.parameter_bytes},
                      {"activation_bytes", layer.activation_bytes},
                      {"output_bytes", layer.output_bytes},
                      {"fwd_flops", layer.forward_flops()},
                      {"bwd_flops", layer.backward_flops()},
                      {"tensor_parallel", layer.tensor_parallel}});
    if (i + 1 < g.size())
      edges.push_back({{"from", g.node_name(i)}, {"to", g.node_name(i + 1)}, {"bytes", g.edge_bytes(i)}});
  }
  json report{{"model", g.spec.name},
              {"description", g.spec.description},
              {"hyperparameters", hyperparameters_json(g.spec)},
              {"seq", g.shape.seq},
              {"mbs", g.shape.micro_batch},
              {"tp", g.shape.tp},
              {"padded_vocab", padded_vocab(g.spec, g.shape.tp)},
              {"precision",
               {{"activation_bytes", g.precision.activation_bytes},
                {"parameter_bytes", g.precision.parameter_bytes},
                {"mask_bytes", g.precision.mask_bytes},
                {"index_bytes", g.precision.index_bytes}}},
              {"parameters", totals.parameters},
              {"training_parameters", totals.training_parameters},
              {"active_parameters", totals.active_parameters},
              {"forward_flops_per_sample", totals.forward_flops_per_sample},
              {"training_flops_per_sample", totals.training_flops_per_sample},
              {"parameters_per_rank", g.parameters()},
              {"tied_gradient_bytes", g.tied_gradient_bytes()},
              {"layers", layers},
              {"edges", edges}};
  if (with_operators) {
    auto both = [](const Layer& l) { return json{{"forward", to_json(l.forward)}, {"backward", to_json(l.backward)}}; };
    report["operators"] = {
        {"embedding", both(g.embedding)}, {"transformer", both(g.transformer)}, {"head", both(g.head)}};
    if (g.dense_layers() > 0) report["operators"]["dense_transformer"] = both(g.dense_transformer);
  }
  return report;
}

}  // namespace phaze::io
