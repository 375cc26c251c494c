#include "util/json_fields.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace phaze {

using nlohmann::json;

JsonFields::JsonFields(const json& object, std::string source) : j_(object), source_(std::move(source)) {
  if (!j_.is_object()) throw InputError(fmt::format("{}: expected a JSON object", source_));
}

int64_t JsonFields::count(const char* key, int64_t limit) const {
  if (!has(key)) throw InputError(fmt::format("{}: missing required key '{}'", source_, key));
  const int64_t v = integer(key);
  if (v <= 0) throw bad(key, "a positive integer");
  if (v > limit) throw bad(key, fmt::format("at most {}", limit));
  return v;
}

bool JsonFields::flag(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  if (!j_.at(key).is_boolean()) throw bad(key, "true or false");
  return j_.at(key).get<bool>();
}

int64_t JsonFields::integer_in(const char* key, int64_t fallback, int64_t low, int64_t high) const {
  if (!has(key)) return fallback;
  const int64_t v = integer(key);
  if (v < low || v > high) throw bad(key, fmt::format("an integer in [{}, {}]", low, high));
  return v;
}

int64_t JsonFields::bytes(const char* key, int64_t fallback, bool zero_ok, int64_t limit) const {
  if (!has(key)) return fallback;
  const int64_t v = integer(key);
  if (v < 0 || (v == 0 && !zero_ok)) throw bad(key, zero_ok ? "an integer ≥ 0 (0 = derived)" : "a positive integer");
  if (v > limit) throw bad(key, fmt::format("at most {}", limit));
  return v;
}

int64_t JsonFields::bytes_or_units(const char* bytes_key, const char* unit_key, int64_t unit, int64_t fallback,
                                   bool required, int64_t limit) const {
  const bool in_bytes = has(bytes_key);
  const bool in_units = has(unit_key);
  if (in_bytes && in_units)
    throw InputError(fmt::format("{}: give only one of '{}' and '{}'", source_, bytes_key, unit_key));
  if (in_bytes) return bytes(bytes_key, fallback, false, limit);
  if (!in_units) {
    if (required)
      throw InputError(fmt::format("{}: missing required key '{}' (or '{}')", source_, bytes_key, unit_key));
    return fallback;
  }
  const json& v = j_.at(unit_key);
  if (!v.is_number()) throw bad(unit_key, "a number");
  const double b = v.get<double>() * static_cast<double>(unit);
  if (!(b > 0)) throw bad(unit_key, "positive");
  if (b > static_cast<double>(limit)) throw bad(unit_key, fmt::format("at most {} bytes", limit));
  if (b != std::floor(b)) throw bad(unit_key, "a whole number of bytes");
  return static_cast<int64_t>(b);
}

double JsonFields::rate(const char* key, double fallback) const {
  if (!has(key)) return fallback;
  const json& v = j_.at(key);
  if (!v.is_number()) throw bad(key, "a number");
  const double r = v.get<double>();
  if (!(std::isfinite(r) && r > 0)) throw bad(key, "a finite number > 0");
  return r;
}

double JsonFields::number_in(const char* key, double fallback, double low, double high, bool low_open) const {
  if (!has(key)) return fallback;
  const json& v = j_.at(key);
  const std::string range = fmt::format("a number in {}{:g}, {:g}]", low_open ? "(" : "[", low, high);
  if (!v.is_number()) throw bad(key, range);
  const double x = v.get<double>();
  if (!std::isfinite(x) || x > high || x < low || (low_open && x == low)) throw bad(key, range);
  return x;
}

std::string JsonFields::text(const char* key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  const json& v = j_.at(key);
  if (!v.is_string()) throw bad(key, "a string");
  return v.get<std::string>();
}

void JsonFields::only(std::initializer_list<const char*> known) const {
  for (const auto& item : j_.items()) {
    bool found = false;
    for (const char* k : known) found = found || item.key() == k;
    if (!found) {
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      throw InputError(fmt::format("{}: unknown key '{}' (known: {})", source_, item.key(), list));
    }
  }
}

int64_t JsonFields::integer(const char* key) const {
  const json& v = j_.at(key);
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      throw bad(key, "an integer in range");
    return v.get<int64_t>();
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
  }
  throw bad(key, "an integer");
}

InputError JsonFields::bad(const char* key, const std::string& expected) const {
  if (!j_.contains(key))
    return InputError(fmt::format("{}: missing key '{}', which must be {}", source_, key, expected));
  return InputError(fmt::format("{}: key '{}' = {} must be {}", source_, key, j_.at(key).dump(), expected));
}

}  // namespace phaze
