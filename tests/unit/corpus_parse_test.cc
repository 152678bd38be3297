// Parses every block of the .sqllogic corpora (FORMAT.md §4 block splitting) and
// reports statements that fail to parse although no error is expected, statements
// whose canonical print does not re-parse to the same print (round trip), statements
// whose deep copy (ast::clone) does not print like the original, and result columns
// whose canonical name (FORMAT.md §6.3) is not a key of the expected rows.
//
// Both the reference corpus (shared/conformance/quereus-logic) and our own tests/logic
// must parse cleanly.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "parser/ast_clone.h"
#include "parser/ast_printer.h"
#include "parser/parser.h"

namespace quereus {
namespace {

namespace fs = std::filesystem;

struct Block {
  enum class Kind { kSetup, kResult, kError } kind;
  std::string sql;       // trimmed
  std::string expected;  // result JSON or error substring
  std::string file;
  int line = 0;  // line of the directive (or of the last SQL line at end of file)
};

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
  };
  while (b < e && space(s[b])) ++b;
  while (e > b && space(s[e - 1])) --e;
  // A UTF-8 BOM counts as whitespace for JS trim.
  std::string out(s.substr(b, e - b));
  if (out.rfind("\xEF\xBB\xBF", 0) == 0) out = trim(out.substr(3));
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return s;
}

// FORMAT.md §4, line by line.
std::vector<Block> split_blocks(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::vector<Block> blocks;
  std::string sql;
  int line_no = 0;
  size_t pos = 0;
  auto flush = [&](Block::Kind kind, std::string expected, int line) {
    std::string t = trim(sql);
    if (!t.empty())
      blocks.push_back(Block{kind, t, std::move(expected), path.filename().string(), line});
    sql.clear();
  };
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    std::string t = trim(line);
    if (t.empty()) continue;
    if (t.rfind("--", 0) == 0) {
      std::string tl = lower(t);
      if (tl.rfind("-- error:", 0) == 0) {
        if (!trim(sql).empty()) flush(Block::Kind::kError, trim(t.substr(9)), line_no);
      } else if (tl == "-- run") {
        if (!trim(sql).empty()) flush(Block::Kind::kSetup, "", line_no);
      }
      continue;  // -- params: and prose are irrelevant to parsing
    }
    if (t.rfind("\xE2\x86\x92", 0) == 0) {  // →
      if (!trim(sql).empty()) flush(Block::Kind::kResult, trim(t.substr(3)), line_no);
      continue;
    }
    size_t cut = line.find("--");
    std::string part = cut == std::string::npos ? line : line.substr(0, cut);
    if (!trim(part).empty()) sql += part + "\n";
  }
  if (!trim(sql).empty()) flush(Block::Kind::kSetup, "", line_no);
  return blocks;
}

// Result and error blocks are split on every ';' (FORMAT.md §5).
std::vector<std::string> split_statements(const std::string& block) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t semi = block.find(';', start);
    std::string piece =
        trim(block.substr(start, semi == std::string::npos ? std::string::npos : semi - start));
    if (!piece.empty()) out.push_back(piece);
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  return out;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

struct Report {
  int files = 0;
  int blocks = 0;
  int statements = 0;
  int failed_blocks = 0;                // blocks with an unexpected parse failure
  std::vector<std::string> unexpected;  // statements failing where no error is expected
  std::map<std::string, int> causes;    // unexpected failures by message
  int error_blocks = 0;
  int error_blocks_failing_at_parse = 0;
  // Error blocks that fail at parse time with a message lacking the expected text.
  std::vector<std::string> error_mismatches;
  int round_trip_checked = 0;
  std::vector<std::string> round_trip_failures;
  int clone_checked = 0;
  std::vector<std::string> clone_failures;
  int names_checked = 0;
  std::vector<std::string> name_mismatches;
  double seconds = 0;  // time spent in Parser::parse on the corpus text
};

std::string where(const Block& b) { return b.file + ":" + std::to_string(b.line); }

std::string one_line(std::string s, size_t max = 160) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > max) s = s.substr(0, max) + "…";
  return s;
}

void check_round_trip(const ast::Statement& stmt, const Block& b, Report& r) {
  ++r.round_trip_checked;
  std::string first = statement_to_string(stmt);
  try {
    auto again = Parser::parse(first);
    if (again.size() != 1) {
      r.round_trip_failures.push_back(where(b) + ": printed text parses to " +
                                      std::to_string(again.size()) +
                                      " statements: " + one_line(first));
      return;
    }
    std::string second = statement_to_string(*again[0]);
    if (second != first) {
      r.round_trip_failures.push_back(where(b) + ": not a fixed point:\n      " +
                                      one_line(first, 400) + "\n   -> " + one_line(second, 400));
    }
  } catch (const Error& e) {
    r.round_trip_failures.push_back(where(b) + ": printed text does not parse (" + e.what() +
                                    "): " + one_line(first, 400));
  }
}

// ast::clone must print exactly like the original and keep the statement's own site and
// text range (which the printer does not show).
void check_clone(const ast::Statement& stmt, const Block& b, Report& r) {
  ++r.clone_checked;
  std::string original = statement_to_string(stmt);
  try {
    ast::StatementPtr copy = ast::clone(stmt);
    std::string printed = statement_to_string(*copy);
    if (printed != original) {
      r.clone_failures.push_back(where(b) + ": clone prints differently:\n      " +
                                 one_line(original, 400) + "\n   -> " + one_line(printed, 400));
    } else if (copy->kind != stmt.kind || copy->site.line != stmt.site.line ||
               copy->site.column != stmt.site.column || copy->text_begin != stmt.text_begin ||
               copy->text_end != stmt.text_end) {
      r.clone_failures.push_back(where(b) + ": clone lost the kind, site or text range: " +
                                 one_line(original));
    }
  } catch (const Error& e) {
    r.clone_failures.push_back(where(b) + ": clone failed (" + e.what() + "): " +
                               one_line(original));
  }
}

// For a result block whose rows are objects, every unaliased non-column expression of
// the final SELECT must be named (expr_to_string) like a key of the expected JSON.
void check_names(const ast::Statement& stmt, const Block& b, Report& r) {
  if (stmt.kind != ast::StmtKind::kSelect) return;
  std::string exp = trim(b.expected);
  if (exp.size() < 3 || exp[0] != '[') return;
  size_t first = exp.find_first_not_of(" \t", 1);
  if (first == std::string::npos || exp[first] != '{') return;
  const ast::Select& sel = *static_cast<const ast::SelectStmt&>(stmt).select;
  if (sel.dml || sel.core.nested || !sel.core.values.empty()) return;
  if (sel.core.columns.size() == 1) {
    // FORMAT.md §6.1: some one-column rows are bare values, not objects.
    const auto& rc = sel.core.columns[0];
    if (rc.kind != ast::ResultColumn::Kind::kExpr) return;
    std::string n = lower(rc.alias.empty() ? expr_to_string(*rc.expr) : rc.alias);
    auto ends = [&](std::string_view suffix) {
      return n.size() >= suffix.size() &&
             n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    auto has = [&](std::string_view part) { return n.find(part) != std::string::npos; };
    bool logical = has(" and ") || has(" or ") || has(" xor ");
    if ((ends(" is not null") || ends(" is null")) && !logical) return;
    if (has(" - ") && !logical) return;
    static const char* kBare[] = {
        "json_extract", "json_array_length", "json_array", "json_object",
        "json_insert",  "json_replace",      "json_set",   "json_remove",
        "strftime",     "julianday",         "date",       "time",
        "datetime",     "epoch_s",           "epoch_ms",   "epoch_s_frac"};
    for (const char* f : kBare) {
      std::string prefix = std::string(f) + "(";
      if (n.rfind(prefix, 0) == 0 && n.size() > prefix.size() + 1 && n.back() == ')') return;
    }
  }
  for (const auto& rc : sel.core.columns) {
    if (rc.kind != ast::ResultColumn::Kind::kExpr || !rc.alias.empty()) continue;
    if (rc.expr->kind == ast::ExprKind::kColumn) continue;
    std::string name = expr_to_string(*rc.expr);
    ++r.names_checked;
    if (exp.find("\"" + json_escape(name) + "\"") == std::string::npos) {
      r.name_mismatches.push_back(where(b) + ": " + name + "   expected keys in " +
                                  one_line(exp, 200));
    }
  }
}

Report run_corpus(const fs::path& dir) {
  Report r;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".sqllogic")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  r.files = static_cast<int>(files.size());
  std::vector<Block> all;
  for (const auto& f : files) {
    auto blocks = split_blocks(f);
    all.insert(all.end(), std::make_move_iterator(blocks.begin()),
               std::make_move_iterator(blocks.end()));
  }
  for (const Block& b : all) {
    ++r.blocks;
    std::vector<std::string> pieces;
    if (b.kind == Block::Kind::kSetup) {
      pieces.push_back(b.sql);
    } else {
      pieces = split_statements(b.sql);
    }
    if (b.kind == Block::Kind::kError) ++r.error_blocks;
    bool failed = false;
    bool fell_back = false;
    for (size_t i = 0; i < pieces.size(); ++i) {
      try {
        auto t0 = std::chrono::steady_clock::now();
        auto stmts = Parser::parse(pieces[i]);
        r.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        r.statements += static_cast<int>(stmts.size());
        for (const auto& s : stmts) {
          check_round_trip(*s, b, r);
          check_clone(*s, b, r);
        }
        if (b.kind == Block::Kind::kResult && i + 1 == pieces.size() && stmts.size() == 1) {
          check_names(*stmts[0], b, r);
        }
      } catch (const Error& e) {
        if (b.kind == Block::Kind::kSetup && !fell_back) {
          // A setup block runs whole; after a failure, look at its statements one by
          // one so one unsupported statement does not hide the others.
          fell_back = true;
          pieces = split_statements(b.sql);
          i = static_cast<size_t>(-1);
          ++r.failed_blocks;
          failed = true;
          continue;
        }
        if (b.kind != Block::Kind::kError) {
          if (!failed) ++r.failed_blocks;
          failed = true;
          r.unexpected.push_back(where(b) + ": " + e.what() + "\n      in: " + one_line(pieces[i]));
          std::string cause = e.raw_message();
          size_t found = cause.find(" but found ");
          if (found != std::string::npos) cause = cause.substr(0, found);
          r.causes[cause]++;
          continue;  // the remaining statements are still worth checking
        }
        failed = true;
        if (lower(e.what()).find(lower(b.expected)) == std::string::npos) {
          r.error_mismatches.push_back(where(b) + ": expected '" + b.expected +
                                       "' but parse says: " + e.what() +
                                       "\n      in: " + one_line(pieces[i]));
        }
        break;
      }
    }
    if (failed && b.kind == Block::Kind::kError) ++r.error_blocks_failing_at_parse;
  }
  return r;
}

// QUEREUS_PARSE_REPORT_ALL=1 lists every failure instead of the first 30.
size_t list_limit() { return std::getenv("QUEREUS_PARSE_REPORT_ALL") ? SIZE_MAX : 30; }

void print_report(const std::string& title, const Report& r) {
  const size_t limit = list_limit();
  std::cout << "[" << title << "] " << r.files << " files: parsed " << r.blocks << " blocks ("
            << r.statements << " statements) in " << r.seconds * 1000 << " ms, "
            << r.unexpected.size() << " unexpected parse errors (in " << r.failed_blocks
            << " blocks)\n";
  for (size_t i = 0; i < r.unexpected.size() && i < limit; ++i)
    std::cout << "  " << r.unexpected[i] << "\n";
  if (!r.causes.empty()) {
    std::vector<std::pair<int, std::string>> causes;
    for (const auto& [msg, n] : r.causes) causes.emplace_back(n, msg);
    std::sort(causes.rbegin(), causes.rend());
    std::cout << "[" << title << "] unexpected parse errors by cause:\n";
    for (size_t i = 0; i < causes.size() && i < 20; ++i) {
      std::cout << "  " << causes[i].first << "  " << causes[i].second << "\n";
    }
  }
  std::cout << "[" << title << "] error blocks: " << r.error_blocks << ", of which "
            << r.error_blocks_failing_at_parse << " fail at parse time, "
            << r.error_mismatches.size() << " of those with a message lacking the expected text\n";
  for (size_t i = 0; i < r.error_mismatches.size() && i < limit; ++i) {
    std::cout << "  " << r.error_mismatches[i] << "\n";
  }
  std::cout << "[" << title << "] round trip: " << r.round_trip_checked << " statements checked, "
            << r.round_trip_failures.size() << " failures\n";
  for (size_t i = 0; i < r.round_trip_failures.size() && i < limit; ++i) {
    std::cout << "  " << r.round_trip_failures[i] << "\n";
  }
  std::cout << "[" << title << "] clone: " << r.clone_checked << " statements checked, "
            << r.clone_failures.size() << " failures\n";
  for (size_t i = 0; i < r.clone_failures.size() && i < limit; ++i) {
    std::cout << "  " << r.clone_failures[i] << "\n";
  }
  std::cout << "[" << title << "] column names: " << r.names_checked
            << " expression columns checked, " << r.name_mismatches.size()
            << " not found among the expected keys\n";
  for (size_t i = 0; i < r.name_mismatches.size() && i < limit; ++i) {
    std::cout << "  " << r.name_mismatches[i] << "\n";
  }
}

TEST(CorpusParse, ReferenceCorpusReport) {
  fs::path dir = fs::path(QUEREUS_SOURCE_DIR) / ".." / "shared" / "conformance" / "quereus-logic";
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no reference corpus at " << dir;
  Report r = run_corpus(dir);
  print_report("quereus-logic", r);
  EXPECT_GT(r.blocks, 0);
  // The whole dialect parses: no statement fails unless its expected outcome is an
  // error, every error the parser raises carries the expected text, and print → parse
  // → print is a fixed point, and every statement's deep copy prints like it.
  EXPECT_EQ(r.unexpected.size(), 0u);
  EXPECT_EQ(r.error_mismatches.size(), 0u);
  EXPECT_EQ(r.round_trip_failures.size(), 0u);
  EXPECT_EQ(r.clone_failures.size(), 0u);
  EXPECT_EQ(r.name_mismatches.size(), 0u);
  // Speed: the whole corpus parses in well under a second.
  EXPECT_LT(r.seconds, 1.0);
}

TEST(CorpusParse, OwnLogicTestsParseCleanly) {
  fs::path dir = fs::path(QUEREUS_SOURCE_DIR) / "tests" / "logic";
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no tests/logic directory";
  Report r = run_corpus(dir);
  print_report("tests/logic", r);
  EXPECT_EQ(r.unexpected.size(), 0u);
  EXPECT_EQ(r.round_trip_failures.size(), 0u);
  EXPECT_EQ(r.clone_failures.size(), 0u);
}

}  // namespace
}  // namespace quereus
