// Records from data files, one at a time: CSV / TSV through libcsv (RFC 4180 quoting,
// fields with newlines, a UTF-8 byte-order mark skipped) and JSON lines through
// nlohmann::json. Shared by the read_csv / read_jsonl table functions and the shell's
// .import. Errors are Errors with code FORMAT (CANTOPEN for a file that cannot be
// opened) whose message starts with "file:line: ".
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace quereus::io {

// One delimited record: a field per column; nullopt is an empty unquoted field.
using Record = std::vector<std::optional<std::string>>;

struct DelimitedOptions {
  char delimiter = ',';
  char quote = '"';
};

// Where the reading of a data file stands: its path and the line last read, and the rows a
// file cursor produced from it. COPY … FROM hands one to the cursors it runs (through
// ExecContext::read_progress) to name the file and line in an error raised while a row is
// inserted, and to report how many rows it read.
struct ReadProgress {
  std::string path;
  int line = 0;
  uint64_t rows = 0;
};

// A file opened for reading, with its size for progress reports.
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // The next line (with its end-of-line bytes); false at the end of the file.
  bool read_line(std::string_view* line);
  const std::string& path() const { return path_; }
  int line() const { return line_; }
  // Bytes read so far, and the file's size (0 when unknown).
  uint64_t offset() const;
  uint64_t size() const { return size_; }
  // Reports each line read into *progress from now on (null: none).
  void set_progress(ReadProgress* progress);
  // "path:line: message" as a FORMAT error.
  [[noreturn]] void fail(const std::string& message) const;

 private:
  std::string path_;
  FILE* f_ = nullptr;
  char* buf_ = nullptr;
  size_t cap_ = 0;
  int line_ = 0;
  uint64_t size_ = 0;
  ReadProgress* progress_ = nullptr;
};

class DelimitedReader {
 public:
  DelimitedReader(const std::string& path, DelimitedOptions options);
  ~DelimitedReader();
  DelimitedReader(const DelimitedReader&) = delete;
  DelimitedReader& operator=(const DelimitedReader&) = delete;

  // The next record; false at the end. A blank line is a record of one nullopt field.
  bool next(Record* record);
  InputFile& file() { return file_; }

 private:
  friend struct DelimitedCallbacks;
  InputFile file_;
  struct Parser;
  std::unique_ptr<Parser> parser_;
  std::deque<Record> ready_;
  Record current_;
  bool done_ = false;
};

// JSON lines: one object per line; blank lines are skipped. Object keys keep their order.
// A line nested deeper than kMaxJsonDepth is refused (as jsonv::kMaxDepth).
inline constexpr int kMaxJsonDepth = 1000;
class JsonLinesReader {
 public:
  explicit JsonLinesReader(const std::string& path) : file_(path) {}
  bool next(nlohmann::ordered_json* object);
  InputFile& file() { return file_; }

 private:
  InputFile file_;
};

}  // namespace quereus::io
