// Groups 1–3: load / ABI / manifest, CRUD round-trip of every value type, keys and conflicts.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "harness.h"
#include "catalog/catalog.h"

namespace quereus::conformance::detail {

namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------- 1 load

void manifest_fields(Env& env) {
  const SuiteContext& c = env.ctx();
  const PluginManifest& m = c.manifest;
  if (m.name.empty()) fail("manifest: empty name");
  if (m.version.empty() || m.version.find('.') == std::string::npos)
    fail("manifest: version '" + m.version + "' is not a dotted version");
  if (m.abi_major != QRS_ABI_MAJOR)
    fail("manifest: abi.major " + std::to_string(m.abi_major) + ", host speaks " + std::to_string(QRS_ABI_MAJOR));
  if (m.abi_minor < 0) fail("manifest: negative abi.minor");
  bool listed = false;
  for (const std::string& name : m.modules) {
    std::string l = name;
    for (char& ch : l) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    listed = listed || l == c.module;
  }
  if (!listed) fail("manifest: provides.modules does not list '" + c.module + "'");
}

void module_registered(Env& env) {
  auto m = env.impl().registry().find_module(env.ctx().module);
  if (!m) fail("module '" + env.ctx().module + "' is not in the registry after loading");
  ModuleCapabilities caps = m->capabilities();
  ModuleCapabilities again = m->capabilities();
  if (caps.persistent != again.persistent || caps.scan_snapshot_isolation != again.scan_snapshot_isolation ||
      caps.committed_reads != again.committed_reads || caps.backing_host != again.backing_host)
    fail("capabilities differ between two reads");
}

void abi_major_mismatch_refused(Env& env) {
  const SuiteContext& c = env.ctx();
  fs::path dir = env.ctx().fresh_dir();
  fs::path lib = fs::path(c.plugin_path);
  fs::path copy = dir / lib.filename();
  std::error_code ec;
  fs::create_symlink(lib, copy, ec);
  if (ec) fail("cannot link " + copy.string() + ": " + ec.message());
  nlohmann::json j = nlohmann::json::parse(c.manifest.json);
  j["abi"]["major"] = QRS_ABI_MAJOR + 1;
  std::ofstream(dir / (lib.stem().string() + ".plugin.json")) << j.dump();
  auto registry = std::make_shared<Registry>();
  PluginLoader loader(registry, {dir.string()});
  Status s = loader.load(PluginSpec{copy.string(), std::nullopt, {}, ""});
  if (s.ok()) fail("a manifest declaring ABI major " + std::to_string(QRS_ABI_MAJOR + 1) + " was loaded");
  if (s.to_string().find("ABI major") == std::string::npos) fail("refused, but not for the ABI: " + s.to_string());
  if (registry->find_module(c.module)) fail("the refused plugin registered its module");
}

void create_insert_drop(Env& env) {
  env.exec("create table t (k integer primary key, v text)");
  env.exec("insert into t values (1, 'a'), (2, 'b')");
  env.expect("select k, v from t order by k", {"1|a", "2|b"});
  env.exec("drop table t");
  env.fails("select * from t");
  env.exec("create table t (k integer primary key, v text)");
  env.expect("select count(*) from t", {"0"});
}

// ---------------------------------------------------------------- 2 crud

// A cell as "<physical type>:<value>", the canonical tag the module must hand back
// (a REAL 3 is real:3, a BOOLEAN true is boolean:true; -0.0 and infinities spelled out).
std::string tagged(const Value& v) {
  static const char* names[] = {"null", "integer", "real", "text", "blob", "boolean", "json", "bigint"};
  std::string tag = names[static_cast<int>(v.type())];
  if (v.is_null()) return tag;
  if (v.type() == ValueType::kReal) {
    double d = v.as_real();
    if (std::isinf(d)) return tag + (d < 0 ? ":-inf" : ":inf");
    if (d == 0 && std::signbit(d)) return tag + ":-0";
  }
  if (v.type() == ValueType::kBlob) {
    static const char* hex = "0123456789ABCDEF";
    std::string h;
    for (unsigned char c : v.str()) h += std::string{hex[c >> 4], hex[c & 15]};
    return tag + ":x'" + h + "'";
  }
  if (v.type() == ValueType::kText && v.str().find('\0') != std::string::npos) {
    std::string t;
    for (char c : v.str()) t += c ? std::string(1, c) : std::string("\\0");
    return tag + ":" + t;
  }
  return tag + ":" + v.to_text();
}

std::string tagged_row(const Row& r) {
  std::string s;
  for (size_t i = 0; i < r.size(); ++i) s += (i ? "|" : "") + tagged(r[i]);
  return s;
}

struct Case {
  std::string literal;   // SQL text inserted
  std::string expected;  // the cell read back, tagged()
};

// Inserts each literal into a column of `decl`; the row the write returns (RETURNING), the
// row read back by key and the row read by a full scan must all be the expected cell.
void round_trip(Env& env, const std::string& decl, const std::vector<Case>& cases) {
  env.exec("create table t (k integer primary key, v " + decl + ")");
  std::vector<std::string> expected;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string ins = "insert into t values (" + std::to_string(i) + ", " + cases[i].literal + ") returning v";
    std::vector<Row> written = env.query_rows(ins);
    if (written.size() != 1) fail("`" + ins + "`: expected one row returned, got " + std::to_string(written.size()));
    expect_eq("`" + ins + "` wrote", cases[i].expected, tagged(written[0][0]));
    expected.push_back(cases[i].expected);
  }
  std::vector<std::string> scanned;
  for (const Row& r : env.query_rows("select v from t order by k")) scanned.push_back(tagged(r[0]));
  if (scanned != expected)
    fail("`select v from t order by k`: expected " + render_rows(expected) + ", got " + render_rows(scanned));
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string q = "select v from t where k = " + std::to_string(i);
    std::vector<Row> rows = env.query_rows(q);
    if (rows.size() != 1) fail("`" + q + "`: expected one row, got " + std::to_string(rows.size()));
    expect_eq("`" + q + "`", expected[i], tagged(rows[0][0]));
  }
}

void crud_integer(Env& env) {
  round_trip(env, "integer null",
             {{"0", "integer:0"},
              {"1", "integer:1"},
              {"-1", "integer:-1"},
              {"9223372036854775807", "integer:9223372036854775807"},
              {"-9223372036854775808", "integer:-9223372036854775808"},
              {"null", "null"},
              {"'42'", "integer:42"}});
}

void crud_real(Env& env) {
  round_trip(env, "real null",
             {{"0.0", "real:0"},
              {"1.5", "real:1.5"},
              {"-2.25", "real:-2.25"},
              {"1e308", "real:1e+308"},
              {"-0.0", "real:-0"},
              {"9e999", "real:inf"},
              {"-9e999", "real:-inf"},
              {"3", "real:3"},
              {"null", "null"}});
}

void crud_text(Env& env) {
  round_trip(env, "text null",
             {{"''", "text:"},
              {"'hello'", "text:hello"},
              {"'h\xC3\xA9llo \xE2\x80\x93 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x8E\x89'",
               "text:h\xC3\xA9llo \xE2\x80\x93 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x8E\x89"},
              {"'it''s'", "text:it's"},
              {"'a' || char(0) || 'b'", "text:a\\0b"},
              {"12", "text:12"}});
}

void crud_blob(Env& env) {
  round_trip(env, "blob null",
             {{"x''", "blob:x''"}, {"x'00ff00'", "blob:x'00FF00'"}, {"x'00'", "blob:x'00'"}, {"null", "null"}});
}

void crud_boolean_json(Env& env) {
  round_trip(env, "boolean null", {{"true", "boolean:true"}, {"false", "boolean:false"}, {"null", "null"}});
  env.exec("drop table t");
  round_trip(env, "json null",
             {{"'{\"a\":[1,2,{\"b\":null}]}'", "json:{\"a\":[1,2,{\"b\":null}]}"},
              {"'[]'", "json:[]"},
              {"'\"x\"'", "json:\"x\""},
              {"'12.5'", "json:12.5"},
              {"null", "null"}});
  env.expect("select json_extract(v, '$.a[1]') from t where k = 0", {"2"});
}

// The engine's other types (docs/sql-dialect.md): whatever canonical cell the write path
// produced (RETURNING) is what the module hands back, by key and by scan.
void crud_other_types(Env& env) {
  env.exec("create table t (k integer primary key, n numeric null, d date null, tm time null, "
           "dt datetime null, ts timespan null, a any null)");
  const char* rows[] = {"(1, 12, '2024-02-29', '13:45:10', '2024-02-29T13:45:10', 'PT1H30M', 7)",
                        "(2, 1.25, null, null, null, null, 'text')",
                        "(3, '17', null, null, null, null, x'01')",
                        "(4, null, null, null, null, null, 2.5)",
                        "(5, null, null, null, null, null, true)",
                        "(6, null, null, null, null, null, null)"};
  std::vector<std::string> written;
  for (const char* r : rows)
    for (const Row& row : env.query_rows(std::string("insert into t values ") + r + " returning *")) written.push_back(tagged_row(row));
  if (written.size() != 6) fail("6 inserts with RETURNING returned " + std::to_string(written.size()) + " rows");
  if (written[0].find("null") != std::string::npos) fail("row 1 was written with a NULL cell: " + written[0]);
  std::vector<std::string> scanned;
  for (const Row& row : env.query_rows("select * from t order by k")) scanned.push_back(tagged_row(row));
  if (scanned != written) fail("rows as written " + render_rows(written) + ", read back " + render_rows(scanned));
  std::vector<Row> one = env.query_rows("select * from t where k = 1");
  if (one.size() != 1 || tagged_row(one[0]) != written[0]) fail("row 1 read by key differs from the row written");
}

void crud_update_delete(Env& env) {
  env.exec("create table t (k integer primary key, v text null, n integer null)");
  env.exec("insert into t values (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)");
  env.exec("update t set v = 'B', n = null where k = 2");
  env.expect("select k, v, typeof(n) from t order by k", {"1|a|integer", "2|B|null", "3|c|integer"});
  env.exec("update t set n = n + 1");
  env.expect("select k, n from t order by k", {"1|11", "2|NULL", "3|31"});
  env.exec("delete from t where k = 1");
  env.expect("select k from t order by k", {"2", "3"});
  // Missing keys change nothing.
  env.expect_affected("update t set v = 'zz' where k = 99", 0);
  env.expect_affected("delete from t where k = 99", 0);
  env.exec("delete from t");
  env.expect("select count(*) from t", {"0"});
}

void crud_vt_write_results(Env& env) {
  env.exec("create table t (k integer primary key, v text)");
  auto t = env.vtab("t");
  Row row{Value::Integer(5), Value::Text("five")};
  UpdateResult r = vt_write(*t, RowOp::kInsert, row, {}, ConflictAction::kAbort);
  if (r.outcome != UpdateResult::Outcome::kOk) fail("insert through the adapter: outcome is not OK");
  if (r.row && render_row(*r.row) != "5|five") fail("insert: the returned row " + render_row(*r.row) + " is not the row stored (5|five)");
  env.expect("select k, v from t", {"5|five"});
  Row key{Value::Integer(5)};
  Row upd{Value::Integer(5), Value::Text("FIVE")};
  r = vt_write(*t, RowOp::kUpdate, upd, key, ConflictAction::kAbort);
  if (r.outcome != UpdateResult::Outcome::kOk) fail("update through the adapter: outcome is not OK");
  env.expect("select k, v from t", {"5|FIVE"});
  Row missing{Value::Integer(6)};
  r = vt_write(*t, RowOp::kUpdate, Row{Value::Integer(6), Value::Text("x")}, missing, ConflictAction::kAbort);
  if (r.outcome != UpdateResult::Outcome::kNoop) fail("update of a missing key: expected NOOP");
  r = vt_write(*t, RowOp::kDelete, {}, missing, ConflictAction::kAbort);
  if (r.outcome != UpdateResult::Outcome::kNoop) fail("delete of a missing key: expected NOOP");
  r = vt_write(*t, RowOp::kDelete, {}, key, ConflictAction::kAbort);
  if (r.outcome != UpdateResult::Outcome::kOk) fail("delete of an existing key: expected OK");
  if (!r.row) fail("delete of an existing key: no row returned (a real write must return its row)");
  env.expect("select count(*) from t", {"0"});
}

// ---------------------------------------------------------------- 3 keys

void vt_duplicate_pk(Env& env) {
  env.exec("create table t (k integer primary key, v text)");
  env.exec("insert into t values (1, 'one')");
  auto t = env.vtab("t");
  Row dup{Value::Integer(1), Value::Text("uno")};
  UpdateResult r = vt_write(*t, RowOp::kInsert, dup, {}, ConflictAction::kAbort);
  if (r.outcome != UpdateResult::Outcome::kConstraint)
    fail("inserting an existing key through the adapter: expected a CONSTRAINT result, got " +
         std::string(r.outcome == UpdateResult::Outcome::kOk ? "OK" : "NOOP"));
  if (r.constraint_kind != QRS_CONSTRAINT_UNIQUE) fail("duplicate key: constraint kind is not UNIQUE");
  if (!r.existing_row) fail("duplicate key: the result carries no existing row");
  expect_eq("duplicate key: existing row", "1|one", render_row(*r.existing_row));
  env.expect("select k, v from t", {"1|one"});
}

void vt_ignore_and_replace(Env& env) {
  env.exec("create table t (k integer primary key, v text)");
  env.exec("insert into t values (1, 'one')");
  auto t = env.vtab("t");
  Row dup{Value::Integer(1), Value::Text("uno")};
  UpdateResult r = vt_write(*t, RowOp::kInsert, dup, {}, ConflictAction::kIgnore);
  if (r.outcome == UpdateResult::Outcome::kOk) fail("insert OR IGNORE of an existing key: reported OK (a write)");
  env.expect("select k, v from t", {"1|one"});
  r = vt_write(*t, RowOp::kInsert, dup, {}, ConflictAction::kReplace);
  if (r.outcome != UpdateResult::Outcome::kOk) fail("insert OR REPLACE of an existing key: expected OK");
  if (!r.replaced_row) fail("insert OR REPLACE: the displaced row is not reported (replaced_row)");
  expect_eq("insert OR REPLACE: replaced_row", "1|one", render_row(*r.replaced_row));
  env.expect("select k, v from t", {"1|uno"});
}

void sql_duplicate_pk(Env& env) {
  env.exec("create table t (k integer primary key, v text)");
  env.exec("insert into t values (1, 'a'), (2, 'b')");
  env.fails("insert into t values (2, 'x')", StatusCode::kConstraint);
  env.fails("update t set k = 1 where k = 2", StatusCode::kConstraint);
  env.expect("select k, v from t order by k", {"1|a", "2|b"});
  env.exec("update t set k = 3 where k = 2");
  env.expect("select k, v from t order by k", {"1|a", "3|b"});
}

void ignore_replace_changes(Env& env) {
  env.exec("create table t (k integer primary key, v text)");
  env.exec("insert into t values (1, 'a'), (2, 'b')");
  env.expect_affected("insert or ignore into t values (2, 'x'), (3, 'c')", 1);
  env.expect("select k, v from t order by k", {"1|a", "2|b", "3|c"});
  env.expect_affected("insert or replace into t values (1, 'A'), (4, 'd')", 2);
  env.expect("select k, v from t order by k", {"1|A", "2|b", "3|c", "4|d"});
}

void composite_and_desc_keys(Env& env) {
  env.exec("create table t (a integer, b text, v integer, primary key (a, b desc))");
  env.exec("insert into t values (1, 'x', 1), (1, 'y', 2), (2, 'x', 3), (1, 'z', 4)");
  env.fails("insert into t values (1, 'y', 9)", StatusCode::kConstraint);
  env.exec("insert into t values (2, 'y', 5)");
  env.expect("select a, b, v from t order by a, b desc", {"1|z|4", "1|y|2", "1|x|1", "2|y|5", "2|x|3"});
  env.expect("select a, b, v from t order by a desc, b", {"2|x|3", "2|y|5", "1|x|1", "1|y|2", "1|z|4"});
  env.expect("select v from t where a = 1 and b = 'y'", {"2"});
  env.exec("create table d (k integer primary key desc, v text)");
  env.exec("insert into d values (2, 'b'), (3, 'c'), (1, 'a')");
  env.fails("insert into d values (3, 'x')", StatusCode::kConstraint);
  env.expect("select k from d order by k desc", {"3", "2", "1"});
  env.expect("select k from d order by k", {"1", "2", "3"});
  env.expect("select k from d where k >= 2 order by k desc", {"3", "2"});
}

void nocase_key_collision(Env& env) {
  env.exec("create table t (k text collate nocase primary key, v integer)");
  env.exec("insert into t values ('abc', 1)");
  env.fails("insert into t values ('ABC', 2)", StatusCode::kConstraint);
  env.expect("select v from t where k = 'aBc'", {"1"});
  env.exec("insert or replace into t values ('ABC', 3)");
  env.expect("select k, v from t", {"ABC|3"});
  env.exec("create table r (k text collate rtrim primary key, v integer)");
  env.exec("insert into r values ('a', 1)");
  env.fails("insert into r values ('a  ', 2)", StatusCode::kConstraint);
  env.expect("select v from r where k = 'a '", {"1"});
}

void unique_constraint(Env& env) {
  env.exec("create table t (k integer primary key, u text null unique, v integer)");
  env.exec("insert into t values (1, 'a', 10), (2, 'b', 20), (3, null, 30), (4, null, 40)");
  env.fails("insert into t values (5, 'a', 50)", StatusCode::kConstraint);
  env.fails("update t set u = 'b' where k = 1", StatusCode::kConstraint);
  env.expect("select k, u from t order by k", {"1|a", "2|b", "3|NULL", "4|NULL"});
  env.expect_affected("insert or ignore into t values (5, 'a', 50)", 0);
  // REPLACE on the UNIQUE column evicts the other row.
  env.exec("insert or replace into t values (6, 'b', 60)");
  env.expect("select k, u, v from t order by k", {"1|a|10", "3|NULL|30", "4|NULL|40", "6|b|60"});
  env.expect("select k from t where u = 'b'", {"6"});
  env.exec("delete from t where k = 6");
  env.exec("insert into t values (7, 'b', 70)");
  env.expect("select k from t where u = 'b'", {"7"});
}

}  // namespace

void add_load_tests(TestList& out) {
  out.push_back({1, "manifest_fields", manifest_fields});
  out.push_back({1, "module_registered", module_registered});
  out.push_back({1, "abi_major_mismatch_refused", abi_major_mismatch_refused});
  out.push_back({1, "create_insert_drop", create_insert_drop});
}

void add_crud_tests(TestList& out) {
  out.push_back({2, "integer", crud_integer});
  out.push_back({2, "real", crud_real});
  out.push_back({2, "text", crud_text});
  out.push_back({2, "blob", crud_blob});
  out.push_back({2, "boolean_json", crud_boolean_json});
  out.push_back({2, "numeric_temporal_any", crud_other_types});
  out.push_back({2, "update_delete", crud_update_delete});
  out.push_back({2, "vt_write_results", crud_vt_write_results});
}

void add_key_tests(TestList& out) {
  out.push_back({3, "vt_duplicate_pk_constraint", vt_duplicate_pk});
  out.push_back({3, "vt_ignore_replace", vt_ignore_and_replace});
  out.push_back({3, "duplicate_pk", sql_duplicate_pk});
  out.push_back({3, "ignore_replace_changes", ignore_replace_changes});
  out.push_back({3, "composite_desc_keys", composite_and_desc_keys});
  out.push_back({3, "nocase_rtrim_keys", nocase_key_collision});
  out.push_back({3, "unique", unique_constraint});
}

}  // namespace quereus::conformance::detail
