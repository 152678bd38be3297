// Result printing: tables and JSON lines.
#include "cli/output.h"

#include <algorithm>

#include "cli/result_json.h"

namespace quereus {

namespace {

// Display width: UTF-8 code points.
size_t width(const std::string& s) {
  return std::count_if(s.begin(), s.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

void pad(std::ostream& out, const std::string& s, size_t w, bool right) {
  const std::string fill(w - std::min(w, width(s)), ' ');
  out << (right ? fill + s : s + fill);
}

}  // namespace

std::string display_text(const Value& v) {
  switch (v.type()) {
    case ValueType::kNull: return "NULL";
    case ValueType::kInteger: return std::to_string(v.as_int());
    case ValueType::kBigInt: return v.str();
    case ValueType::kReal: return format_real(v.as_real());
    case ValueType::kBoolean: return v.as_bool() ? "true" : "false";
    case ValueType::kJson: return v.str();
    case ValueType::kText: {
      std::string s;
      for (char c : v.str()) s += c == '\n' ? std::string("\\n") : std::string(1, c);
      return s;
    }
    case ValueType::kBlob: {
      static const char* kHex = "0123456789abcdef";
      std::string s = "x'";
      for (unsigned char c : v.str()) s += {kHex[c >> 4], kHex[c & 15]};
      return s + "'";
    }
  }
  return "";
}

void print_table(std::ostream& out, const std::vector<std::string>& names, const std::vector<Row>& rows) {
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> w(names.size());
  for (size_t c = 0; c < names.size(); ++c) w[c] = width(names[c]);
  for (const Row& r : rows) {
    cells.emplace_back();
    for (size_t c = 0; c < names.size(); ++c) {
      cells.back().push_back(c < r.size() ? display_text(r[c]) : "");
      w[c] = std::max(w[c], width(cells.back().back()));
    }
  }
  for (size_t c = 0; c < names.size(); ++c) {
    out << (c ? " | " : " ");
    pad(out, names[c], c + 1 < names.size() ? w[c] : 0, false);
  }
  out << "\n";
  for (size_t c = 0; c < names.size(); ++c) out << (c ? "-+-" : "-") << std::string(w[c], '-');
  out << "-\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t c = 0; c < names.size(); ++c) {
      out << (c ? " | " : " ");
      const bool right = c < rows[i].size() && rows[i][c].is_numeric();
      pad(out, cells[i][c], right || c + 1 < names.size() ? w[c] : 0, right);
    }
    out << "\n";
  }
  out << "(" << rows.size() << (rows.size() == 1 ? " row)\n" : " rows)\n");
}

void print_json_row(std::ostream& out, const std::vector<std::string>& names, const Row& row) {
  out << row_json_text(names, row) << "\n";
}

}  // namespace quereus
