#pragma once

// A global batch given in tokens (--global-batch-tokens), as training recipes state it ("4M tokens"), for
// predict and plan: one rule that turns it into sequences.

#include <CLI/CLI.hpp>
#include <cstdint>

namespace phaze::cli {

/// Most tokens --global-batch-tokens takes: the most sequences per iteration of the longest sequence.
inline constexpr int64_t kMaxGlobalBatchTokens = int64_t{1} << 40;

/// Adds --global-batch-tokens to `cmd`, into `tokens` (0: not given).
void add_global_batch_tokens_option(CLI::App* cmd, int64_t& tokens);

/// The global batch in sequences of `tokens` tokens of `seq` each; InputError naming --global-batch-tokens, with
/// the nearest multiples of `seq`, when `seq` does not divide it.
int64_t global_batch_of_tokens(int64_t tokens, int64_t seq);

}  // namespace phaze::cli
