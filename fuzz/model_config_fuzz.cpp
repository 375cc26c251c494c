// A Hugging Face config.json as a user would pass it to --model: parse, validate, then build the layer
// graph and the totals at the config's default sequence, where every size product is checked.
#include <cmath>
#include <cstdlib>

#include "fuzz_input.h"
#include "io/model_json.h"
#include "model/hf_config.h"
#include "model/layer_graph.h"
#include "util/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phaze;
  try {
    const model::ModelSpec spec = model::parse_hf_config(fuzz::as_text(data, size), "config.json");
    const model::Shape shape{.seq = spec.default_seq, .micro_batch = 1, .tp = 1};
    const model::Precision precision;
    const model::LayerGraph graph = model::build_layer_graph(spec, shape, precision, "config.json");
    const model::ModelTotals totals = model::model_totals(spec, shape.seq, precision);
    // Sizes of a valid model are positive: a wrapped product would show here.
    if (totals.parameters <= 0 || totals.training_flops_per_sample <= 0 || graph.parameters() <= 0) std::abort();
    (void)io::model_report_json(graph, totals, false).dump();
  } catch (const InputError&) {
  }
  return 0;
}
