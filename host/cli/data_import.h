// .import: rows from a CSV, TSV or JSON-lines file into a table, in one transaction (or a
// savepoint inside the open one). Records come from the engine's readers (io/record_reader.h:
// libcsv for CSV / TSV, nlohmann::json for JSON lines), as for read_csv and COPY … FROM.
#pragma once

#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>

#include "common/status.h"
#include "main/database.h"

namespace quereus {

enum class ImportFormat {
  kAuto,   // by the file's extension: .tsv / .tab TSV, .jsonl / .ndjson JSON lines, else CSV
  kCsv,
  kTsv,
  kJsonl,
};

struct ImportOptions {
  std::string file;
  std::string table;
  ImportFormat format = ImportFormat::kAuto;
  // CSV / TSV: the first record names the columns (and is not imported).
  bool header = true;
  // CSV / TSV: records skipped before the header (or the first row).
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

// Imports `options.file` into `options.table`.
//
// CSV / TSV: with a header, fields go to the columns the header names (each must be a
// column); without one, to the table's columns in order. An empty unquoted field is NULL.
// JSON lines: each line is an object; its keys name the columns (a key that is no column
// is an error, a column no key names gets NULL); blank lines are skipped.
//
// A missing table is created with a column per field or key — `text null` for CSV / TSV,
// `any null` for JSON lines — named by the header or the first object's keys (c1, c2, …
// without a header). Text is converted to its column's declared type when it reads as one
// (INTEGER, REAL, BOOLEAN columns); JSON numbers, booleans and null keep their type, and
// nested objects and arrays are inserted as their JSON text. Errors name the file and
// line; nothing is kept from a failed import.
Status import_file(Database& db, const ImportOptions& options, std::ostream& progress, ImportResult* result);

constexpr uint64_t kProgressRows = 100000;

}  // namespace quereus
