#include "cli/shape_options.h"

#include "cli/option_values.h"

namespace phaze::cli {

void add_shape_options(CLI::App* cmd, ShapeOptions& options) {
  add_integer_option(cmd, "--seq", options.seq, 1, model::limits::kSequence, "Sequence length (default: the model's)")
      ->default_str("");
  add_integer_option(cmd, "--mbs", options.mbs, 1, model::limits::kMicroBatch,
                     "Micro-batch size in sequences (seq · mbs at most 2^32 tokens)");
  add_integer_option(cmd, "--tp", options.tp, 1, model::limits::kTensorParallel,
                     "Tensor-parallel width (must divide the heads, the key/value heads and the FFN size)");
}

}  // namespace phaze::cli
