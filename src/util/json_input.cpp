#include "util/json_input.h"

#include <fmt/format.h>

#include <cstdint>
#include <set>
#include <vector>

#include "util/input_error.h"

namespace phaze {

namespace {

using nlohmann::json;

/// Where the parser is: one frame per open object or array.
struct Frame {
  bool object = false;
  std::string key;             ///< object: the key of the member being read
  std::size_t index = 0;       ///< array: the index of the element being read
  std::set<std::string> keys;  ///< object: the keys seen so far
};

bool is_identifier(const std::string& key) {
  if (key.empty() || (key[0] >= '0' && key[0] <= '9')) return false;
  for (char c : key)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

/// The place of the value being read, e.g. `nodes["1"][3].id`; "the top level" outside any container.
std::string place(const std::vector<Frame>& frames) {
  std::string out;
  for (const Frame& f : frames) {
    if (!f.object) {
      out += fmt::format("[{}]", f.index);
    } else if (is_identifier(f.key)) {
      out += (out.empty() ? "" : ".") + f.key;
    } else {
      out += fmt::format("[{}]", json(f.key).dump());
    }
  }
  return out.empty() ? "the top level" : out;
}

/// Moves an enclosing array past the element that just ended.
void element_done(std::vector<Frame>& frames) {
  if (!frames.empty() && !frames.back().object) ++frames.back().index;
}

}  // namespace

json parse_json_input(const std::string& text, const std::string& source) {
  std::vector<Frame> frames;
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth >= kMaxJsonDepth)
          throw InputError(fmt::format("{}: {}: arrays and objects are nested deeper than {}", source, place(frames),
                                       kMaxJsonDepth));
        frames.push_back(Frame{event == json::parse_event_t::object_start, {}, 0, {}});
        break;
      case json::parse_event_t::key: {
        Frame& top = frames.back();
        top.key = parsed.get<std::string>();
        if (!top.keys.insert(top.key).second)
          throw InputError(
              fmt::format("{}: {}: key {} appears twice in one object", source, place(frames), parsed.dump()));
        break;
      }
      case json::parse_event_t::value:
        if (parsed.is_number_unsigned() && parsed.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
          throw InputError(
              fmt::format("{}: {} = {} is beyond the 64-bit integer range", source, place(frames), parsed.dump()));
        element_done(frames);
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames.pop_back();
        element_done(frames);
        break;
    }
    return true;
  };
  try {
    return json::parse(text, check);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: malformed JSON at byte {}", source, e.byte));
  } catch (const json::out_of_range& e) {
    // A number beyond the double range: nlohmann's message quotes it ("number overflow parsing '1e999'").
    const std::string what = e.what();
    const std::size_t open = what.find('\''), close = what.rfind('\'');
    const std::string number =
        open != std::string::npos && close > open ? what.substr(open + 1, close - open - 1) : std::string("a number");
    throw InputError(
        fmt::format("{}: {} = {} is beyond the range of a double (not finite)", source, place(frames), number));
  }
}

}  // namespace phaze
