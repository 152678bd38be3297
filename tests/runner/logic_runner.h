// The .sqllogic runner (shared/conformance/FORMAT.md) as a library: the pure pieces
// (directive and block parsing, row rendering, JSON comparison) and run_logic_file(),
// which runs one file against a fresh Database. quereus-logic (logic_main.cc) is a thin
// command line over it; tests/unit/logic_runner_test.cc tests the pure pieces.
//
// Unlike the reference runner, a file keeps going after a failed check, so each file
// gets a score: checks = its result blocks + error blocks, passed = those that passed.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "config/options.h"
#include "types/value.h"

namespace quereus::logic {

using Json = nlohmann::ordered_json;

// ---- Pure pieces: no engine involved ----

// JavaScript's String.prototype.trim: ASCII and Unicode white space, including U+FEFF.
std::string_view js_trim(std::string_view s);

// FORMAT.md §2. Collects the `-- requires-capability:` tokens of a file into *out.
// Fails (kFormat, message "line N: …") on an unknown token, a directive without tokens,
// a directive after the first SQL line, or a near-miss spelling anywhere in the file.
Status parse_capabilities(std::string_view file_text, std::set<std::string>* out);

// The capability vocabulary (FORMAT.md §2).
const std::set<std::string>& known_capabilities();

enum class BlockKind {
  kSetup,      // `-- run` or end of file: exec the whole block
  kResult,     // `→ <json>`
  kError,      // `-- error: <substring>`
  kBadParams,  // a `-- params:` line whose JSON does not parse; fails the file when reached
};

struct Block {
  BlockKind kind = BlockKind::kSetup;
  int line = 0;                // 1-based line of the directive that closed the block (last line at EOF)
  std::string sql;             // the trimmed block text (empty for kBadParams)
  std::string expected;        // kResult: the JSON text; kError: the substring; kBadParams: the error
  std::optional<Json> params;  // kResult: the `-- params:` value in force, if any
};

// FORMAT.md §4: the blocks of a file, in order.
std::vector<Block> parse_blocks(std::string_view file_text);

// FORMAT.md §5: split on every ';' (quotes ignored), trim, drop empty pieces.
std::vector<std::string> split_statements(std::string_view block);

// FORMAT.md §6.1: whether a statement's only column, named `name`, renders as a bare value.
bool is_bare_column(std::string_view name);

// FORMAT.md §6: one result row as the JSON the expectation is compared with.
Json render_row(const std::vector<std::string>& names, const Row& row);

// FORMAT.md §7: deep equality; object key order ignored, every number compared as a
// double (NaN equals NaN), no coercion between types.
bool json_equal(const Json& a, const Json& b);

// FORMAT.md §5.2: a `-- params:` JSON value as an engine value (integral numbers become
// INTEGER, other numbers REAL, arrays and objects JSON).
Value param_value(const Json& j);

// ---- Running files ----

struct RunnerOptions {
  // Plugins and plugin_dir for each file's registry (mem is loaded unless listed).
  HostOptions host;
  // Default: "memory". The default module of each file's database.
  std::string module = "memory";
  // Default: the whole vocabulary. Capabilities the backend has; a file that requires
  // another one is skipped.
  std::set<std::string> capabilities = known_capabilities();
  // Default: 15. Checked between blocks: a file over the limit stops and fails. A single
  // statement that never returns still blocks the run.
  double time_limit_seconds = 15;
  // Default: null. When set, every block's outcome is written here.
  std::ostream* verbose = nullptr;
};

// Store mode: `module` is "store". Each file's database then uses the store plugin (loaded
// when the configuration does not list it) over a fresh temporary directory, removed after
// the file, and the reference's memory-only files (FORMAT.md §3) are skipped.
bool is_store_mode(const RunnerOptions& options);
const std::set<std::string>& memory_only_files();

struct FileResult {
  std::string file;  // as displayed (relative to the directory given on the command line)
  int checks = 0;    // result blocks + error blocks in the file
  int passed = 0;
  bool skipped = false;
  std::string skip_reason;
  std::string first_failure;  // one line, "line N: …"; empty when the file passed
  bool ok() const { return !skipped && first_failure.empty(); }
};

// Runs one file against a fresh Database. Never throws.
FileResult run_logic_file(const std::string& path, const RunnerOptions& options);

// The *.sqllogic files named by `paths` (files, or directories searched recursively):
// pairs of (path, display name), each directory's files sorted by display name.
Status collect_logic_files(const std::vector<std::string>& paths,
                           std::vector<std::pair<std::string, std::string>>* out);

// Pass lists: one file name per line; '#' starts a comment; blank lines are ignored.
Status read_pass_list(const std::string& path, std::set<std::string>* out);
// Writes kPassListHeader then the names, sorted.
Status write_pass_list(const std::string& path, const std::set<std::string>& names);
extern const char* const kPassListHeader;

}  // namespace quereus::logic
