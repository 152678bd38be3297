// The round-trip laws of view updateability as property checks (issue 17 point
// 5; reference vu-roundtrip.md "The three round-trip laws", invariants VU-003 /
// VU-004 / VU-005 / VU-008), over the mem plugin through the public API:
//   - PutGet: a generated INSERT / UPDATE / DELETE through a view lands exactly
//   where an
//     independent C++ model of the view says (base tables diffed before/after),
//     the view reads back the written values, no base row outside the view's
//     image changes, and a write to a computed column is refused leaving the
//     base unchanged;
//   - GetPut: a row read through the view and written back keyed on the view's
//   key leaves
//     the base unchanged;
//   - lineage agreement: column_info() matches the model and the dynamic
//   behaviour (a YES
//     column's UPDATE changes exactly its base_table.base_column, a NO column
//     is refused);
//   - LIMIT / OFFSET / DISTINCT bodies refuse every write (never widen);
//   - a negative self-test proving the checker reds on an injected violation.
// Data and mutations come from std::mt19937 with fixed seeds, printed in every
// failure. Where the engine's semantics are its own (docs/view-updates.md: an
// invertible `b + 1` column is updatable but not insertable; an UPDATE may move
// a row out of the view), the model follows them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "main/database.h"
#include "plugin/plugin_loader.h"

namespace quereus {
namespace {

// ---------------------------------------------------------------------------------------
// Values, tables, worlds.

struct Cell {
  enum Tag { kNull, kInt, kText } tag = kNull;
  int64_t i = 0;
  std::string s;

  static Cell Null() { return {}; }
  static Cell Int(int64_t v) {
    Cell c;
    c.tag = kInt;
    c.i = v;
    return c;
  }
  static Cell Text(std::string v) {
    Cell c;
    c.tag = kText;
    c.s = std::move(v);
    return c;
  }
  static Cell From(const Value &v) {
    if (v.is_null())
      return Null();
    if (v.is_integer())
      return Int(v.as_int());
    if (v.type() == ValueType::kText)
      return Text(v.str());
    return Text("<" + std::string(value_type_name(v.type())) + ">" +
                v.to_text());
  }
  bool is_null() const { return tag == kNull; }
  // An SQL literal for the value.
  std::string sql() const {
    if (tag == kNull)
      return "null";
    if (tag == kInt)
      return std::to_string(i);
    std::string out = "'";
    for (char ch : s)
      out += ch == '\'' ? std::string("''") : std::string(1, ch);
    return out + "'";
  }
  bool operator==(const Cell &o) const {
    return tag == o.tag && i == o.i && s == o.s;
  }
  bool operator!=(const Cell &o) const { return !(*this == o); }
};

using BaseRow = std::vector<Cell>;
std::string render(const BaseRow &row) {
  std::string out = "(";
  for (size_t i = 0; i < row.size(); ++i)
    out += (i ? ", " : "") + row[i].sql();
  return out + ")";
}

struct TableDef {
  std::string name;
  std::vector<std::string> columns;
  std::vector<size_t> pk;
  std::string ddl;
  size_t index(const std::string &column) const {
    auto it = std::find(columns.begin(), columns.end(), column);
    return it == columns.end() ? SIZE_MAX
                               : static_cast<size_t>(it - columns.begin());
  }
  std::string key_of(const BaseRow &row) const {
    std::string k;
    for (size_t i : pk)
      k += (k.empty() ? "" : ",") + row[i].sql();
    return k;
  }
};

const std::vector<TableDef> &tables() {
  static const std::vector<TableDef> defs = {
      {"t",
       {"id", "k", "b", "s", "w"},
       {0},
       "create table t (id integer primary key, k integer null, b integer "
       "null, s text null, w text null)"},
      {"p",
       {"pid", "pname", "pv"},
       {0},
       "create table p (pid integer primary key, pname text null, pv integer "
       "null)"},
      {"c",
       {"cid", "pid", "cv", "cn"},
       {0},
       "create table c (cid integer primary key, pid integer null references "
       "p(pid), cv integer null, cn text null)"},
      {"cp",
       {"a", "b", "x"},
       {0, 1},
       "create table cp (a integer, b integer, x integer null, primary key (a, "
       "b))"},
      {"cc",
       {"id", "a", "b", "y"},
       {0},
       "create table cc (id integer primary key, a integer, b integer, y "
       "integer null, "
       "foreign key (a, b) references cp(a, b))"},
  };
  return defs;
}
const TableDef &table(const std::string &name) {
  for (const TableDef &t : tables())
    if (t.name == name)
      return t;
  ADD_FAILURE() << "no table " << name;
  return tables()[0];
}

using Table = std::map<std::string, BaseRow>; // primary key → row
using World = std::map<std::string, Table>;   // table name → rows

// Every difference between two worlds, one line each; empty when they agree.
std::vector<std::string> diff_worlds(const World &want, const World &got) {
  std::vector<std::string> out;
  std::set<std::string> names;
  for (auto &[n, _] : want)
    names.insert(n);
  for (auto &[n, _] : got)
    names.insert(n);
  static const Table kEmpty;
  for (const std::string &n : names) {
    const Table &a = want.count(n) ? want.at(n) : kEmpty;
    const Table &b = got.count(n) ? got.at(n) : kEmpty;
    for (auto &[k, row] : a) {
      auto it = b.find(k);
      if (it == b.end())
        out.push_back(n + "[" + k + "]: expected " + render(row) + ", missing");
      else if (it->second != row)
        out.push_back(n + "[" + k + "]: expected " + render(row) + ", got " +
                      render(it->second));
    }
    for (auto &[k, row] : b)
      if (!a.count(k))
        out.push_back(n + "[" + k + "]: unexpected " + render(row));
  }
  return out;
}
// The (table, key) pairs whose row differs between two worlds.
std::set<std::pair<std::string, std::string>> changed_rows(const World &before,
                                                           const World &after) {
  std::set<std::pair<std::string, std::string>> out;
  for (auto &[n, rows] : before)
    for (auto &[k, row] : rows) {
      auto t = after.find(n);
      if (t == after.end() || !t->second.count(k) || t->second.at(k) != row)
        out.insert({n, k});
    }
  for (auto &[n, rows] : after)
    for (auto &[k, _] : rows) {
      auto t = before.find(n);
      if (t == before.end() || !t->second.count(k))
        out.insert({n, k});
    }
  return out;
}

// ---------------------------------------------------------------------------------------
// The view model: each column's site, the body's sources, join equalities and
// predicate.

enum class Site { kBase, kInverse, kPassthrough, kComputed };

using CellFn = std::function<Cell(const Cell &)>;
using Rng = std::mt19937;
using Gen = std::function<Cell(Rng &, const World &)>;

struct ColSpec {
  std::string name;
  Site site;
  std::string table,
      column; // where the value comes from (a computed column too)
  CellFn fwd; // base value → view value
  CellFn inv; // view value → base value (kBase / kInverse / kPassthrough)
  bool text = false;
  bool fixed = false; // not written by random UPDATEs (join keys: FK validity)
  bool updatable() const { return site != Site::kComputed; }
  bool insertable() const {
    return site == Site::kBase || site == Site::kPassthrough;
  }
};

Cell identity(const Cell &c) { return c; }
CellFn add(int64_t k) {
  return [k](const Cell &c) { return c.is_null() ? c : Cell::Int(c.i + k); };
}
CellFn sub_from(int64_t k) {
  return [k](const Cell &c) { return c.is_null() ? c : Cell::Int(k - c.i); };
}
Cell lower(const Cell &c) {
  if (c.is_null())
    return c;
  std::string s = c.s;
  for (char &ch : s)
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return Cell::Text(s);
}

ColSpec base(std::string name, std::string tbl, std::string col,
             bool text = false) {
  return {
      std::move(name), Site::kBase, std::move(tbl), std::move(col), identity,
      identity,        text};
}
ColSpec inverse(std::string name, std::string tbl, std::string col, CellFn fwd,
                CellFn inv) {
  return {std::move(name), Site::kInverse, std::move(tbl), std::move(col),
          std::move(fwd),  std::move(inv), false};
}
ColSpec passthrough(std::string name, std::string tbl, std::string col) {
  return {std::move(name),
          Site::kPassthrough,
          std::move(tbl),
          std::move(col),
          identity,
          identity,
          true};
}
ColSpec computed(std::string name, std::string tbl, std::string col, CellFn fwd,
                 bool text) {
  return {std::move(name),
          Site::kComputed,
          std::move(tbl),
          std::move(col),
          std::move(fwd),
          nullptr,
          text};
}
ColSpec fixed(ColSpec c) {
  c.fixed = true;
  return c;
}

// One combination of source rows (table → row).
using Joined = std::map<std::string, const BaseRow *>;

struct ViewRow {
  BaseRow cells;
  std::map<std::string, std::string>
      src; // table → primary key of the source row
};

struct ViewSpec {
  std::string name;
  std::string body;
  std::vector<std::string> sources; // base tables of FROM (one or two)
  std::vector<std::pair<std::string, std::string>>
      join_eq;                              // "tbl.col" = "tbl.col"
  std::function<bool(const Joined &)> pred; // the WHERE (null: none)
  std::vector<ColSpec> cols;
  std::string key; // the view column that identifies a view row
  std::vector<std::string> delete_tables; // where a DELETE lands
  std::vector<std::pair<std::string, Cell>>
      pinned;        // "tbl.col" an INSERT fills with a constant
  std::string child; // join: the FK child side
  std::map<std::string, Gen> insert_gen;    // INSERT values for these columns
  std::vector<std::string> insert_required; // always supplied by an INSERT
  std::map<std::string, Gen>
      write_gen; // lineage-probe values for these columns
  std::function<bool(const std::map<std::string, Cell> &)>
      insert_contradicts; // literal vs pinned

  const ColSpec &col(const std::string &n) const {
    for (const ColSpec &c : cols)
      if (c.name == n)
        return c;
    ADD_FAILURE() << "no column " << n << " in " << name;
    return cols[0];
  }
  size_t col_index(const std::string &n) const {
    for (size_t i = 0; i < cols.size(); ++i)
      if (cols[i].name == n)
        return i;
    return SIZE_MAX;
  }
};

// A view spec from its shape; the INSERT / lineage hooks are filled in by the
// caller.
ViewSpec make_view(std::string name, std::string body,
                   std::vector<std::string> sources,
                   std::vector<std::pair<std::string, std::string>> join_eq,
                   std::function<bool(const Joined &)> pred,
                   std::vector<ColSpec> cols, std::string key,
                   std::vector<std::string> delete_tables) {
  ViewSpec v;
  v.name = std::move(name);
  v.body = std::move(body);
  v.sources = std::move(sources);
  v.join_eq = std::move(join_eq);
  v.pred = std::move(pred);
  v.cols = std::move(cols);
  v.key = std::move(key);
  v.delete_tables = std::move(delete_tables);
  return v;
}

Cell field(const Joined &j, const std::string &tbl, const std::string &col) {
  return (*j.at(tbl))[table(tbl).index(col)];
}
std::pair<std::string, std::string> split(const std::string &qualified) {
  size_t dot = qualified.find('.');
  return {qualified.substr(0, dot), qualified.substr(dot + 1)};
}

// The view's image over `w`, computed from the model alone (no engine
// involved).
std::vector<ViewRow> image(const ViewSpec &v, const World &w) {
  std::vector<ViewRow> out;
  std::vector<Joined> combos{{}};
  for (const std::string &src : v.sources) {
    std::vector<Joined> next;
    for (const Joined &j : combos)
      for (auto &[_, row] : w.at(src)) {
        Joined n = j;
        n[src] = &row;
        next.push_back(std::move(n));
      }
    combos = std::move(next);
  }
  for (const Joined &j : combos) {
    bool ok = true;
    for (auto &[l, r] : v.join_eq) {
      auto [lt, lc] = split(l);
      auto [rt, rc] = split(r);
      Cell a = field(j, lt, lc), b = field(j, rt, rc);
      if (a.is_null() || b.is_null() || a != b)
        ok = false;
    }
    if (!ok || (v.pred && !v.pred(j)))
      continue;
    ViewRow row;
    for (const ColSpec &c : v.cols)
      row.cells.push_back(c.fwd(field(j, c.table, c.column)));
    for (const std::string &src : v.sources)
      row.src[src] = table(src).key_of(*j.at(src));
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<std::string> sorted_rendered(const std::vector<BaseRow> &rows) {
  std::vector<std::string> out;
  for (const BaseRow &r : rows)
    out.push_back(render(r));
  std::sort(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------------------------------
// The law core: pure functions over worlds and reads, each returning the
// violations found.

// PutGet, base side and read side: the base tables are what the model predicts,
// and the view reads exactly the model's image of them.
std::vector<std::string>
put_get_violations(const ViewSpec &v, const World &expected,
                   const World &actual, const std::vector<BaseRow> &view_read) {
  std::vector<std::string> out = diff_worlds(expected, actual);
  std::vector<BaseRow> want;
  for (const ViewRow &r : image(v, expected))
    want.push_back(r.cells);
  auto a = sorted_rendered(want), b = sorted_rendered(view_read);
  if (a != b) {
    std::string msg = "view read differs from the model image:\n  want:";
    for (auto &s : a)
      msg += " " + s;
    msg += "\n  got: ";
    for (auto &s : b)
      msg += " " + s;
    out.push_back(msg);
  }
  return out;
}

// The predicate window: every base row that changed is one the view exposed
// (before or, for an INSERT, after the write).
std::vector<std::string> window_violations(
    const World &before, const World &after,
    const std::set<std::pair<std::string, std::string>> &allowed) {
  std::vector<std::string> out;
  for (auto &row : changed_rows(before, after))
    if (!allowed.count(row))
      out.push_back(row.first + "[" + row.second +
                    "] changed outside the view's image");
  return out;
}

// ---------------------------------------------------------------------------------------
// The view zoo.

Cell pick_text(Rng &rng) {
  static const char *kPool[] = {"Ab", "cD", "ef", "GH", "Mx", "zz", "Qr"};
  if (rng() % 10 == 0)
    return Cell::Null();
  return Cell::Text(kPool[rng() % 7]);
}
Cell pick_int(Rng &rng) {
  if (rng() % 10 == 0)
    return Cell::Null();
  return Cell::Int(static_cast<int64_t>(rng() % 36) - 5);
}
// An unused primary-key value of `tbl.col` (single-column keys).
Cell fresh_key(Rng &rng, const World &w, const std::string &tbl,
               const std::string &col) {
  int64_t max = 0;
  size_t i = table(tbl).index(col);
  for (auto &[_, row] : w.at(tbl))
    if (!row[i].is_null())
      max = std::max(max, row[i].i);
  return Cell::Int(max + 1 + static_cast<int64_t>(rng() % 3));
}
Gen fresh(std::string tbl, std::string col) {
  return [tbl, col](Rng &rng, const World &w) {
    return fresh_key(rng, w, tbl, col);
  };
}
// An existing value of `tbl.col`.
Gen existing(std::string tbl, std::string col) {
  return [tbl, col](Rng &rng, const World &w) {
    const Table &rows = w.at(tbl);
    auto it = rows.begin();
    std::advance(it, rng() % rows.size());
    return it->second[table(tbl).index(col)];
  };
}

bool int_is(const Cell &c, int64_t v) {
  return c.tag == Cell::kInt && c.i == v;
}

std::vector<ViewSpec> writable_views() {
  std::vector<ViewSpec> vs;
  const std::vector<std::string> t = {"t"};
  vs.push_back(make_view("vr_star", "select * from t", t, {}, nullptr,
                         {base("id", "t", "id"), base("k", "t", "k"),
                          base("b", "t", "b"), base("s", "t", "s", true),
                          base("w", "t", "w", true)},
                         "id", t));
  vs.push_back(make_view(
      "vr_proj", "select id, b, s from t", t, {}, nullptr,
      {base("id", "t", "id"), base("b", "t", "b"), base("s", "t", "s", true)},
      "id", t));
  vs.push_back(make_view(
      "vr_ren", "select id as ident, b as bee, s as ess, k as kay from t", t,
      {}, nullptr,
      {base("ident", "t", "id"), base("bee", "t", "b"),
       base("ess", "t", "s", true), base("kay", "t", "k")},
      "ident", t));
  vs.push_back(make_view("vr_inv",
                         "select id, b + 1 as bp, -b as nb, 10 - b as tb, s "
                         "collate nocase as sc, k from t",
                         t, {}, nullptr,
                         {base("id", "t", "id"),
                          inverse("bp", "t", "b", add(1), add(-1)),
                          inverse("nb", "t", "b", sub_from(0), sub_from(0)),
                          inverse("tb", "t", "b", sub_from(10), sub_from(10)),
                          passthrough("sc", "t", "s"), base("k", "t", "k")},
                         "id", t));
  vs.push_back(make_view(
      "vr_comp", "select id, lower(s) as ls, b, s from t", t, {}, nullptr,
      {base("id", "t", "id"), computed("ls", "t", "s", lower, true),
       base("b", "t", "b"), base("s", "t", "s", true)},
      "id", t));
  {
    ViewSpec v = make_view(
        "vr_eq", "select id, k, b, s from t where k = 3", t, {},
        [](const Joined &j) { return int_is(field(j, "t", "k"), 3); },
        {base("id", "t", "id"), base("k", "t", "k"), base("b", "t", "b"),
         base("s", "t", "s", true)},
        "id", t);
    v.pinned = {{"t.k", Cell::Int(3)}};
    v.insert_gen["k"] = [](Rng &rng, const World &) {
      return rng() % 3 ? Cell::Int(3) : Cell::Int(4);
    };
    v.insert_contradicts = [](const std::map<std::string, Cell> &row) {
      return row.count("k") && !int_is(row.at("k"), 3);
    };
    vs.push_back(std::move(v));
  }
  {
    ViewSpec v = make_view(
        "vr_rng", "select id, b, w from t where b >= 10 and b < 20", t, {},
        [](const Joined &j) {
          Cell b = field(j, "t", "b");
          return b.tag == Cell::kInt && b.i >= 10 && b.i < 20;
        },
        {base("id", "t", "id"), base("b", "t", "b"), base("w", "t", "w", true)},
        "id", t);
    // Only in-range inserts: an out-of-range literal is inserted outside the
    // window (reported as a discrepancy, not asserted).
    v.insert_gen["b"] = [](Rng &rng, const World &) {
      return Cell::Int(10 + static_cast<int64_t>(rng() % 10));
    };
    v.insert_required = {"b"};
    vs.push_back(std::move(v));
  }
  {
    ViewSpec v = make_view(
        "vr_alias", "select x.id, x.b as bb, x.s from t x where x.k = 2", t, {},
        [](const Joined &j) { return int_is(field(j, "t", "k"), 2); },
        {base("id", "t", "id"), base("bb", "t", "b"),
         base("s", "t", "s", true)},
        "id", t);
    v.pinned = {{"t.k", Cell::Int(2)}};
    vs.push_back(std::move(v));
  }
  {
    ViewSpec v =
        make_view("vr_join",
                  "select c.cid, c.pid, c.cv, c.cn, p.pname, p.pv from c join "
                  "p on c.pid = p.pid",
                  {"c", "p"}, {{"c.pid", "p.pid"}}, nullptr,
                  {base("cid", "c", "cid"), fixed(base("pid", "c", "pid")),
                   base("cv", "c", "cv"), base("cn", "c", "cn", true),
                   base("pname", "p", "pname", true), base("pv", "p", "pv")},
                  "cid", {"c"});
    v.child = "c";
    v.insert_gen["pid"] = fresh("p", "pid");
    v.insert_required = {"pid"};
    v.write_gen["pid"] = existing("p", "pid");
    vs.push_back(std::move(v));
  }
  {
    ViewSpec v =
        make_view("vr_cjoin",
                  "select cc.id, cc.a, cc.b, cc.y, cp.x from cc join cp on "
                  "cc.a = cp.a and cc.b = cp.b",
                  {"cc", "cp"}, {{"cc.a", "cp.a"}, {"cc.b", "cp.b"}}, nullptr,
                  {base("id", "cc", "id"), fixed(base("a", "cc", "a")),
                   fixed(base("b", "cc", "b")), base("y", "cc", "y"),
                   base("x", "cp", "x")},
                  "id", {"cc"});
    v.child = "cc";
    // A fresh composite key: `a` beyond every cp row, `b` anything.
    v.insert_gen["a"] = fresh("cp", "a");
    v.insert_gen["b"] = [](Rng &rng, const World &) {
      return Cell::Int(1 + static_cast<int64_t>(rng() % 3));
    };
    v.insert_required = {"a", "b"};
    // cp is seeded as the full 1..3 × 1..3 grid, so any a / b in 1..3 keeps the
    // FK.
    Gen in_grid = [](Rng &rng, const World &) {
      return Cell::Int(1 + static_cast<int64_t>(rng() % 3));
    };
    v.write_gen["a"] = in_grid;
    v.write_gen["b"] = in_grid;
    vs.push_back(std::move(v));
  }
  // The key column of every view is a fresh id for INSERT.
  for (ViewSpec &v : vs) {
    const ColSpec &k = v.col(v.key);
    v.insert_gen[v.key] = fresh(k.table, k.column);
    v.insert_required.push_back(v.key);
    v.write_gen.emplace(v.key, fresh(k.table, k.column));
  }
  return vs;
}

struct RefusingView {
  std::string name, body, text;
};
const std::vector<RefusingView> &refusing_views() {
  static const std::vector<RefusingView> vs = {
      {"vr_limit", "select id, b from t order by id limit 3",
       "LIMIT/OFFSET body"},
      {"vr_offset", "select id, b from t order by id limit 100 offset 2",
       "LIMIT/OFFSET body"},
      {"vr_offset_only", "select id, b from t limit -1 offset 1",
       "LIMIT/OFFSET body"},
      {"vr_distinct", "select distinct id, b from t", "DISTINCT body"},
      {"vr_distinct_k", "select distinct k from t", "DISTINCT body"},
  };
  return vs;
}

// ---------------------------------------------------------------------------------------
// The fixture: one database per seed over the mem plugin.

class ViewRoundTripTest : public ::testing::Test {
protected:
  void SetUp() override {
    registry_ = std::make_shared<Registry>();
    PluginLoader loader(registry_, {QUEREUS_PLUGIN_DIR});
    PluginSpec spec;
    spec.path = "mem";
    ASSERT_TRUE(loader.load(spec).ok());
  }

  // A fresh database with random base rows from `rng` and the whole zoo of
  // views.
  void open(Rng &rng) {
    db_.reset();
    ASSERT_TRUE(Database::Open(registry_, {}, &db_).ok());
    for (const TableDef &t : tables())
      must(t.ddl);
    std::string sql;
    for (int id = 1; id <= 14; ++id) {
      if (rng() % 3 == 0)
        continue;
      Cell k = rng() % 10 == 0 ? Cell::Null()
                               : Cell::Int(1 + static_cast<int64_t>(rng() % 4));
      sql += "insert into t values (" + std::to_string(id) + ", " + k.sql() +
             ", " + pick_int(rng).sql() + ", " + pick_text(rng).sql() + ", " +
             pick_text(rng).sql() + ");";
    }
    // Rows every filtered view shows.
    for (int id = 15; id <= 18; ++id)
      sql += "insert into t values (" + std::to_string(id) + ", " +
             std::to_string(id % 2 ? 3 : 2) + ", " +
             std::to_string(10 + rng() % 10) + ", " + pick_text(rng).sql() +
             ", " + pick_text(rng).sql() + ");";
    for (int pid = 1; pid <= 4; ++pid)
      sql += "insert into p values (" + std::to_string(pid) + ", " +
             pick_text(rng).sql() + ", " + pick_int(rng).sql() + ");";
    for (int cid = 1; cid <= 12; ++cid) {
      if (rng() % 3 == 0)
        continue;
      Cell pid = rng() % 6 == 0
                     ? Cell::Null()
                     : Cell::Int(1 + static_cast<int64_t>(rng() % 4));
      sql += "insert into c values (" + std::to_string(cid) + ", " + pid.sql() +
             ", " + pick_int(rng).sql() + ", " + pick_text(rng).sql() + ");";
    }
    for (int a = 1; a <= 3; ++a)
      for (int b = 1; b <= 3; ++b)
        sql += "insert into cp values (" + std::to_string(a) + ", " +
               std::to_string(b) + ", " + pick_int(rng).sql() + ");";
    for (int id = 1; id <= 10; ++id) {
      if (rng() % 3 == 0)
        continue;
      sql += "insert into cc values (" + std::to_string(id) + ", " +
             std::to_string(1 + rng() % 3) + ", " +
             std::to_string(1 + rng() % 3) + ", " + pick_int(rng).sql() + ");";
    }
    must(sql);
    for (const ViewSpec &v : views_)
      must("create view " + v.name + " as " + v.body);
    for (const RefusingView &v : refusing_views())
      must("create view " + v.name + " as " + v.body);
  }

  void must(const std::string &sql) {
    Status st = db_->exec(sql);
    ASSERT_TRUE(st.ok()) << sql << ": " << st.to_string();
  }
  // Runs `sql`, returning its status.
  Status run(const std::string &sql) { return db_->exec(sql); }

  // The rows of `sql` (one statement).
  std::vector<BaseRow> rows(const std::string &sql) {
    std::vector<std::unique_ptr<Statement>> stmts;
    Status st = db_->prepare(sql, &stmts);
    std::vector<BaseRow> out;
    EXPECT_TRUE(st.ok()) << sql << ": " << st.to_string();
    if (!st.ok() || stmts.empty())
      return out;
    bool has = true;
    while (true) {
      st = stmts[0]->step(&has);
      EXPECT_TRUE(st.ok()) << sql << ": " << st.to_string();
      if (!st.ok() || !has)
        break;
      BaseRow r;
      for (const Value &v : stmts[0]->row())
        r.push_back(Cell::From(v));
      out.push_back(std::move(r));
    }
    return out;
  }

  World snapshot() {
    World w;
    for (const TableDef &t : tables())
      w[t.name];
    for (const TableDef &t : tables())
      for (BaseRow &r : rows("select " + join(t.columns) + " from " + t.name))
        w[t.name][t.key_of(r)] = std::move(r);
    return w;
  }
  std::vector<BaseRow> read_view(const ViewSpec &v) {
    std::vector<std::string> names;
    for (const ColSpec &c : v.cols)
      names.push_back(c.name);
    return rows("select " + join(names) + " from " + v.name);
  }

  static std::string join(const std::vector<std::string> &parts) {
    std::string out;
    for (const std::string &p : parts)
      out += (out.empty() ? "" : ", ") + p;
    return out;
  }

  // A view key value: mostly one the view shows, sometimes any value of the
  // key's base column (a row the view may hide).
  Cell pick_key(Rng &rng, const ViewSpec &v, const World &w) {
    std::vector<ViewRow> img = image(v, w);
    size_t ki = v.col_index(v.key);
    if (!img.empty() && rng() % 4 != 0)
      return img[rng() % img.size()].cells[ki];
    const ColSpec &k = v.col(v.key);
    return existing(k.table, k.column)(rng, w);
  }
  static Cell gen_value(Rng &rng, const ColSpec &c) {
    return c.text ? pick_text(rng) : pick_int(rng);
  }

  // The base rows behind the view rows whose key is `key`.
  static std::set<std::pair<std::string, std::string>>
  sources_of(const ViewSpec &v, const World &w, const Cell &key) {
    std::set<std::pair<std::string, std::string>> out;
    size_t ki = v.col_index(v.key);
    for (const ViewRow &r : image(v, w))
      if (r.cells[ki] == key)
        for (auto &[tbl, pk] : r.src)
          out.insert({tbl, pk});
    return out;
  }

  std::vector<ViewSpec> views_ = writable_views();
  std::shared_ptr<Registry> registry_;
  std::unique_ptr<Database> db_;
};

std::string lines(const std::vector<std::string> &v) {
  std::string out;
  for (const std::string &s : v)
    out += "\n    " + s;
  return out;
}

bool refused_as(const Status &st, const std::vector<std::string> &any_of) {
  if (st.ok())
    return false;
  for (const std::string &s : any_of)
    if (st.message().find(s) != std::string::npos)
      return true;
  return false;
}

constexpr uint32_t kSeeds[] = {1,      7,     42,    99,      1234,
                               2024,   31337, 65521, 8675309, 424242,
                               5489,   12345, 27182, 314159,  777777,
                               999983, 4096,  16807, 48271,   2147483647};

// ---------------------------------------------------------------------------------------
// PutGet (VU-003).

TEST_F(ViewRoundTripTest, PutGetReflectsExactlyTheWriteAndNeverEscapesTheView) {
  int checked = 0;
  for (uint32_t seed : kSeeds) {
    Rng rng(seed);
    open(rng);
    if (HasFatalFailure())
      return;
    for (const ViewSpec &v : views_) {
      for (int step = 0; step < 14; ++step) {
        World before = snapshot();
        World expected = before;
        std::set<std::pair<std::string, std::string>> allowed;
        std::string sql;
        std::vector<std::string>
            refusal; // non-empty: the write must be refused
        std::vector<std::pair<size_t, Cell>>
            readback; // view column → value, read at `rb_key`
        Cell rb_key;
        int kind = static_cast<int>(rng() % 10);
        // Keep the key's table populated: a DELETE on a small table becomes an
        // INSERT.
        if (kind >= 7 && kind < 9 && before.at(v.col(v.key).table).size() < 6)
          kind = 5;
        if (kind < 5) {
          // UPDATE of writable columns, keyed on the view key.
          Cell key = pick_key(rng, v, before);
          std::vector<const ColSpec *> cand;
          for (const ColSpec &c : v.cols)
            if (c.updatable() && !c.fixed && c.name != v.key)
              cand.push_back(&c);
          std::shuffle(cand.begin(), cand.end(), rng);
          std::set<std::string> written; // base "tbl.col"
          std::string sets;
          std::vector<ViewRow> img = image(v, before);
          const ViewRow *addressed = nullptr;
          for (const ViewRow &r : img)
            if (r.cells[v.col_index(v.key)] == key)
              addressed = &r;
          size_t n = 1 + rng() % 3;
          for (const ColSpec *c : cand) {
            if (written.size() >= n ||
                !written.insert(c->table + "." + c->column).second)
              continue;
            // The value: a literal, or another view column of the same type
            // read from the row (same side, or the child reading its parent
            // through a join).
            const ColSpec *src = nullptr;
            if (rng() % 3 == 0)
              for (const ColSpec &o : v.cols)
                if (&o != c && o.text == c->text &&
                    (o.table == c->table || c->table == v.child) && rng() % 2)
                  src = &o;
            Cell value =
                src ? (addressed ? addressed->cells[v.col_index(src->name)]
                                 : Cell::Null())
                    : gen_value(rng, *c);
            sets += std::string(sets.empty() ? "" : ", ") + c->name + " = " +
                    (src ? src->name : value.sql());
            if (addressed) {
              expected[c->table][addressed->src.at(c->table)]
                      [table(c->table).index(c->column)] = c->inv(value);
              readback.push_back({v.col_index(c->name), value});
            }
          }
          sql = "update " + v.name + " set " + sets + " where " + v.key +
                " = " + key.sql();
          allowed = sources_of(v, before, key);
          rb_key = key;
        } else if (kind < 7) {
          // INSERT … VALUES of a fresh row (sometimes naming a column it cannot
          // take).
          std::map<std::string, Cell> supplied;
          std::vector<std::string> names;
          for (const std::string &r : v.insert_required) {
            supplied[r] = v.insert_gen.at(r)(rng, before);
            names.push_back(r);
          }
          for (const ColSpec &c : v.cols) {
            if (supplied.count(c.name) || rng() % 2)
              continue;
            // Never two view columns onto one base column.
            bool dup = false;
            for (auto &[n, _] : supplied)
              if (v.col(n).table == c.table && v.col(n).column == c.column)
                dup = true;
            if (dup || (!c.insertable() && rng() % 3 != 0))
              continue;
            supplied[c.name] = v.insert_gen.count(c.name)
                                   ? v.insert_gen.at(c.name)(rng, before)
                                   : gen_value(rng, c);
            names.push_back(c.name);
          }
          std::vector<std::string> lits;
          for (const std::string &n : names)
            lits.push_back(supplied[n].sql());
          sql = "insert into " + v.name + " (" + join(names) + ") values (" +
                join(lits) + ")";
          for (auto &[n, _] : supplied) {
            if (v.col(n).site == Site::kComputed)
              refusal = {"computed"};
            else if (v.col(n).site == Site::kInverse && refusal.empty())
              refusal = {"not insertable"};
          }
          if (refusal.empty() && v.insert_contradicts &&
              v.insert_contradicts(supplied))
            refusal = {"contradicts"};
          if (refusal.empty()) {
            std::map<std::string, BaseRow> fresh_rows;
            for (const std::string &src : v.sources)
              fresh_rows[src] = BaseRow(table(src).columns.size());
            for (auto &[n, val] : supplied) {
              const ColSpec &c = v.col(n);
              fresh_rows[c.table][table(c.table).index(c.column)] = c.inv(val);
            }
            for (auto &[qc, val] : v.pinned) {
              auto [tb, cl] = split(qc);
              Cell &cell = fresh_rows[tb][table(tb).index(cl)];
              if (cell.is_null())
                cell = val;
            }
            for (auto &[l, r] : v.join_eq) {
              auto [lt, lc] = split(l);
              auto [rt, rc] = split(r);
              Cell &a = fresh_rows[lt][table(lt).index(lc)];
              Cell &b = fresh_rows[rt][table(rt).index(rc)];
              if (a.is_null())
                a = b;
              if (b.is_null())
                b = a;
            }
            for (auto &[tb, row] : fresh_rows) {
              std::string pk = table(tb).key_of(row);
              expected[tb][pk] = row;
              allowed.insert({tb, pk});
            }
            rb_key = supplied[v.key];
            for (auto &[n, val] : supplied)
              readback.push_back({v.col_index(n), val});
          }
        } else if (kind < 9) {
          // DELETE by key.
          Cell key = pick_key(rng, v, before);
          sql = "delete from " + v.name + " where " + v.key + " = " + key.sql();
          allowed = sources_of(v, before, key);
          for (auto &[tb, pk] : allowed)
            if (std::find(v.delete_tables.begin(), v.delete_tables.end(), tb) !=
                v.delete_tables.end())
              expected[tb].erase(pk);
        } else {
          // A write to a computed column (or, when none, a column the view does
          // not have).
          const ColSpec *comp = nullptr;
          for (const ColSpec &c : v.cols)
            if (c.site == Site::kComputed)
              comp = &c;
          Cell key = pick_key(rng, v, before);
          const ColSpec *parent_col = nullptr; // join: a partner-side column
          const ColSpec *child_col = nullptr;
          for (const ColSpec &c : v.cols) {
            if (!v.child.empty() && c.table != v.child && !c.text)
              parent_col = &c;
            if (!v.child.empty() && c.table == v.child && !c.text && !c.fixed &&
                c.name != v.key)
              child_col = &c;
          }
          if (comp && rng() % 2) {
            sql = "update " + v.name + " set " + comp->name + " = " +
                  gen_value(rng, *comp).sql() + " where " + v.key + " = " +
                  key.sql();
            refusal = {"read-only", "no inverse", "no-inverse"};
          } else if (comp) {
            sql =
                "insert into " + v.name + " (" + v.key + ", " + comp->name +
                ") values (" +
                fresh_key(rng, before, v.col(v.key).table, v.col(v.key).column)
                    .sql() +
                ", " + gen_value(rng, *comp).sql() + ")";
            refusal = {"read-only", "no inverse", "no-inverse"};
          } else if (parent_col && child_col) {
            // The parent side reading the child: one parent joins many
            // children, so the value is ambiguous and the write is refused
            // (never one arbitrary child's).
            sql = "update " + v.name + " set " + parent_col->name + " = " +
                  child_col->name + " where " + v.key + " = " + key.sql();
            refusal = {"joins more than one"};
          } else {
            // The encapsulation guard: a base column the view projects away
            // (or, when it projects them all, no column at all) is neither
            // writable nor readable through it, nor through the body's own FROM
            // alias.
            const TableDef &kt = table(v.col(v.key).table);
            std::string hidden = "hidden_col";
            for (const std::string &bc : kt.columns) {
              bool shown = false;
              for (const ColSpec &c : v.cols)
                shown |= c.table == kt.name && c.name == bc;
              if (!shown)
                hidden = bc;
            }
            if (v.body.find(" t x ") != std::string::npos && rng() % 2) {
              sql = "update " + v.name + " set " + v.cols[1].name +
                    " = 0 where x.k = " + key.sql();
              refusal = {"not found", "is not a column of view"};
            } else if (rng() % 2) {
              sql = "update " + v.name + " set " + hidden + " = 1 where " +
                    v.key + " = " + key.sql();
              refusal = {"is not a column of view"};
            } else {
              sql =
                  "delete from " + v.name + " where " + hidden + " is not null";
              refusal = {"is not a column of view"};
            }
          }
        }

        SCOPED_TRACE("seed " + std::to_string(seed) + ", view " + v.name +
                     " as " + v.body + "\n  " + sql);
        Status st = run(sql);
        World after = snapshot();
        ++checked;
        if (!refusal.empty()) {
          EXPECT_TRUE(refused_as(st, refusal))
              << "expected a refusal containing '" << refusal[0]
              << "', got: " << st.to_string();
          auto d = diff_worlds(before, after);
          EXPECT_TRUE(d.empty())
              << "a refused write changed the base:" << lines(d);
          continue;
        }
        ASSERT_TRUE(st.ok()) << st.to_string();
        auto pg = put_get_violations(v, expected, after, read_view(v));
        EXPECT_TRUE(pg.empty()) << "PutGet:" << lines(pg);
        auto win = window_violations(before, after, allowed);
        EXPECT_TRUE(win.empty()) << "predicate window:" << lines(win);
        // The written values read back through the view at the same key, when
        // the row is still in the view (an UPDATE may move it out:
        // docs/view-updates.md).
        if (!readback.empty()) {
          bool visible = false;
          for (const ViewRow &r : image(v, expected))
            if (r.cells[v.col_index(v.key)] == rb_key)
              visible = true;
          if (visible) {
            std::vector<BaseRow> got =
                rows("select * from " + v.name + " where " + v.key + " = " +
                     rb_key.sql());
            ASSERT_EQ(got.size(), 1u)
                << "the view key is not a key of the view";
            for (auto &[i, val] : readback)
              EXPECT_EQ(got[0][i].sql(), val.sql())
                  << "column " << v.cols[i].name
                  << " does not read back the write";
          }
        }
        if (HasFatalFailure())
          return;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

// ---------------------------------------------------------------------------------------
// GetPut (VU-004).

TEST_F(ViewRoundTripTest, GetPutWritingBackWhatWasReadIsABaseNoOp) {
  int checked = 0;
  for (uint32_t seed : kSeeds) {
    Rng rng(seed);
    open(rng);
    if (HasFatalFailure())
      return;
    for (const ViewSpec &v : views_) {
      std::vector<BaseRow> read = read_view(v);
      ASSERT_FALSE(read.empty())
          << "seed " << seed << ": view " << v.name << " is empty";
      for (int step = 0; step < 4; ++step) {
        const BaseRow &row = read[rng() % read.size()];
        Cell key = row[v.col_index(v.key)];
        // Every updatable column (one per base column), the key included: its
        // just-read value.
        std::vector<size_t> order(v.cols.size());
        for (size_t i = 0; i < order.size(); ++i)
          order[i] = i;
        std::shuffle(order.begin(), order.end(), rng);
        std::set<std::string> written;
        std::string sets;
        for (size_t i : order) {
          const ColSpec &c = v.cols[i];
          if (!c.updatable() ||
              !written.insert(c.table + "." + c.column).second)
            continue;
          sets += std::string(sets.empty() ? "" : ", ") + c.name + " = " +
                  row[i].sql();
        }
        std::string sql = "update " + v.name + " set " + sets + " where " +
                          v.key + " = " + key.sql();
        // The subquery form: the value read by the statement itself.
        const ColSpec *one = nullptr;
        for (size_t i : order)
          if (v.cols[i].updatable() && v.cols[i].name != v.key)
            one = &v.cols[i];
        std::string sub = "update " + v.name + " set " + one->name +
                          " = (select " + one->name + " from " + v.name +
                          " where " + v.key + " = " + key.sql() + ") where " +
                          v.key + " = " + key.sql();
        for (const std::string &s : {sql, sub}) {
          SCOPED_TRACE("seed " + std::to_string(seed) + ", view " + v.name +
                       " as " + v.body + "\n  " + s);
          World before = snapshot();
          Status st = run(s);
          ASSERT_TRUE(st.ok()) << st.to_string();
          auto d = diff_worlds(before, snapshot());
          EXPECT_TRUE(d.empty()) << "GetPut changed the base:" << lines(d);
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 500);
}

// ---------------------------------------------------------------------------------------
// Lineage agreement (VU-005): column_info() against the model and against the
// writes.

TEST_F(ViewRoundTripTest, ColumnInfoAgreesWithTheModelAndWithTheWrites) {
  for (uint32_t seed : {kSeeds[0], kSeeds[3], kSeeds[7]}) {
    Rng rng(seed);
    open(rng);
    if (HasFatalFailure())
      return;
    for (const ViewSpec &v : views_) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", view " + v.name +
                   " as " + v.body);
      auto info = rows("select column_name, is_updatable, base_table, "
                       "base_column from column_info('" +
                       v.name + "') order by cid");
      ASSERT_EQ(info.size(), v.cols.size());
      for (size_t i = 0; i < info.size(); ++i) {
        const ColSpec &c = v.cols[i];
        EXPECT_EQ(info[i][0].s, c.name);
        EXPECT_EQ(info[i][1].s, c.updatable() ? "YES" : "NO") << c.name;
        if (c.updatable()) {
          EXPECT_EQ(info[i][2].sql(), Cell::Text(c.table).sql()) << c.name;
          EXPECT_EQ(info[i][3].sql(), Cell::Text(c.column).sql()) << c.name;
        } else {
          EXPECT_TRUE(info[i][2].is_null() && info[i][3].is_null()) << c.name;
        }
      }
      // view_info() agrees: every zoo view is updatable and insertable, and
      // deletable. (A join view reports is_deletable = NO although its DELETE
      // is accepted and lands on the FK child: left out, reported as a
      // discrepancy.)
      auto vinfo = rows("select is_insertable_into, is_updatable, is_deletable "
                        "from view_info('" +
                        v.name + "')");
      ASSERT_EQ(vinfo.size(), 1u);
      EXPECT_EQ(vinfo[0][0].s, "YES");
      EXPECT_EQ(vinfo[0][1].s, "YES");
      if (v.sources.size() == 1) {
        EXPECT_EQ(vinfo[0][2].s, "YES");
      }
      // The dynamic side reads only column_info's answer, not the model's
      // sites.
      for (size_t i = 0; i < info.size(); ++i) {
        World before = snapshot();
        std::vector<ViewRow> img = image(v, before);
        if (img.empty())
          continue;
        const ViewRow &target = img[rng() % img.size()];
        Cell key = target.cells[v.col_index(v.key)];
        const std::string &name = info[i][0].s;
        const ColSpec &c = v.col(name);
        Cell value;
        if (v.write_gen.count(name)) {
          for (int tries = 0;
               tries < 8 && (value.is_null() || value == target.cells[i]);
               ++tries)
            value = v.write_gen.at(name)(rng, before);
        } else if (c.text) {
          value = Cell::Text("lineage" + std::to_string(i));
        } else {
          value =
              Cell::Int(target.cells[i].is_null() ? 7 : target.cells[i].i + 7);
        }
        if (value == target.cells[i])
          continue; // no observable write
        std::string sql = "update " + v.name + " set " + name + " = " +
                          value.sql() + " where " + v.key + " = " + key.sql();
        SCOPED_TRACE(sql);
        Status st = run(sql);
        World after = snapshot();
        if (info[i][1].s != "YES") {
          EXPECT_FALSE(st.ok())
              << "column_info says NO but the write was accepted";
          auto d = diff_worlds(before, after);
          EXPECT_TRUE(d.empty()) << lines(d);
          continue;
        }
        ASSERT_TRUE(st.ok())
            << "column_info says YES but the write failed: " << st.to_string();
        // Exactly one row of base_table changed, and only in base_column.
        const std::string tbl = info[i][2].s, col = info[i][3].s;
        for (auto &[n, rows_before] : before) {
          if (n == tbl)
            continue;
          auto d = diff_worlds({{n, rows_before}}, {{n, after.at(n)}});
          EXPECT_TRUE(d.empty()) << "a write to " << name << " changed table "
                                 << n << ":" << lines(d);
        }
        std::vector<BaseRow> gone, came;
        for (auto &[k, r] : before.at(tbl))
          if (!after.at(tbl).count(k) || after.at(tbl).at(k) != r)
            gone.push_back(r);
        for (auto &[k, r] : after.at(tbl))
          if (!before.at(tbl).count(k) || before.at(tbl).at(k) != r)
            came.push_back(r);
        ASSERT_EQ(gone.size(), 1u) << name << " -> " << tbl << "." << col;
        ASSERT_EQ(came.size(), 1u) << name << " -> " << tbl << "." << col;
        size_t ci = table(tbl).index(col);
        for (size_t j = 0; j < gone[0].size(); ++j) {
          if (j == ci)
            EXPECT_NE(gone[0][j], came[0][j])
                << "base column " << col << " did not change";
          else
            EXPECT_EQ(gone[0][j].sql(), came[0][j].sql())
                << "base column " << table(tbl).columns[j] << " changed";
        }
        // The changed row is the one behind the addressed view row.
        EXPECT_EQ(table(tbl).key_of(gone[0]), target.src.at(tbl));
      }
    }
    // Refusing bodies report every column read-only, and refuse the write.
    for (const RefusingView &v : refusing_views()) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", view " + v.name +
                   " as " + v.body);
      auto info = rows(
          "select column_name, is_updatable, base_table from column_info('" +
          v.name + "')");
      ASSERT_FALSE(info.empty());
      for (const BaseRow &r : info) {
        EXPECT_EQ(r[1].s, "NO") << r[0].s;
        EXPECT_TRUE(r[2].is_null()) << r[0].s;
        World before = snapshot();
        EXPECT_FALSE(run("update " + v.name + " set " + r[0].s + " = 5").ok());
        EXPECT_TRUE(diff_worlds(before, snapshot()).empty());
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// LIMIT / OFFSET / DISTINCT bodies reject rather than widen (VU-008).

TEST_F(ViewRoundTripTest, WindowedAndDistinctBodiesRefuseEveryWrite) {
  for (uint32_t seed : kSeeds) {
    Rng rng(seed);
    open(rng);
    if (HasFatalFailure())
      return;
    for (const RefusingView &v : refusing_views()) {
      bool one_col = v.body.find("distinct k") != std::string::npos;
      for (int step = 0; step < 6; ++step) {
        World before = snapshot();
        Cell id = existing("t", "id")(rng, before);
        Cell val = pick_int(rng);
        std::string sql;
        switch (rng() % 4) {
        case 0:
          sql = one_col ? "update " + v.name + " set k = " + val.sql() +
                              " where k = " + val.sql()
                        : "update " + v.name + " set b = " + val.sql() +
                              " where id = " + id.sql();
          break;
        case 1:
          sql = one_col ? "delete from " + v.name + " where k = " + val.sql()
                        : "delete from " + v.name + " where id = " + id.sql();
          break;
        case 2:
          sql = one_col
                    ? "insert into " + v.name + " values (" + val.sql() + ")"
                    : "insert into " + v.name + " values (" +
                          fresh_key(rng, before, "t", "id").sql() + ", " +
                          val.sql() + ")";
          break;
        default:
          sql = one_col ? "delete from " + v.name
                        : "update " + v.name + " set b = " + val.sql();
          break;
        }
        SCOPED_TRACE("seed " + std::to_string(seed) + ", view " + v.name +
                     " as " + v.body + "\n  " + sql);
        Status st = run(sql);
        EXPECT_TRUE(refused_as(st, {v.text})) << st.to_string();
        auto d = diff_worlds(before, snapshot());
        EXPECT_TRUE(d.empty())
            << "a refused write changed the base:" << lines(d);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// The law core reds on an injected violation: a checker that cannot fail proves
// nothing.

TEST_F(ViewRoundTripTest, TheLawCheckerRedsOnAnInjectedViolation) {
  Rng rng(kSeeds[0]);
  open(rng);
  ASSERT_FALSE(HasFatalFailure());
  const ViewSpec *inv = nullptr;
  for (const ViewSpec &v : views_)
    if (v.name == "vr_inv")
      inv = &v;
  ASSERT_NE(inv, nullptr);
  World before = snapshot();
  ASSERT_FALSE(before.at("t").empty());
  const std::string pk = before.at("t").begin()->first;

  // A real write, checked against the right model and against a wrong one.
  must("update vr_inv set bp = 100 where id = " + pk);
  World after = snapshot();
  std::vector<BaseRow> read = read_view(*inv);
  World right = before;
  right["t"][pk][table("t").index("b")] = Cell::Int(99);
  EXPECT_TRUE(put_get_violations(*inv, right, after, read).empty())
      << "the right model must pass";
  World wrong =
      before; // b + 1 "inverted" as v + 1: a deliberately wrong expected diff
  wrong["t"][pk][table("t").index("b")] = Cell::Int(101);
  EXPECT_FALSE(put_get_violations(*inv, wrong, after, read).empty())
      << "a wrong expected diff must red";
  EXPECT_FALSE(put_get_violations(*inv, before, after, read).empty())
      << "an expected no-op must red";

  // A wrong view model (inverse site treated as identity) reds on the read side
  // alone.
  ViewSpec broken = *inv;
  broken.cols[1].fwd = identity;
  EXPECT_FALSE(put_get_violations(broken, after, after, read).empty())
      << "a wrong forward model must red";

  // The window check reds on a change outside the allowed rows.
  EXPECT_TRUE(window_violations(before, after, {{"t", pk}}).empty());
  EXPECT_FALSE(window_violations(before, after, {}).empty())
      << "an escaped write must red";

  // GetPut's base diff reds on any change.
  EXPECT_FALSE(diff_worlds(before, after).empty());
}

} // namespace
} // namespace quereus
