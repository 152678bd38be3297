// LineEditor: the interactive shell's input, through libedit (Debian's libedit, the BSD
// line editor): emacs-style editing and arrow keys, a history file, TAB completion, and
// Ctrl-C that clears the line being typed.
//
// Ctrl-C: the terminal turns it into SIGINT. The shell's handler calls notify_interrupt(),
// which writes a byte to a pipe the editor polls beside the terminal; a read in progress
// then ends as kCancelled. A byte left from a Ctrl-C during a query is drained when the
// next read starts, so it does not cancel that line.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

struct editline;
struct history;

namespace quereus {

class LineEditor {
 public:
  // The words that may complete `word`, the partial word before the cursor; `before` is
  // the line up to the cursor. Candidates not starting with `word` (ignoring case) are
  // dropped by the editor.
  using Completer = std::function<std::vector<std::string>(std::string_view before, std::string_view word)>;

  // Reads from stdin, writes to stdout. `history_path` empty: no history file.
  LineEditor(std::string history_path, Completer completer);
  ~LineEditor();  // saves the history
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  enum class Read { kLine, kCancelled, kEof };
  // Shows `prompt` and reads one line (without its newline).
  Read read(const std::string& prompt, std::string* line);
  // Appends to the history (not blank lines, not a repeat of the last entry) and saves it.
  void add_history(const std::string& line);

  // Async-signal-safe: makes the read in progress (if any) return kCancelled.
  static void notify_interrupt();

 private:
  static char* prompt_fn(editline* el);
  static int getc_fn(editline* el, wchar_t* c);
  static unsigned char complete_fn(editline* el, int ch);
  static unsigned char cancel_fn(editline* el, int ch);

  editline* el_ = nullptr;
  history* hist_ = nullptr;
  std::string history_path_;
  Completer completer_;
  std::string prompt_;
  bool cancelled_ = false;
};

}  // namespace quereus
