#pragma once

// The rows of a CSV text with a header line (no quoted fields, as phaze writes them), each as a map from
// column name to its text, so that tests read columns by name whatever their place.

#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace phaze_test {

using CsvRow = std::map<std::string, std::string>;

inline std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, ',');) out.push_back(field);
  return out;
}

inline std::vector<CsvRow> csv_rows(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = csv_fields(line);
  std::vector<CsvRow> rows;
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = csv_fields(line);
    CsvRow& row = rows.emplace_back();
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
  }
  return rows;
}

}  // namespace phaze_test
