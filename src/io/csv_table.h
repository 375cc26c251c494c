#pragma once

// A comma-separated table with a header line, as phaze's measurement files are written: plain fields (no
// quoting), columns found by header name in any order, a UTF-8 byte-order mark before the first skipped,
// blank lines skipped. Every error is an InputError naming the file, the line, the column and the value.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/input_error.h"

namespace phaze::io {

/// One data row; `where()` is "FILE: line N".
class CsvRow {
 public:
  CsvRow(const std::map<std::string, size_t>& columns, std::vector<std::string> fields, std::string where, int64_t line)
      : columns_(&columns), fields_(std::move(fields)), where_(std::move(where)), line_(line) {}

  /// The field, or nothing when the table has no such column.
  std::optional<std::string> text(const std::string& column) const;
  /// A whole number in [1, high]; `fallback` when the column is absent (or, with `empty_is_absent`, empty).
  int64_t integer(const std::string& column, int64_t fallback, int64_t high, bool empty_is_absent = false) const;
  /// A whole number in [1, high] that the row must give (InputError when the column is absent or empty).
  int64_t required_integer(const std::string& column, int64_t high) const;
  /// A finite number in (0, high].
  double number(const std::string& column, double high = 1e12) const;
  /// 0/1 or true/false; false when absent or empty.
  bool flag(const std::string& column) const;

  InputError bad(const std::string& column, const std::string& value, const std::string& expected) const;
  const std::string& where() const { return where_; }
  int64_t line() const { return line_; }

 private:
  const std::map<std::string, size_t>* columns_;
  std::vector<std::string> fields_;
  std::string where_;
  int64_t line_;
};

struct CsvTable {
  std::map<std::string, size_t> columns;  ///< header name → field index
  std::vector<CsvRow> rows;               ///< refer to `columns`: keep the table alive while using them
};

/// Parses `text` (named `source` in messages). Every header name must be in `required` or `optional`, each at
/// most once, and every required one present; at least one and at most `max_rows` data rows.
/// The returned table must not be copied or moved after its rows are used (they point into `columns`).
std::unique_ptr<CsvTable> parse_csv(const std::string& text, const std::string& source,
                                    const std::vector<std::string>& required, const std::vector<std::string>& optional,
                                    int64_t max_rows, const std::string& what_rows);

}  // namespace phaze::io
