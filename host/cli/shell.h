// Shell: runs SQL text against a Database and prints results, either from a script
// (stop at the first error) or interactively (prompt, continuation lines, dot-commands).
#pragma once

#include <istream>
#include <ostream>
#include <string_view>

#include "cli/output.h"
#include "common/status.h"
#include "main/database.h"

namespace quereus {

class Shell {
 public:
  // Borrows db and the streams for the shell's lifetime.
  Shell(Database& db, OutputFormat format, std::ostream& out, std::ostream& err)
      : db_(db), format_(format), out_(out), err_(err) {}
  ~Shell() { watch_events(false); }
  Shell(const Shell&) = delete;
  Shell& operator=(const Shell&) = delete;

  // Runs every statement of `sql` in order, printing the rows of row-producing
  // statements. Stops at the first error, prints it to err as "Error: CODE: message"
  // and returns it.
  Status run(std::string_view sql);

  // Reads statements from `in` until EOF, .quit or .exit. A statement ends with a line
  // whose last non-blank character is ';' (so a trigger body must end its lines otherwise).
  // Errors are printed and do not end the session. Lines come from std::getline: no line
  // editing or history (GNU readline would need the build to link it).
  void interactive(std::istream& in);

 private:
  // Handles a dot-command line; returns false for .quit / .exit.
  bool dot_command(std::string_view line);
  // .events on|off: prints every committed change event as one JSON line.
  void watch_events(bool on);

  Database& db_;
  OutputFormat format_;
  std::ostream& out_;
  std::ostream& err_;
  uint64_t events_id_ = 0;  // the .events subscription (0: none)
};

}  // namespace quereus
