#pragma once

// Typed access to the keys of one JSON object of an input file (architecture and system descriptions).
// Every error is an InputError of one line naming the source (the file, and the item inside it), the key
// and the value as written.

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

#include "util/input_error.h"

namespace phaze {

class JsonFields {
 public:
  /// `object` must outlive the reader; `source` names it in messages (e.g. "sys.json: network.tiers[1]").
  JsonFields(const nlohmann::json& object, std::string source);

  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  const std::string& source() const { return source_; }

  /// A required positive integer at most `limit`.
  int64_t count(const char* key, int64_t limit) const;
  /// An optional integer in [low, high]: `fallback` when absent.
  int64_t integer_in(const char* key, int64_t fallback, int64_t low, int64_t high) const;
  /// An optional size in bytes at most `limit`: `fallback` when absent; 0 allowed when `zero_ok`.
  int64_t bytes(const char* key, int64_t fallback, bool zero_ok, int64_t limit) const;
  /// A size given either in bytes (`bytes_key`) or in `unit`-byte units (`unit_key`, may be fractional as
  /// long as the bytes are whole); `fallback` (or an error when `required`) when neither is there.
  int64_t bytes_or_units(const char* bytes_key, const char* unit_key, int64_t unit, int64_t fallback, bool required,
                         int64_t limit) const;
  /// An optional rate (bandwidth, clock): a finite number > 0.
  double rate(const char* key, double fallback) const;
  /// An optional finite number in [low, high] (`low_open`: > low): `fallback` when absent.
  double number_in(const char* key, double fallback, double low, double high, bool low_open) const;
  /// An optional string.
  std::string text(const char* key, const std::string& fallback) const;
  /// An optional true or false.
  bool flag(const char* key, bool fallback) const;
  /// Refuses any key not in `known` (a misspelt key would otherwise be ignored silently).
  void only(std::initializer_list<const char*> known) const;

  /// An InputError for `key`, saying what its value must be.
  InputError bad(const char* key, const std::string& expected) const;

 private:
  int64_t integer(const char* key) const;

  const nlohmann::json& j_;
  std::string source_;
};

}  // namespace phaze
