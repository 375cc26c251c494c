#include "cli/shape_options.h"

#include "cli/option_values.h"

namespace phaze::cli {

model::Shape ShapeOptions::shape(const model::ModelSpec& spec) const {
  model::Shape s{seq > 0 ? seq : spec.default_seq, mbs, tp};
  s.fused_attention = attention_backend == "fused";
  return s;
}

void add_attention_backend_option(CLI::App* cmd, std::string& backend) {
  cmd->add_option(
         "--attention-backend", backend,
         "The attention core on the accelerator: fused (one kernel, its scores in the on-chip buffers, "
         "never in HBM, as every current accelerator runs it) or unfused (scores and probabilities materialised, as "
         "PHAZE's layer graph has them)")
      ->check(CLI::IsMember({"fused", "unfused"}))
      ->capture_default_str();
}

void add_shape_options(CLI::App* cmd, ShapeOptions& options) {
  add_integer_option(cmd, "--seq", options.seq, 1, model::limits::kSequence, "Sequence length (default: the model's)")
      ->default_str("");
  add_integer_option(cmd, "--mbs", options.mbs, 1, model::limits::kMicroBatch,
                     "Micro-batch size in sequences (seq · mbs at most 2^32 tokens)");
  add_integer_option(cmd, "--tp", options.tp, 1, model::limits::kTensorParallel,
                     "Tensor-parallel width (must divide the heads, the key/value heads and the FFN size)");
  add_attention_backend_option(cmd, options.attention_backend);
}

}  // namespace phaze::cli
