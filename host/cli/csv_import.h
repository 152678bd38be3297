// .import: CSV or TSV rows into a table, parsed by libcsv (RFC 4180 quoting, fields with
// newlines), in one transaction (or inside the open one), each field coerced to its
// column's declared type.
#pragma once

#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>

#include "common/status.h"
#include "main/database.h"

namespace quereus {

struct ImportOptions {
  std::string file;
  std::string table;
  // Tab-separated; without format_given, chosen by the file's extension (.tsv, .tab).
  bool tsv = false;
  bool format_given = false;
  // The first record names the columns (and is not imported).
  bool header = true;
  // Records skipped before the header (or the first row).
  uint64_t skip = 0;
  // Prints "imported N rows (P%)" every kProgressRows rows to the progress stream.
  bool progress = false;
  // When set (Ctrl-C), the import stops with INTERRUPT and is undone. May be null.
  const std::atomic<bool>* cancel = nullptr;
};

struct ImportResult {
  uint64_t rows = 0;
  bool created = false;  // the table did not exist and was created
};

// Rows are inserted into `table` by column name when there is a header (every header
// name must be a column), else by position. A missing table is created with a `text null`
// column per field, named by the header (c1, c2, … without one). An empty unquoted field
// is NULL; a field for an INTEGER, REAL or BOOLEAN column that reads as one is inserted as
// that type. Errors name the file and line; nothing is kept from a failed import.
Status import_delimited(Database& db, const ImportOptions& options, std::ostream& progress, ImportResult* result);

constexpr uint64_t kProgressRows = 100000;

}  // namespace quereus
