#include "cli/batch_in_tokens.h"

#include <fmt/format.h>

#include "cli/option_values.h"
#include "util/input_error.h"

namespace phaze::cli {

void add_global_batch_tokens_option(CLI::App* cmd, int64_t& tokens) {
  add_integer_option(cmd, "--global-batch-tokens", tokens, 0, kMaxGlobalBatchTokens,
                     "Tokens per iteration, in place of --global-batch (a multiple of the sequence length; 0: not "
                     "given)");
}

int64_t global_batch_of_tokens(int64_t tokens, int64_t seq) {
  if (seq <= 0 || tokens % seq == 0) return seq > 0 ? tokens / seq : 0;
  const int64_t below = tokens / seq * seq;
  throw InputError(fmt::format(
      "--global-batch-tokens {} is not a multiple of the sequence length {} (nearest: {}{} tokens, {}{} sequences)",
      tokens, seq, below > 0 ? fmt::format("{} or ", below) : "", below + seq,
      below > 0 ? fmt::format("{} or ", below / seq) : "", below / seq + 1));
}

}  // namespace phaze::cli
