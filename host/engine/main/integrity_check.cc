// Integrity check of a database's tables (see integrity_check.h).
#include "main/integrity_check.h"

#include <algorithm>

#include "main/database_impl.h"
#include "eval/exec_context.h"
#include "write/indexes.h"
#include "types/compare.h"

namespace quereus {

namespace {

// A total order on rows, cell by cell, binary (entries are compared as stored).
bool row_less(const Row& a, const Row& b) {
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (int c = compare_values(a[i], b[i])) return c < 0;
  return a.size() < b.size();
}

std::string show(const Row& row) {
  std::string out = "(";
  for (size_t i = 0; i < row.size(); ++i) out += (i ? ", " : "") + (row[i].is_null() ? std::string("NULL") : row[i].to_text());
  return out + ")";
}

void check_indexes(DatabaseImpl& db, TableEntry& table, const std::vector<Row>& rows, std::vector<std::string>& out) {
  const std::string name = table.qualified_name();
  if (table.index_tables.size() != table.schema.indexes.size()) {
    out.push_back("table " + name + ": " + std::to_string(table.schema.indexes.size()) + " indexes declared, " +
                  std::to_string(table.index_tables.size()) + " stored");
    return;
  }
  ExecContext ctx;
  ctx.db = &db;
  ctx.generation = db.next_generation();
  IndexWriter w(db, table, &ctx, /*join=*/false);
  for (size_t i = 0; i < table.schema.indexes.size(); ++i) {
    const IndexSchema& ix = table.schema.indexes[i];
    std::string what = "index " + ix.name + " of " + name;
    std::vector<Row> expected;
    for (const Row& row : rows)
      if (w.member(i, row)) expected.push_back(index_entry(table.schema, ix, row));
    std::vector<Row> stored;
    try {
      stored = scan_rows(*table.index_tables[i]);
    } catch (const std::exception& e) {
      out.push_back(what + ": entries do not read: " + e.what());
      continue;
    }
    std::sort(expected.begin(), expected.end(), row_less);
    std::sort(stored.begin(), stored.end(), row_less);
    if (stored.size() != expected.size())
      out.push_back(what + ": " + std::to_string(stored.size()) + " entries for " + std::to_string(expected.size()) +
                    " rows of the table");
    std::vector<Row> missing, extra;
    std::set_difference(expected.begin(), expected.end(), stored.begin(), stored.end(), std::back_inserter(missing),
                        row_less);
    std::set_difference(stored.begin(), stored.end(), expected.begin(), expected.end(), std::back_inserter(extra),
                        row_less);
    if (!missing.empty())
      out.push_back(what + ": " + std::to_string(missing.size()) + " row(s) have no entry, e.g. " + show(missing[0]));
    if (!extra.empty())
      out.push_back(what + ": " + std::to_string(extra.size()) + " entr(ies) match no row, e.g. " + show(extra[0]));
  }
  try {
    check_unique_rows(table.schema, rows, [&](size_t i, size_t r) { return w.member(i, rows[r]); });
  } catch (const Error& e) {
    out.push_back("table " + name + ": " + e.raw_message());
  }
}

}  // namespace

std::vector<std::string> check_integrity(DatabaseImpl& db) {
  std::vector<std::string> out;
  for (auto& table : db.catalog().tables()) {
    if (!table->table) continue;
    const std::string name = table->qualified_name();
    std::vector<Row> rows;
    try {
      rows = scan_rows(*table);
    } catch (const std::exception& e) {
      out.push_back("table " + name + ": rows do not read: " + e.what());
      continue;
    }
    for (const Row& row : rows)
      if (row.size() != table->schema.columns.size()) {
        out.push_back("table " + name + ": a row has " + std::to_string(row.size()) + " cells for " +
                      std::to_string(table->schema.columns.size()) + " columns");
        break;
      }
    if (table->module && table->module->capabilities().persistent) {
      PlanRequest all;
      // The module's full-scan estimate is its statistic (floored at one row).
      double counted = table->table->best_access_plan(all).rows;
      if (static_cast<int64_t>(counted) != std::max<int64_t>(static_cast<int64_t>(rows.size()), 1))
        out.push_back("table " + name + ": the row-count statistic says " + std::to_string(static_cast<int64_t>(counted)) +
                      ", a scan finds " + std::to_string(rows.size()));
    }
    check_indexes(db, *table, rows, out);
  }
  return out;
}

}  // namespace quereus
