// Result printing: the output modes of the shell, streaming.
#include "cli/output.h"

#include <utf8proc.h>

#include <algorithm>

#include "io/result_json.h"

namespace quereus {

namespace {

constexpr std::string_view kModeNames[] = {"table", "box", "csv", "tsv", "json", "jsonl", "markdown", "line"};

std::string plain_text(const Value& v) {
  switch (v.type()) {
    case ValueType::kNull: return "";
    case ValueType::kInteger: return std::to_string(v.as_int());
    case ValueType::kBigInt: return v.str();
    case ValueType::kReal: return format_real(v.as_real());
    case ValueType::kBoolean: return v.as_bool() ? "true" : "false";
    case ValueType::kJson: return v.str();
    case ValueType::kText: return v.str();
    case ValueType::kBlob: {
      static const char* kHex = "0123456789abcdef";
      std::string s = "x'";
      for (unsigned char c : v.str()) s += {kHex[c >> 4], kHex[c & 15]};
      return s + "'";
    }
  }
  return "";
}

void pad(std::ostream& out, const std::string& s, size_t w, bool right) {
  const std::string fill(w - std::min(w, display_width(s)), ' ');
  if (right)
    out << fill << s;
  else
    out << s << fill;
}

std::string repeat(std::string_view s, size_t n) {
  std::string r;
  r.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) r += s;
  return r;
}

void csv_field(std::ostream& out, const Value& v) {
  if (v.is_null()) return;
  const std::string s = plain_text(v);
  if (s.empty() || s.find_first_of(",\"\r\n") != std::string::npos) {
    out << '"';
    for (char c : s) out << (c == '"' ? "\"\"" : std::string(1, c));
    out << '"';
  } else {
    out << s;
  }
}

void tsv_field(std::ostream& out, const Value& v) {
  for (char c : plain_text(v)) {
    switch (c) {
      case '\t': out << "\\t"; break;
      case '\n': out << "\\n"; break;
      case '\r': out << "\\r"; break;
      case '\\': out << "\\\\"; break;
      default: out << c;
    }
  }
}

void csv_name(std::ostream& out, const std::string& name, char sep) {
  if (sep == ',')
    csv_field(out, Value::Text(name));
  else
    tsv_field(out, Value::Text(name));
}

}  // namespace

std::string_view output_mode_name(OutputMode mode) { return kModeNames[static_cast<int>(mode)]; }

bool parse_output_mode(std::string_view name, OutputMode* mode) {
  for (size_t i = 0; i < std::size(kModeNames); ++i) {
    if (kModeNames[i] == name) {
      *mode = static_cast<OutputMode>(i);
      return true;
    }
  }
  return false;
}

const char* output_mode_list() { return "table|box|csv|tsv|json|jsonl|markdown|line"; }

size_t display_width(std::string_view s) {
  size_t w = 0;
  auto p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(s.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {  // an invalid byte: shown as one replacement character
      ++w;
      n = 1;
    } else {
      w += static_cast<size_t>(std::max(0, utf8proc_charwidth(cp)));
    }
    p += n;
    left -= n;
  }
  return w;
}

std::string display_text(const Value& v, const OutputSettings& settings) {
  if (v.is_null()) return settings.null_text;
  if (v.type() != ValueType::kText) return plain_text(v);
  std::string s;
  for (char c : v.str()) {
    switch (c) {
      case '\n': s += "\\n"; break;
      case '\t': s += "\\t"; break;
      case '\r': s += "\\r"; break;
      default: s += c;
    }
  }
  if (s == settings.null_text) return "'" + s + "'";
  return s;
}

ResultPrinter::ResultPrinter(std::ostream& out, const OutputSettings& settings, std::vector<std::string> names)
    : out_(out), settings_(settings), names_(std::move(names)) {
  widths_.resize(names_.size());
  if (settings_.headers)
    for (size_t c = 0; c < names_.size(); ++c) widths_[c] = display_width(names_[c]);
  if (settings_.mode == OutputMode::kMarkdown)
    for (size_t& w : widths_) w = std::max<size_t>(w, 3);
  if (!aligned()) sampling_ = false;
  if (settings_.headers && (settings_.mode == OutputMode::kCsv || settings_.mode == OutputMode::kTsv)) {
    const char sep = settings_.mode == OutputMode::kCsv ? ',' : '\t';
    for (size_t c = 0; c < names_.size(); ++c) {
      if (c) out_ << sep;
      csv_name(out_, names_[c], sep);
    }
    out_ << "\n";
  }
}

bool ResultPrinter::aligned() const {
  return settings_.mode == OutputMode::kTable || settings_.mode == OutputMode::kBox ||
         settings_.mode == OutputMode::kMarkdown;
}

void ResultPrinter::add(const Row& row) {
  ++rows_;
  switch (settings_.mode) {
    case OutputMode::kCsv: print_delimited(row, ','); return;
    case OutputMode::kTsv: print_delimited(row, '\t'); return;
    case OutputMode::kJsonl: out_ << row_json_text(names_, row) << "\n"; return;
    case OutputMode::kJson:
      out_ << (rows_ == 1 ? "[" : ",\n") << row_json_text(names_, row);
      return;
    case OutputMode::kLine: {
      size_t w = 0;
      for (const std::string& n : names_) w = std::max(w, display_width(n));
      if (rows_ > 1) out_ << "\n";
      for (size_t c = 0; c < names_.size(); ++c) {
        pad(out_, names_[c], w, true);
        out_ << " = " << (c < row.size() ? display_text(row[c], settings_) : "") << "\n";
      }
      return;
    }
    default: break;
  }
  std::vector<std::string> cells(names_.size());
  std::vector<bool> right(names_.size());
  for (size_t c = 0; c < names_.size() && c < row.size(); ++c) {
    cells[c] = display_text(row[c], settings_);
    right[c] = row[c].is_numeric();
  }
  if (sampling_) {
    for (size_t c = 0; c < cells.size(); ++c) widths_[c] = std::max(widths_[c], display_width(cells[c]));
    sample_.push_back(std::move(cells));
    sample_right_.push_back(std::move(right));
    if (sample_.size() >= kAlignSample) flush_sample();
    return;
  }
  print_aligned_row(cells, right);
}

void ResultPrinter::print_delimited(const Row& row, char sep) {
  for (size_t c = 0; c < names_.size(); ++c) {
    if (c) out_ << sep;
    if (c < row.size()) {
      if (sep == ',')
        csv_field(out_, row[c]);
      else
        tsv_field(out_, row[c]);
    }
  }
  out_ << "\n";
}

void ResultPrinter::print_rule(int which) {
  if (settings_.mode == OutputMode::kTable) {
    for (size_t c = 0; c < names_.size(); ++c) out_ << (c ? "-+-" : "-") << std::string(widths_[c], '-');
    out_ << "-\n";
    return;
  }
  if (settings_.mode == OutputMode::kMarkdown) {
    for (size_t c = 0; c < names_.size(); ++c) out_ << "|" << std::string(widths_[c] + 2, '-');
    out_ << "|\n";
    return;
  }
  static const char* kLeft[] = {"┌", "├", "└"};
  static const char* kMid[] = {"┬", "┼", "┴"};
  static const char* kRight[] = {"┐", "┤", "┘"};
  for (size_t c = 0; c < names_.size(); ++c) out_ << (c ? kMid[which] : kLeft[which]) << repeat("─", widths_[c] + 2);
  out_ << kRight[which] << "\n";
}

void ResultPrinter::print_aligned_row(const std::vector<std::string>& cells, const std::vector<bool>& right) {
  const bool table = settings_.mode == OutputMode::kTable;
  const char* bar = settings_.mode == OutputMode::kBox ? "│" : "|";
  for (size_t c = 0; c < cells.size(); ++c) {
    if (table)
      out_ << (c ? " | " : " ");
    else
      out_ << bar << " ";
    // The table mode leaves the last column ragged (no trailing blanks).
    const bool last = c + 1 == cells.size();
    pad(out_, cells[c], table && last && !right[c] ? 0 : widths_[c], right[c]);
    if (!table) out_ << " ";
  }
  if (!table) out_ << bar;
  out_ << "\n";
}

void ResultPrinter::flush_sample() {
  sampling_ = false;
  if (settings_.mode == OutputMode::kBox) print_rule(0);
  if (settings_.headers) {
    print_aligned_row(names_, std::vector<bool>(names_.size(), false));
    if (settings_.mode != OutputMode::kBox || !sample_.empty()) print_rule(1);
  }
  for (size_t i = 0; i < sample_.size(); ++i) print_aligned_row(sample_[i], sample_right_[i]);
  sample_.clear();
  sample_right_.clear();
}

void ResultPrinter::finish() {
  if (sampling_) flush_sample();
  switch (settings_.mode) {
    case OutputMode::kJson: out_ << (rows_ ? "]\n" : "[]\n"); break;
    case OutputMode::kBox: print_rule(2); [[fallthrough]];
    case OutputMode::kTable: out_ << "(" << rows_ << (rows_ == 1 ? " row)\n" : " rows)\n"); break;
    default: break;
  }
  out_.flush();
}

}  // namespace quereus
