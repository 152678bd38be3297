// Rows into a data file — CSV, TSV, JSON lines or one JSON array — written to a temporary
// file beside the target and renamed over it at commit (after fsync), so a failed or
// interrupted export leaves the target as it was. Used by COPY … TO.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "types/value.h"

namespace quereus::io {

enum class FileFormat { kCsv, kTsv, kJsonl, kJson };

// "csv", "tsv", "jsonl" (also "ndjson"), "json"; false for anything else.
bool parse_file_format(const std::string& name, FileFormat* out);
// By the file's extension: .tsv / .tab TSV, .jsonl / .ndjson JSON lines, .json JSON, else CSV.
FileFormat format_for_path(const std::string& path);

struct WriteOptions {
  FileFormat format = FileFormat::kCsv;
  bool header = true;            // CSV / TSV: a first record of column names
  char delimiter = 0;            // CSV / TSV: 0 = ',' for CSV, tab for TSV
  std::string null_text;         // CSV / TSV: how NULL is written (default: an empty unquoted field)
};

class RecordWriter {
 public:
  // Creates the temporary file; throws CANTOPEN when the directory is not writable.
  RecordWriter(const std::string& path, std::vector<std::string> names, WriteOptions options);
  ~RecordWriter();  // removes the temporary file unless committed
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  void write(const Row& row);
  // Flushes and syncs the file, renames it over the target, syncs the directory.
  void commit();
  uint64_t rows() const { return rows_; }

 private:
  void put(const std::string& s);
  void flush();
  void field(const std::string& text, bool quote_empty);
  [[noreturn]] void io_failure(const char* what);

  std::string path_, temp_;
  std::vector<std::string> names_;
  WriteOptions options_;
  int fd_ = -1;
  std::string buffer_;  // written out at 64 KB
  uint64_t rows_ = 0;
  bool committed_ = false;
};

}  // namespace quereus::io
