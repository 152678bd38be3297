// Data-file readers (see record_reader.h).
#include "io/record_reader.h"

#include <csv.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/status.h"

namespace quereus::io {

InputFile::InputFile(const std::string& path) : path_(path) {
  // Checked before opening: opening a pipe would wait for a writer.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    // A file is read once to learn its columns and again for its rows: a pipe or a
    // device cannot be read twice.
    throw Error(StatusCode::kCantOpen, "cannot open '" + path + "': " +
                                           (S_ISDIR(st.st_mode) ? "it is a directory"
                                                                : "not a regular file (a pipe or a device cannot be "
                                                                  "read twice; copy it to a file first)"));
  f_ = std::fopen(path.c_str(), "rb");
  if (!f_) throw Error(StatusCode::kCantOpen, "cannot open '" + path + "': " + std::strerror(errno));
  if (::fstat(fileno(f_), &st) == 0) size_ = static_cast<uint64_t>(st.st_size);
}

InputFile::~InputFile() {
  std::free(buf_);
  if (f_) std::fclose(f_);
}

bool InputFile::read_line(std::string_view* line) {
  errno = 0;
  const ssize_t n = ::getline(&buf_, &cap_, f_);
  if (n <= 0) {
    if (std::ferror(f_)) throw Error(StatusCode::kIoErr, path_ + ": read failed: " + std::strerror(errno));
    return false;
  }
  ++line_;
  if (progress_) progress_->line = line_;
  size_t skip = line_ == 1 && n >= 3 && std::memcmp(buf_, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;  // as Excel writes
  *line = std::string_view(buf_ + skip, static_cast<size_t>(n) - skip);
  return true;
}

void InputFile::set_progress(ReadProgress* progress) {
  progress_ = progress;
  if (progress_) {
    progress_->path = path_;
    progress_->line = line_;
  }
}

uint64_t InputFile::offset() const {
  const long at = std::ftell(f_);
  return at < 0 ? 0 : static_cast<uint64_t>(at);
}

void InputFile::fail(const std::string& message) const {
  throw Error(StatusCode::kFormat, path_ + ":" + std::to_string(line_) + ": " + message);
}

// ---- CSV / TSV

struct DelimitedReader::Parser {
  csv_parser p;
};

struct DelimitedCallbacks {
  static void field(void* s, size_t len, void* data) {
    auto* r = static_cast<DelimitedReader*>(data);
    if (s == nullptr)
      r->current_.emplace_back(std::nullopt);
    else
      r->current_.emplace_back(std::string(static_cast<const char*>(s), len));
  }
  static void record(int, void* data) {
    auto* r = static_cast<DelimitedReader*>(data);
    r->ready_.push_back(std::move(r->current_));
    r->current_.clear();
  }
};

DelimitedReader::DelimitedReader(const std::string& path, DelimitedOptions options)
    : file_(path), parser_(std::make_unique<Parser>()) {
  if (csv_init(&parser_->p, CSV_APPEND_NULL | CSV_EMPTY_IS_NULL | CSV_STRICT | CSV_STRICT_FINI) != 0)
    throw Error(StatusCode::kNoMem, "cannot start a CSV parser");
  csv_set_delim(&parser_->p, static_cast<unsigned char>(options.delimiter));
  csv_set_quote(&parser_->p, static_cast<unsigned char>(options.quote));
  // Spaces and tabs are part of a field (RFC 4180), not trimmed.
  csv_set_space_func(&parser_->p, [](unsigned char) { return 0; });
  // Grow a field's buffer in large steps: a long field must not cost quadratic time.
  csv_set_blk_size(&parser_->p, 1 << 16);
}

DelimitedReader::~DelimitedReader() { csv_free(&parser_->p); }

bool DelimitedReader::next(Record* record) {
  while (ready_.empty() && !done_) {
    std::string_view line;
    if (!file_.read_line(&line)) {
      done_ = true;
      if (csv_fini(&parser_->p, DelimitedCallbacks::field, DelimitedCallbacks::record, this) != 0)
        file_.fail(std::string(csv_strerror(csv_error(&parser_->p))) + " (a quoted field is not closed)");
      break;
    }
    // A blank line between records is a record of one empty unquoted field (in a
    // one-column file, a NULL); libcsv itself reports none.
    if (parser_->p.pstate == 0 && line.find_first_not_of("\r\n") == std::string_view::npos) {
      ready_.push_back(Record{std::nullopt});
      continue;
    }
    if (csv_parse(&parser_->p, line.data(), line.size(), DelimitedCallbacks::field, DelimitedCallbacks::record,
                  this) != line.size())
      file_.fail(std::string(csv_strerror(csv_error(&parser_->p))) +
                 " (a quote inside a field must be doubled and the field quoted; or choose another 'quote')");
  }
  if (ready_.empty()) return false;
  *record = std::move(ready_.front());
  ready_.pop_front();
  return true;
}

// ---- JSON lines

bool JsonLinesReader::next(nlohmann::ordered_json* object) {
  std::string_view line;
  while (file_.read_line(&line)) {
    if (line.find_first_not_of(" \t\r\n") == std::string_view::npos) continue;
    // Nesting is bounded as everywhere JSON enters the engine (types/json_value.h).
    bool too_deep = false;
    nlohmann::ordered_json::parser_callback_t depth = [&](int d, nlohmann::ordered_json::parse_event_t,
                                                          nlohmann::ordered_json&) {
      if (d > kMaxJsonDepth) too_deep = true;
      return !too_deep;
    };
    *object = nlohmann::ordered_json::parse(line, depth, false);
    if (too_deep) file_.fail("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (object->is_discarded()) file_.fail("not valid JSON");
    if (!object->is_object()) file_.fail("a line must be a JSON object");
    return true;
  }
  return false;
}

}  // namespace quereus::io
