#pragma once

// Measured runs in vTrain's CSV column format (tests/data/vtrain/README.md), with optional columns for the
// features vTrain's runs did not use.
//
// Required columns, by header name (any order; a UTF-8 byte-order mark before the first is skipped):
//   # GPUs, global batch, micro batch, hidden size, attention heads, # layers, sequence length,
//   tensor parallelism, data parallelism, pipeline parallelism, iteration time (ms).
// Optional columns and their values when absent: Parameters (billion) (a label), vocabulary (50257),
// virtual pipeline (1), sequence parallel (0), recompute (full), distributed optimizer (0), dp overlap (0),
// flash attention (0), model (a preset or a Hugging Face config.json, a path relative to the file). Flags are
// 0/1 or true/false. The model of a row is the one its model column names, whose layers, hidden size and
// heads must be the row's; else a Megatron-LM GPT of that shape (model/presets.h megatron_gpt). # GPUs must equal TP ·
// DP · PP. Plain comma-separated fields, no quoting; at most kMaxRuns rows. Every error is an InputError naming the
// file, the line, the column and the value.

#include <cstdint>
#include <string>
#include <vector>

#include "megatron/measured_run.h"

namespace phaze::io {

inline constexpr int64_t kMaxRuns = 1000000;

std::vector<megatron::MeasuredRun> read_measured_runs(const std::string& path);
/// Same from the file's text; `source` names it in messages.
std::vector<megatron::MeasuredRun> parse_measured_runs(const std::string& text, const std::string& source);

}  // namespace phaze::io
