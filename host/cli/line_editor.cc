// LineEditor over libedit's native API (histedit.h).
#include "cli/line_editor.h"

#include <fcntl.h>
#include <histedit.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <clocale>
#include <cstdio>
#include <cwchar>
#include <strings.h>

namespace quereus {

namespace {

int g_wake[2] = {-1, -1};  // the self-pipe notify_interrupt() writes to
constexpr wchar_t kCancelKey = 3;  // ^C, bound to qrs-cancel

void drain_wake_pipe() {
  char buf[64];
  while (g_wake[0] >= 0 && ::read(g_wake[0], buf, sizeof buf) > 0) {
  }
}

LineEditor* self_of(EditLine* el) {
  void* p = nullptr;
  el_get(el, EL_CLIENTDATA, &p);
  return static_cast<LineEditor*>(p);
}

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && strncasecmp(s.data(), prefix.data(), prefix.size()) == 0;
}

}  // namespace

void LineEditor::notify_interrupt() {
  if (g_wake[1] >= 0) {
    const char c = 1;
    ssize_t ignored = ::write(g_wake[1], &c, 1);
    (void)ignored;
  }
}

LineEditor::LineEditor(std::string history_path, Completer completer)
    : history_path_(std::move(history_path)), completer_(std::move(completer)) {
  // Multibyte input needs a UTF-8 character type; a bare C locale gets C.UTF-8.
  std::setlocale(LC_CTYPE, "");
  if (MB_CUR_MAX == 1) std::setlocale(LC_CTYPE, "C.UTF-8");
  if (g_wake[0] < 0 && ::pipe(g_wake) == 0) {
    for (int fd : g_wake) {
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
      ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
  }
  el_ = el_init("quereus", stdin, stdout, stderr);
  el_set(el_, EL_CLIENTDATA, this);
  el_set(el_, EL_EDITOR, "emacs");
  el_set(el_, EL_PROMPT, &LineEditor::prompt_fn);
  el_set(el_, EL_GETCFN, &LineEditor::getc_fn);
  hist_ = history_init();
  HistEvent ev;
  history(hist_, &ev, H_SETSIZE, 2000);
  history(hist_, &ev, H_SETUNIQUE, 1);
  if (!history_path_.empty()) history(hist_, &ev, H_LOAD, history_path_.c_str());
  el_set(el_, EL_HIST, history, hist_);
  el_set(el_, EL_ADDFN, "qrs-complete", "Complete a keyword, table, column or dot-command", &LineEditor::complete_fn);
  el_set(el_, EL_BIND, "^I", "qrs-complete", nullptr);
  el_set(el_, EL_ADDFN, "qrs-cancel", "Drop the line and the statement being typed", &LineEditor::cancel_fn);
  el_set(el_, EL_BIND, "^C", "qrs-cancel", nullptr);
  el_source(el_, nullptr);  // ~/.editrc, as every libedit program
}

LineEditor::~LineEditor() {
  if (hist_) {
    HistEvent ev;
    if (!history_path_.empty()) history(hist_, &ev, H_SAVE, history_path_.c_str());
  }
  if (el_) el_end(el_);
  if (hist_) history_end(hist_);
}

char* LineEditor::prompt_fn(EditLine* el) { return const_cast<char*>(self_of(el)->prompt_.c_str()); }

int LineEditor::getc_fn(EditLine* el, wchar_t* wc) {
  std::mbstate_t state{};
  for (;;) {
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {g_wake[0], POLLIN, 0}};
    if (::poll(fds, g_wake[0] >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (g_wake[0] >= 0 && (fds[1].revents & POLLIN)) {
      drain_wake_pipe();
      *wc = kCancelKey;
      return 1;
    }
    if (!fds[0].revents) continue;
    char c;
    const ssize_t n = ::read(STDIN_FILENO, &c, 1);
    if (n == 0) return 0;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return -1;
    }
    const size_t k = std::mbrtowc(wc, &c, 1, &state);
    if (k == static_cast<size_t>(-2)) continue;  // more bytes of this character
    if (k == static_cast<size_t>(-1)) {           // not valid: the byte as is
      state = {};
      *wc = static_cast<unsigned char>(c);
    }
    return 1;
  }
}

unsigned char LineEditor::cancel_fn(EditLine* el, int) {
  self_of(el)->cancelled_ = true;
  return CC_NEWLINE;
}

unsigned char LineEditor::complete_fn(EditLine* el, int) {
  LineEditor* self = self_of(el);
  const LineInfo* li = el_line(el);
  const std::string before(li->buffer, li->cursor);
  size_t start = before.size();
  auto word_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || (c & 0x80);
  };
  while (start > 0 && word_char(before[start - 1])) --start;
  std::string word = before.substr(start);
  // "t.col": complete the part after the last dot, keeping the qualifier.
  std::string qualifier;
  if (!(start == 0 && !word.empty() && word[0] == '.')) {
    const size_t dot = word.rfind('.');
    if (dot != std::string::npos) {
      qualifier = word.substr(0, dot + 1);
      word = word.substr(dot + 1);
    }
  }
  std::vector<std::string> matches;
  if (self->completer_) {
    for (std::string& c : self->completer_(before, qualifier + word)) {
      if (starts_with_nocase(c, word) && std::find(matches.begin(), matches.end(), c) == matches.end())
        matches.push_back(std::move(c));
    }
  }
  if (matches.empty()) return CC_REFRESH_BEEP;
  std::sort(matches.begin(), matches.end());
  // Keywords follow the case the word was typed in.
  const bool upper = !word.empty() && std::isupper(static_cast<unsigned char>(word[0]));
  size_t common = matches[0].size();
  for (const std::string& m : matches) {
    size_t i = 0;
    while (i < common && i < m.size() && std::tolower(static_cast<unsigned char>(m[i])) ==
                                             std::tolower(static_cast<unsigned char>(matches[0][i])))
      ++i;
    common = i;
  }
  std::string insert = matches[0].substr(std::min(word.size(), common), common - std::min(word.size(), common));
  if (upper)
    for (char& c : insert) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (matches.size() == 1) insert += ' ';
  if (!insert.empty()) {
    el_insertstr(el, insert.c_str());
    return CC_REFRESH;
  }
  // Ambiguous and nothing more in common: list the choices under the line.
  std::string list = "\n";
  for (const std::string& m : matches) list += m + "  ";
  list += "\n";
  std::fwrite(list.data(), 1, list.size(), stdout);
  std::fflush(stdout);
  return CC_REDISPLAY;
}

LineEditor::Read LineEditor::read(const std::string& prompt, std::string* line) {
  prompt_ = prompt;
  cancelled_ = false;
  drain_wake_pipe();
  int count = 0;
  const char* text = el_gets(el_, &count);
  if (cancelled_) {
    el_reset(el_);
    return Read::kCancelled;
  }
  if (!text || count <= 0) return Read::kEof;
  line->assign(text, static_cast<size_t>(count));
  while (!line->empty() && (line->back() == '\n' || line->back() == '\r')) line->pop_back();
  return Read::kLine;
}

void LineEditor::add_history(const std::string& line) {
  if (line.find_first_not_of(" \t") == std::string::npos) return;
  HistEvent ev;
  history(hist_, &ev, H_ENTER, line.c_str());
  if (!history_path_.empty()) history(hist_, &ev, H_SAVE, history_path_.c_str());
}

}  // namespace quereus
