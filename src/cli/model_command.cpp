#include "cli/model_command.h"

#include <fmt/format.h>

#include <iostream>

#include "cli/option_values.h"
#include "cli/shape_options.h"
#include "cli/text_format.h"
#include "io/model_json.h"
#include "model/hf_config.h"
#include "model/model_spec_json.h"
#include "model/presets.h"
#include "util/input_error.h"

namespace phaze::cli {

namespace {

using namespace phaze::model;

struct ShowOptions {
  std::string model;
  ShapeOptions shape;
  int64_t activation_bytes = 2;
  int64_t parameter_bytes = 2;
  bool json = false;
  bool operators = false;
};

void list_models(bool json) {
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& name : preset_names()) {
      const ModelSpec m = *find_preset(name);
      out.push_back({{"name", name},
                     {"description", m.description},
                     {"seq", m.default_seq},
                     {"hyperparameters", model::hyperparameters_json(m)}});
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  fmt::print("{:<18} {:>4} {:>6} {:>4} {:>6} {:>6} {:>5}  {}\n", "preset", "L", "h", "a", "f", "V", "seq",
             "description");
  for (const auto& name : preset_names()) {
    const ModelSpec m = *find_preset(name);
    fmt::print("{:<18} {:>4} {:>6} {:>4} {:>6} {:>6} {:>5}  {}\n", name, m.num_layers, m.hidden, m.heads, m.ffn,
               m.vocab, m.default_seq, m.description);
  }
}

void print_operators(const char* title, const OperatorGraph& graph) {
  fmt::print("  {} ({}):\n", title, to_string(graph.direction));
  for (const Operator& op : graph.ops) {
    std::string work;
    if (op.gemm) work = fmt::format("GEMM ({}, {}, {}, {})", op.gemm->m, op.gemm->n, op.gemm->k, op.gemm->batch);
    if (op.attention)
      for (const Gemm& g : op.attention->products())
        work += fmt::format("{}GEMM ({}, {}, {}, {})", work.empty() ? "" : " + ", g.m, g.n, g.k, g.batch);
    for (const VectorPass& p : op.passes)
      work += fmt::format("{}{} {}", work.empty() ? "" : " + ", to_string(p.kind), group_digits(p.elements));
    if (op.collective)
      work =
          fmt::format("{} {} over {}", op.collective->kind == Collective::Kind::AllToAll ? "all-to-all" : "all-reduce",
                      human_bytes(op.collective->bytes), op.collective->ranks);
    std::string preds;
    for (int p : op.predecessors) preds += (preds.empty() ? "" : ",") + graph.ops[p].id;
    fmt::print("    {:<7} {:<6} {:<46} {:<44} <- {}\n", op.id, to_string(op.engine), op.name, work,
               preds.empty() ? "-" : preds);
  }
}

void print_report(const LayerGraph& g, const ModelTotals& totals, bool operators) {
  const ModelSpec& m = g.spec;
  fmt::print("{} [{}]\n", m.description, m.name);
  fmt::print("  L {}, h {}, heads {} (kv {}), d_h {}, f {}, V {} (allocated {} at t = {}), {} {}, {}\n", m.num_layers,
             m.hidden, m.heads, m.kv_heads, m.head_dim(), m.ffn, m.vocab, padded_vocab(m, g.shape.tp), g.shape.tp,
             m.pre_norm ? "pre" : "post", to_string(m.norm), to_string(m.activation));
  fmt::print("  seq {}, micro-batch {}, tensor-parallel width {}\n\n", g.shape.seq, g.shape.micro_batch, g.shape.tp);
  fmt::print("  parameters (as published)        {}\n", group_digits(totals.parameters));
  if (totals.training_parameters != totals.parameters)
    fmt::print("  parameters with pre-training heads {}\n", group_digits(totals.training_parameters));
  if (m.moe())
    fmt::print("  active parameters per token      {}  ({} of {} routed experts{})\n",
               group_digits(totals.active_parameters), m.experts_per_token, m.experts,
               m.shared_expert_ffn > 0 ? ", and the shared expert" : "");
  fmt::print("  training FLOPs per sequence      {:.6e}  (GEMMs, forward + backward, no recomputation)\n\n",
             static_cast<double>(totals.training_flops_per_sample));

  fmt::print("  Layer graph, per tensor-parallel rank and micro-batch:\n");
  fmt::print("  {:<14} {:>16} {:>18} {:>20} {:>20} {:>14}\n", "node", "parameters", "activation bytes", "forward FLOPs",
             "backward FLOPs", "output bytes");
  auto row = [](const std::string& name, const Layer& l) {
    fmt::print("  {:<14} {:>16} {:>18} {:>20} {:>20} {:>14}\n", name, group_digits(l.parameters),
               group_digits(l.activation_bytes), group_digits(l.forward_flops()), group_digits(l.backward_flops()),
               group_digits(l.output_bytes));
  };
  auto layers = [](int64_t first, int64_t last) {
    return first == last ? fmt::format("layer{}", first) : fmt::format("layer{}..{}", first, last);
  };
  row("embedding", g.embedding);
  if (g.dense_layers() > 0) row(layers(1, g.dense_layers()), g.dense_transformer);
  row(layers(g.first_main_node(), m.num_layers), g.transformer);
  row("head", g.head);
  if (g.dense_layers() > 0)
    fmt::print(
        "  (the first {} transformer layers are dense, the other {} have experts; the head's parameters "
        "include {} tied to the embedding)\n",
        g.dense_layers(), g.main_layers(), group_digits(g.head.tied_copy_parameters));
  else
    fmt::print("  (the {} transformer layers are identical; the head's parameters include {} tied to the embedding)\n",
               m.num_layers, group_digits(g.head.tied_copy_parameters));
  if (operators) {
    fmt::print("\n  Operators of the embedding layer\n");
    print_operators("embedding", g.embedding.forward);
    print_operators("embedding", g.embedding.backward);
    if (g.dense_layers() > 0) {
      fmt::print("\n  Operators of one dense transformer layer\n");
      print_operators("transformer", g.dense_transformer.forward);
      print_operators("transformer", g.dense_transformer.backward);
    }
    fmt::print("\n  Operators of one transformer layer{}\n", g.dense_layers() > 0 ? " with experts" : "");
    print_operators("transformer", g.transformer.forward);
    print_operators("transformer", g.transformer.backward);
    fmt::print("\n  Operators of the head\n");
    print_operators("head", g.head.forward);
    print_operators("head", g.head.backward);
  }
}

void show_model(const ShowOptions& o) {
  const ModelSpec spec = load_model(o.model);
  Precision precision;
  precision.activation_bytes = o.activation_bytes;
  precision.parameter_bytes = o.parameter_bytes;
  const Shape shape = o.shape.shape(spec);
  const std::string source = o.model;
  const LayerGraph graph = build_layer_graph(spec, shape, precision, source);
  const ModelTotals totals = model_totals(spec, shape.seq, precision);
  if (o.json) {
    std::cout << io::model_report_json(graph, totals, o.operators).dump(2) << "\n";
  } else {
    print_report(graph, totals, o.operators);
  }
}

}  // namespace

void add_model_command(CLI::App& app) {
  CLI::App* model = app.add_subcommand("model", "Model presets, config import and layer graphs");
  model->require_subcommand(1);

  auto list_json = std::make_shared<bool>(false);
  CLI::App* list = model->add_subcommand("list", "List the built-in model presets");
  list->add_flag("--json", *list_json, "Print JSON");
  list->callback([list_json] { list_models(*list_json); });

  auto o = std::make_shared<ShowOptions>();
  CLI::App* show = model->add_subcommand("show", "Show a model's layer graph, parameter count and FLOPs");
  show->add_option("model", o->model, "Preset name (see 'phaze model list') or path to a Hugging Face config.json")
      ->required();
  add_shape_options(show, o->shape);
  add_integer_option(show, "--activation-bytes", o->activation_bytes, 1, 8, "Bytes per activation element");
  add_integer_option(show, "--parameter-bytes", o->parameter_bytes, 1, 8, "Bytes per parameter");
  show->add_flag("--json", o->json, "Print JSON");
  show->add_flag("--ops", o->operators, "Include the operator graphs of the embedding, one layer and the head");
  show->callback([o] { show_model(*o); });
}

}  // namespace phaze::cli
