// Shell: SQL text → prepared statements → printed results.
#include "cli/shell.h"

#include <string>
#include <vector>

#include "cli/result_json.h"

namespace quereus {

namespace {

constexpr const char* kPrompt = "quereus> ";
constexpr const char* kContinuation = "   ...> ";
constexpr const char* kHelp =
    ".help                 this text\n"
    ".quit / .exit         leave the shell (so does end of input)\n"
    ".tables               list the tables (select name from schema() where type = 'table')\n"
    ".format table|json    how results are printed\n"
    ".events on|off        print each committed change event as a JSON line (docs/change-events.md)\n"
    "Anything else is SQL; a statement ends with a line whose last character is ';'.\n";

std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

Status Shell::run(std::string_view sql) {
  std::vector<std::unique_ptr<Statement>> stmts;
  Status s = db_.prepare(sql, &stmts);
  for (size_t i = 0; s.ok() && i < stmts.size(); ++i) {
    Statement& stmt = *stmts[i];
    std::vector<Row> rows;
    for (bool has_row = true; (s = stmt.step(&has_row)).ok() && has_row;) {
      if (format_ == OutputFormat::kJson)
        print_json_row(out_, stmt.column_names(), stmt.row());
      else
        rows.push_back(stmt.row());
    }
    if (s.ok() && format_ == OutputFormat::kTable && !stmt.column_names().empty())
      print_table(out_, stmt.column_names(), rows);
  }
  out_.flush();
  if (!s.ok()) err_ << "Error: " << s.to_string() << std::endl;
  return s;
}

void Shell::interactive(std::istream& in) {
  std::string buffer;
  for (std::string line;;) {
    out_ << (buffer.empty() ? kPrompt : kContinuation) << std::flush;
    if (!std::getline(in, line)) break;
    if (buffer.empty() && trim(line).substr(0, 1) == ".") {
      if (!dot_command(trim(line))) return;
      continue;
    }
    buffer += line;
    buffer += '\n';
    const std::string_view t = trim(buffer);
    if (t.empty())
      buffer.clear();
    else if (t.back() == ';') {
      (void)run(buffer);  // errors are printed; the session goes on
      buffer.clear();
    }
  }
  out_ << "\n";
  if (!trim(buffer).empty()) (void)run(buffer);
}

bool Shell::dot_command(std::string_view line) {
  const size_t space = line.find_first_of(" \t");
  const std::string_view cmd = line.substr(0, space);
  const std::string_view arg = space == std::string_view::npos ? "" : trim(line.substr(space));
  if (cmd == ".quit" || cmd == ".exit") return false;
  if (cmd == ".help") {
    out_ << kHelp;
  } else if (cmd == ".tables") {
    (void)run("select name from schema() where type = 'table' order by name");
  } else if (cmd == ".format" && (arg == "table" || arg == "json")) {
    format_ = arg == "table" ? OutputFormat::kTable : OutputFormat::kJson;
  } else if (cmd == ".events" && (arg == "on" || arg == "off")) {
    watch_events(arg == "on");
  } else {
    err_ << "Error: unknown command or bad arguments: " << line << " (try .help)" << std::endl;
  }
  return true;
}

namespace {

nlohmann::ordered_json row_json(const Row& r) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const Value& v : r) a.push_back(value_to_json(v));
  return a;
}

}  // namespace

void Shell::watch_events(bool on) {
  if (!on) {
    if (events_id_) db_.unsubscribe(events_id_);
    events_id_ = 0;
    return;
  }
  if (events_id_) return;
  events_id_ = db_.on_commit([this](const ChangeBatch& batch) {
    for (const SchemaChangeEvent& e : batch.schema) {
      nlohmann::ordered_json j;
      j["event"] = "schema";
      j["type"] = schema_change_kind_name(e.type);
      j["objectType"] = schema_object_kind_name(e.object_type);
      j["schema"] = e.schema;
      j["objectName"] = e.object_name;
      if (!e.old_object_name.empty()) j["oldObjectName"] = e.old_object_name;
      if (!e.column_name.empty()) j["columnName"] = e.column_name;
      if (!e.old_column_name.empty()) j["oldColumnName"] = e.old_column_name;
      if (!e.ddl.empty()) j["ddl"] = e.ddl;
      j["remote"] = e.remote;
      out_ << json_text(j) << "\n";
    }
    for (const DataChangeEvent& e : batch.data) {
      nlohmann::ordered_json j;
      j["event"] = "data";
      j["type"] = data_change_kind_name(e.type);
      j["schema"] = e.schema;
      j["table"] = e.table;
      j["key"] = row_json(e.key);
      if (e.old_row) j["oldRow"] = row_json(*e.old_row);
      if (e.new_row) j["newRow"] = row_json(*e.new_row);
      if (!e.changed_columns.empty()) j["changedColumns"] = e.changed_columns;
      j["remote"] = e.remote;
      out_ << json_text(j) << "\n";
    }
  });
}

}  // namespace quereus
