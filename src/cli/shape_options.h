#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "model/model_spec.h"

namespace phaze::cli {

/// --seq, --mbs and --tp of the commands that build one model's layer graph, bounded by model::limits.
struct ShapeOptions {
  int64_t seq = 0;  ///< 0: the model's default sequence length
  int64_t mbs = 1;
  int64_t tp = 1;
  std::string attention_backend = "fused";  ///< fused or unfused (the scores materialised, as PHAZE had them)
  /// The shape for `spec`: its default sequence length unless --seq was given.
  model::Shape shape(const model::ModelSpec& spec) const;
};

/// Adds --seq, --mbs, --tp and --attention-backend to `cmd`.
void add_shape_options(CLI::App* cmd, ShapeOptions& options);

/// --attention-backend of the commands that build accelerator layer graphs: fused (the attention core as one
/// kernel whose scores stay on chip) or unfused (materialised, as PHAZE's layer graph).
void add_attention_backend_option(CLI::App* cmd, std::string& backend);

}  // namespace phaze::cli
