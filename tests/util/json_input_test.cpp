// parse_json_input against what JSON can say but a reader must not take silently. Each message is one line
// naming the source, the place in the document and the value as written.

#include "util/json_input.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "util/input_error.h"

namespace {

void expect_refused(const std::string& text, std::initializer_list<std::string> needles) {
  SCOPED_TRACE(text.substr(0, 200));
  try {
    phaze::parse_json_input(text, "f.json");
    ADD_FAILURE() << "accepted";
  } catch (const phaze::InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind("f.json: ", 0), 0u) << message;
    for (const std::string& needle : needles)
      EXPECT_NE(message.find(needle), std::string::npos) << "lacks '" << needle << "': " << message;
  }
}

TEST(JsonInput, ValidDocumentsParseUnchanged) {
  const std::string text = R"({"a": [1, -2, 3.5, {"b": null}], "c": "x", "d": 9223372036854775807})";
  EXPECT_EQ(phaze::parse_json_input(text, "f.json"), nlohmann::json::parse(text));
  // The same key in two different objects is not a duplicate.
  EXPECT_NO_THROW(phaze::parse_json_input(R"({"a": {"k": 1}, "b": {"k": 2}})", "f.json"));
}

TEST(JsonInput, NumbersBeyondTheDoubleRangeNameTheirPlace) {
  expect_refused(R"({"nodes": {"1": [{"id": 0}, {"id": 1, "optimalLatencyFw": 1e999}]}})",
                 {"nodes[\"1\"][1].optimalLatencyFw", "1e999", "not finite"});
  expect_refused(R"([0, -1e400])", {"[1]", "-1e400"});
}

TEST(JsonInput, IntegersBeyond64BitsAreRefused) {
  expect_refused(R"({"id": 18446744073709551615})", {"id", "18446744073709551615", "64-bit"});
  expect_refused(R"({"id": 9223372036854775808})", {"9223372036854775808"});
}

TEST(JsonInput, DuplicateKeysAreRefused) {
  expect_refused(R"({"hidden_size": 1, "x": 2, "hidden_size": 3})", {"hidden_size", "twice"});
  expect_refused(R"({"a": [{"k": 1, "k": 1}]})", {"a[0]", "\"k\""});
}

TEST(JsonInput, NestingIsBounded) {
  const int depth = phaze::kMaxJsonDepth;
  const std::string ok = std::string(depth, '[') + std::string(depth, ']');
  EXPECT_NO_THROW(phaze::parse_json_input(ok, "f.json"));
  // A million levels would exhaust the stack of a recursive printer or destructor.
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  expect_refused(deep, {"nested deeper than"});
}

TEST(JsonInput, MalformedTextGivesTheByte) {
  expect_refused(R"({"a": 1,})", {"malformed JSON at byte 9"});
  expect_refused("", {"malformed JSON"});
}

}  // namespace
