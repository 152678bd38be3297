// Result printing for the `quereus` executable: one ResultPrinter per result set, in one
// of the output modes (.mode / --format). Rows are printed as they arrive; the aligned
// modes (table, box, markdown) hold only the first kAlignSample rows to size the columns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "types/value.h"

namespace quereus {

enum class OutputMode { kTable, kBox, kCsv, kTsv, kJson, kJsonl, kMarkdown, kLine };

// "table", "box", "csv", "tsv", "json", "jsonl", "markdown", "line".
std::string_view output_mode_name(OutputMode mode);
// False when `name` is none of the above.
bool parse_output_mode(std::string_view name, OutputMode* mode);
// "table|box|csv|tsv|json|jsonl|markdown|line", for usage and error messages.
const char* output_mode_list();

struct OutputSettings {
  OutputMode mode = OutputMode::kTable;
  // Column names first (table, box, csv, tsv, markdown).
  bool headers = true;
  // How NULL is shown in table, box, markdown and line modes. A TEXT value that would look
  // the same is shown quoted ('NULL'), so the two never look alike. CSV/TSV show NULL as an
  // empty field (and the empty string as ""), JSON as null.
  std::string null_text = "NULL";
};

// The number of terminal columns `s` (UTF-8) takes: wide (CJK, emoji) code points count
// 2, combining marks and zero-width ones 0 (utf8proc's widths); invalid bytes count 1.
size_t display_width(std::string_view s);

// A value as a cell of the aligned modes: numbers as the engine prints them, text as is
// (control characters as \n, \t, \r), blobs as x'0a1b', booleans true/false, JSON as its
// text, NULL as settings.null_text.
std::string display_text(const Value& v, const OutputSettings& settings);

class ResultPrinter {
 public:
  // Borrows `out` and `settings` for the printer's lifetime.
  ResultPrinter(std::ostream& out, const OutputSettings& settings, std::vector<std::string> names);
  ResultPrinter(const ResultPrinter&) = delete;
  ResultPrinter& operator=(const ResultPrinter&) = delete;

  void add(const Row& row);
  // Prints what is held back and the closing lines ("(N rows)" in table and box modes).
  void finish();
  uint64_t rows() const { return rows_; }

  // The aligned modes size their columns from this many rows; a later, wider cell widens
  // only its own line.
  static constexpr size_t kAlignSample = 1000;

 private:
  bool aligned() const;
  void flush_sample();
  void print_aligned_row(const std::vector<std::string>& cells, const std::vector<bool>& right);
  void print_rule(int which);  // box: 0 top, 1 under the header, 2 bottom; table: header rule
  void print_delimited(const Row& row, char sep);

  std::ostream& out_;
  const OutputSettings& settings_;
  std::vector<std::string> names_;
  std::vector<size_t> widths_;
  std::vector<std::vector<std::string>> sample_;
  std::vector<std::vector<bool>> sample_right_;
  bool sampling_ = true;
  uint64_t rows_ = 0;
};

}  // namespace quereus
