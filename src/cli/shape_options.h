#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>

#include "model/model_spec.h"

namespace phaze::cli {

/// --seq, --mbs and --tp of the commands that build one model's layer graph, bounded by model::limits.
struct ShapeOptions {
  int64_t seq = 0;  ///< 0: the model's default sequence length
  int64_t mbs = 1;
  int64_t tp = 1;
  /// The shape for `spec`: its default sequence length unless --seq was given.
  model::Shape shape(const model::ModelSpec& spec) const { return {seq > 0 ? seq : spec.default_seq, mbs, tp}; }
};

/// Adds the three options to `cmd`.
void add_shape_options(CLI::App* cmd, ShapeOptions& options);

}  // namespace phaze::cli
