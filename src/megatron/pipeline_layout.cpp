#include "megatron/pipeline_layout.h"

#include <fmt/format.h>

#include "util/input_error.h"

namespace phaze::megatron {

namespace {

/// One line naming the option, the layout (its first 80 characters) and what is wrong.
std::string layout_error(const std::string& option, const std::string& text, const std::string& why) {
  constexpr size_t kShown = 80;
  return fmt::format("{} '{}{}': {}", option, text.substr(0, kShown), text.size() > kShown ? "…" : "", why);
}

/// Recursive descent over the layout's grammar, expanding as it goes:
///   sequence := item*      item := atom ('*' count)?      atom := E | t | m | L | '|' | '(' sequence ')'
class LayoutParser {
 public:
  LayoutParser(const std::string& text, const std::string& option) : text_(text), option_(option) {}

  std::string parse() {
    std::string out = sequence();
    if (at_ < text_.size()) fail(fmt::format("unexpected '{}' at character {}", text_[at_], at_ + 1));
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw InputError(layout_error(option_, text_, why)); }

  void skip() {
    while (at_ < text_.size() && (text_[at_] == ',' || text_[at_] == ' ')) ++at_;
  }

  std::string sequence() {
    std::string out;
    for (skip(); at_ < text_.size() && text_[at_] != ')'; skip()) {
      const std::string item = atom();
      const int64_t n = count();
      if (static_cast<int64_t>(out.size()) + static_cast<int64_t>(item.size()) * n > kMaxLayoutSymbols)
        fail(fmt::format("expands to more than {} symbols", kMaxLayoutSymbols));
      if (item.empty()) continue;  // "()*n" is nothing, however large n
      for (int64_t i = 0; i < n; ++i) out += item;
    }
    return out;
  }

  std::string atom() {
    const char c = text_[at_];
    if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
      ++at_;
      return std::string(1, c);
    }
    if (c != '(')
      fail(fmt::format("unexpected '{}' at character {} (E, t, m, L, |, parentheses, *n and commas)", c, at_ + 1));
    if (++depth_ > kMaxDepth) fail(fmt::format("parentheses nest deeper than {}", kMaxDepth));
    const size_t open = at_++;
    std::string inner = sequence();
    --depth_;
    if (at_ >= text_.size()) fail(fmt::format("the parenthesis at character {} is not closed", open + 1));
    ++at_;  // ')'
    return inner;
  }

  /// The repeat count after an atom: 1 without '*'.
  int64_t count() {
    skip();
    if (at_ >= text_.size() || text_[at_] != '*') return 1;
    ++at_;
    int64_t n = 0;
    const size_t start = at_;
    while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') {
      n = n * 10 + (text_[at_] - '0');
      if (n > kMaxLayoutSymbols) fail(fmt::format("a repeat count exceeds {}", kMaxLayoutSymbols));
      ++at_;
    }
    if (at_ == start || n < 1) fail(fmt::format("'*' at character {} needs a count of at least 1", start));
    return n;
  }

  static constexpr int kMaxDepth = 64;
  const std::string& text_;
  const std::string& option_;
  size_t at_ = 0;
  int depth_ = 0;
};

}  // namespace

std::vector<LayoutChunk> parse_pipeline_layout(const std::string& text, const std::string& option) {
  const std::string symbols = LayoutParser(text, option).parse();
  const auto fail = [&](const std::string& why) { throw InputError(layout_error(option, text, why)); };
  if (symbols.empty()) fail("the layout is empty");
  // Within a chunk, as Megatron-LM builds it: the embedding first, the layers, the modules, the loss last.
  std::vector<LayoutChunk> chunks(1);
  for (const char c : symbols) {
    LayoutChunk& chunk = chunks.back();
    if (c == '|') {
      chunks.emplace_back();
      continue;
    }
    if (chunk.loss) fail("'L' must close its chunk");
    switch (c) {
      case 't':
        if (chunk.mtp_layers > 0) fail("a layer 't' after a module 'm' in one chunk");
        ++chunk.layers;
        break;
      case 'm': ++chunk.mtp_layers; break;
      case 'E':
        if (chunk.embedding || chunk.layers > 0 || chunk.mtp_layers > 0) fail("'E' must open its chunk");
        chunk.embedding = true;
        break;
      default: chunk.loss = true; break;  // 'L'
    }
  }
  return chunks;
}

std::string to_string(const std::vector<LayoutChunk>& layout) {
  const auto repeated = [](char c, int64_t n) {
    return n == 0 ? std::string() : n == 1 ? std::string(1, c) : fmt::format("{}*{}", c, n);
  };
  const auto chunk_text = [&](const LayoutChunk& c) {
    std::string x = c.embedding ? "E" : "";
    x += repeated('t', c.layers);
    x += repeated('m', c.mtp_layers);
    if (c.loss) x += 'L';
    return x;
  };
  // A run of k > 2 equal chunks X reads "(X|)*(k-1)X".
  std::string out;
  for (size_t j = 0; j < layout.size();) {
    size_t k = 1;
    while (j + k < layout.size() && layout[j + k] == layout[j]) ++k;
    const std::string x = chunk_text(layout[j]);
    if (j > 0) out += '|';
    out += k == 1 ? x : k == 2 ? x + "|" + x : fmt::format("({}|)*{}{}", x, k - 1, x);
    j += k;
  }
  return out;
}

}  // namespace phaze::megatron
