#include "io/csv_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

namespace phaze::io {

namespace {

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) out.push_back(trim(field));
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

}  // namespace

std::optional<std::string> CsvRow::text(const std::string& column) const {
  const auto it = columns_->find(column);
  if (it == columns_->end()) return std::nullopt;
  return fields_[it->second];
}

int64_t CsvRow::integer(const std::string& column, int64_t fallback, int64_t high, bool empty_is_absent) const {
  const auto value = text(column);
  if (!value || (empty_is_absent && value->empty())) return fallback;
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
  if (ec != std::errc() || end != value->data() + value->size() || n < 1 || n > high)
    throw bad(column, *value, fmt::format("a whole number in [1, {}]", high));
  return n;
}

int64_t CsvRow::required_integer(const std::string& column, int64_t high) const {
  const auto value = text(column);
  if (!value || value->empty()) throw bad(column, value.value_or(""), fmt::format("a whole number in [1, {}]", high));
  return integer(column, 0, high);
}

double CsvRow::number(const std::string& column, double high) const {
  const std::string value = text(column).value_or("");
  double x = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
  if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(x) || x <= 0 || x > high)
    throw bad(column, value, fmt::format("a number in (0, {:g}]", high));
  return x;
}

bool CsvRow::flag(const std::string& column) const {
  const auto value = text(column);
  if (!value) return false;
  if (*value == "1" || *value == "true") return true;
  if (*value == "0" || *value == "false" || value->empty()) return false;
  throw bad(column, *value, "0, 1, true or false");
}

InputError CsvRow::bad(const std::string& column, const std::string& value, const std::string& expected) const {
  return InputError(fmt::format("{}: column '{}' = '{}' must be {}", where_, column, value, expected));
}

std::unique_ptr<CsvTable> parse_csv(const std::string& text, const std::string& source,
                                    const std::vector<std::string>& required, const std::vector<std::string>& optional,
                                    int64_t max_rows, const std::string& what_rows) {
  auto table = std::make_unique<CsvTable>();
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw InputError(fmt::format("{}: empty file (a header line is needed)", source));
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  const std::vector<std::string> header = split(line);
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string& name = header[i];
    if (std::find(required.begin(), required.end(), name) == required.end() &&
        std::find(optional.begin(), optional.end(), name) == optional.end())
      throw InputError(fmt::format("{}: line 1: unknown column '{}'", source, name));
    if (!table->columns.emplace(name, i).second)
      throw InputError(fmt::format("{}: line 1: column '{}' given twice", source, name));
  }
  for (const std::string& name : required)
    if (!table->columns.count(name)) throw InputError(fmt::format("{}: line 1: missing column '{}'", source, name));
  int64_t number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (trim(line).empty()) continue;
    if (line.find('"') != std::string::npos)
      throw InputError(fmt::format("{}: line {}: quoted fields are not supported", source, number));
    std::vector<std::string> fields = split(line);
    if (fields.size() != header.size())
      throw InputError(
          fmt::format("{}: line {}: {} fields, the header has {}", source, number, fields.size(), header.size()));
    if (static_cast<int64_t>(table->rows.size()) == max_rows)
      throw InputError(fmt::format("{}: more than {} {}", source, max_rows, what_rows));
    table->rows.emplace_back(table->columns, std::move(fields), fmt::format("{}: line {}", source, number), number);
  }
  if (table->rows.empty()) throw InputError(fmt::format("{}: no {} after the header", source, what_rows));
  return table;
}

}  // namespace phaze::io
