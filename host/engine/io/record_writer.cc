// Data-file writer (see record_writer.h).
#include "io/record_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <strings.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <random>

#include "common/status.h"
#include "io/result_json.h"

namespace quereus::io {

namespace {

bool ends_with_nocase(const std::string& s, const char* ext) {
  const size_t l = std::strlen(ext);
  return s.size() >= l && strcasecmp(s.c_str() + s.size() - l, ext) == 0;
}

// The text of a value in a CSV / TSV field: as the shell prints it (a BLOB as x'…').
std::string field_text(const Value& v) {
  if (v.type() != ValueType::kBlob) return v.to_text();
  static const char* kHex = "0123456789abcdef";
  std::string s = "x'";
  for (unsigned char c : v.str()) s += {kHex[c >> 4], kHex[c & 15]};
  return s + "'";
}

}  // namespace

bool parse_file_format(const std::string& name, FileFormat* out) {
  if (strcasecmp(name.c_str(), "csv") == 0) *out = FileFormat::kCsv;
  else if (strcasecmp(name.c_str(), "tsv") == 0) *out = FileFormat::kTsv;
  else if (strcasecmp(name.c_str(), "jsonl") == 0 || strcasecmp(name.c_str(), "ndjson") == 0) *out = FileFormat::kJsonl;
  else if (strcasecmp(name.c_str(), "json") == 0) *out = FileFormat::kJson;
  else return false;
  return true;
}

FileFormat format_for_path(const std::string& path) {
  if (ends_with_nocase(path, ".tsv") || ends_with_nocase(path, ".tab")) return FileFormat::kTsv;
  if (ends_with_nocase(path, ".jsonl") || ends_with_nocase(path, ".ndjson")) return FileFormat::kJsonl;
  if (ends_with_nocase(path, ".json")) return FileFormat::kJson;
  return FileFormat::kCsv;
}

RecordWriter::RecordWriter(const std::string& path, std::vector<std::string> names, WriteOptions options)
    : path_(path), names_(std::move(names)), options_(std::move(options)) {
  if (options_.delimiter == 0) options_.delimiter = options_.format == FileFormat::kTsv ? '\t' : ',';
  if (path_.empty()) throw Error(StatusCode::kCantOpen, "cannot write '': the path is empty");
  if (options_.delimiter == '"' || options_.delimiter == '\n' || options_.delimiter == '\r')
    throw Error(StatusCode::kError, "the delimiter cannot be a quote or a line break");
  if (options_.null_text.find_first_of(std::string("\"\r\n") + options_.delimiter) != std::string::npos)
    throw Error(StatusCode::kError, "the NULL text cannot hold the delimiter, a quote or a line break");
  // The export replaces a regular file (keeping its permissions) or creates one; it does
  // not write through a link or into a pipe or device.
  struct stat target {};
  mode_t mode = 0644;
  if (::lstat(path_.c_str(), &target) == 0) {
    if (!S_ISREG(target.st_mode))
      throw Error(StatusCode::kCantOpen, "cannot write '" + path_ + "': " +
                                             (S_ISDIR(target.st_mode)   ? "it is a directory"
                                              : S_ISLNK(target.st_mode) ? "it is a symbolic link (name the file it points to)"
                                                                        : "not a regular file"));
    mode = target.st_mode & 07777;
  }
  // A fresh temporary name beside the target, created exclusively (never through a link
  // someone placed there).
  std::random_device random;
  for (int attempt = 0; fd_ < 0; ++attempt) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".quereus-tmp-%d-%08x", static_cast<int>(::getpid()), random());
    temp_ = path_ + suffix;
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd_ < 0 && (errno != EEXIST || attempt > 16))
      throw Error(StatusCode::kCantOpen, "cannot write '" + path_ + "': " + std::strerror(errno));
  }
  if (::fchmod(fd_, mode) != 0) io_failure("chmod failed");
  if ((options_.format == FileFormat::kCsv || options_.format == FileFormat::kTsv) && options_.header) {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (i) put(std::string(1, options_.delimiter));
      field(names_[i], true);
    }
    put("\n");
  }
  if (options_.format == FileFormat::kJson) put("[");
}

RecordWriter::~RecordWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

void RecordWriter::io_failure(const char* what) {
  throw Error(StatusCode::kIoErr, "cannot write '" + path_ + "': " + what + ": " + std::strerror(errno));
}

void RecordWriter::put(const std::string& s) {
  buffer_ += s;
  if (buffer_.size() >= 64 * 1024) flush();
}

void RecordWriter::flush() {
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) io_failure("write failed");
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
}

// RFC 4180: a field holding the delimiter, a quote, a line end or surrounding spaces is
// quoted with its quotes doubled; so is an empty text (an empty unquoted field is NULL).
void RecordWriter::field(const std::string& text, bool quote_empty) {
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  const bool quote = (text.empty() && quote_empty) ||
                     text.find_first_of(std::string("\"\r\n") + options_.delimiter) != std::string::npos ||
                     (!text.empty() && (blank(text.front()) || blank(text.back())));
  if (!quote) return put(text);
  std::string s = "\"";
  for (char c : text) s += c == '"' ? std::string("\"\"") : std::string(1, c);
  put(s + "\"");
}

void RecordWriter::write(const Row& row) {
  switch (options_.format) {
    case FileFormat::kCsv:
    case FileFormat::kTsv:
      for (size_t i = 0; i < row.size(); ++i) {
        if (i) put(std::string(1, options_.delimiter));
        if (row[i].is_null()) {
          put(options_.null_text);
        } else {
          std::string text = field_text(row[i]);
          if (!options_.null_text.empty() && text == options_.null_text)
            throw Error(StatusCode::kError, "cannot write '" + path_ + "': column '" + names_[i] + "' holds '" + text +
                                                "', the text chosen for NULL; choose another NULL text");
          field(text, true);
        }
      }
      put("\n");
      break;
    case FileFormat::kJsonl: put(row_json_text(names_, row) + "\n"); break;
    case FileFormat::kJson: put((rows_ ? ",\n" : "\n") + row_json_text(names_, row)); break;
  }
  ++rows_;
}

void RecordWriter::commit() {
  if (options_.format == FileFormat::kJson) put(rows_ ? "\n]\n" : "]\n");
  flush();
  if (::fsync(fd_) != 0) io_failure("fsync failed");
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) io_failure("close failed");
  if (::rename(temp_.c_str(), path_.c_str()) != 0) io_failure("rename failed");
  committed_ = true;
  std::filesystem::path dir = std::filesystem::path(path_).parent_path();
  if (dir.empty()) dir = ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace quereus::io
