#pragma once

// Megatron-LM's --pipeline-model-parallel-layout (docs/gpu.md, "Pipeline layouts"): the contents of each of
// the p · v model chunks, written as a string of 'E' (the embedding), 't' (a transformer layer), 'm' (a
// multi-token prediction module) and 'L' (the final norm, the LM head and the loss), chunks separated by '|',
// with "X*n" repeating a symbol or a parenthesised group n times and ',' and spaces ignored:
// "Et*3|(tt|)*29,m|L" is 32 chunks. Chunk j runs on pipeline stage j mod p, as the (j div p)-th of its v.

#include <cstdint>
#include <string>
#include <vector>

namespace phaze::megatron {

/// What one model chunk of a layout holds.
struct LayoutChunk {
  int64_t layers = 0;      ///< transformer layers ('t'), in model order after the earlier chunks'
  int64_t mtp_layers = 0;  ///< multi-token prediction modules ('m')
  bool embedding = false;  ///< 'E'
  bool loss = false;       ///< 'L'
  bool operator==(const LayoutChunk&) const = default;
};

/// Most symbols a layout may expand to (docs/limits.md): 2^20.
inline constexpr int64_t kMaxLayoutSymbols = int64_t{1} << 20;

/// The chunks `text` describes; InputError naming `option`, the text (its first 80 characters) and what is wrong:
/// a chunk whose symbols are out of Megatron-LM's order ('E' first, the 't's, the 'm's, 'L' last), an unknown
/// character, an unbalanced parenthesis or one nested deeper than 64, a repeat count out of
/// 1..kMaxLayoutSymbols, an expansion beyond kMaxLayoutSymbols symbols, an empty layout.
std::vector<LayoutChunk> parse_pipeline_layout(const std::string& text, const std::string& option);

/// The layout written back in the same syntax, each chunk as "E", "t*n" (or "t"), "m*k" and "L" in that order, a
/// run of k > 2 equal chunks X as "(X|)*(k-1)X"; parsing it gives the layout back.
std::string to_string(const std::vector<LayoutChunk>& layout);

}  // namespace phaze::megatron
