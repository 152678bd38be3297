// The store module (build/lib/quereus/store.so) through the host boundary: the plugin is
// loaded by the PluginLoader and driven through VtabModule / VtabTable / VtabConnection
// (host/plugin/module_adapter.h), exactly as the engine drives it. Each test works in a
// fresh data directory and reopens the database to check what is durable.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../../modules/store/kv.h"
#include "../../modules/store/kv_staged.h"
#include "../../modules/store/row_codec.h"
#include "catalog/registry.h"
#include "plugin/plugin_loader.h"
#include "catalog/module.h"

namespace quereus {
namespace {

using Options = std::vector<std::pair<std::string, Value>>;

std::shared_ptr<const Collation> coll(const Collation& c) {
  return std::shared_ptr<const Collation>(&c, [](const Collation*) {});
}

ColumnSchema column(std::string name, qrs_logical_type t, bool pk = false, bool not_null = false) {
  ColumnSchema c;
  c.name = std::move(name);
  c.type_name = t == QRS_LT_INTEGER ? "INTEGER" : t == QRS_LT_REAL ? "REAL" : "TEXT";
  c.logical_type = t;
  c.primary_key = pk;
  c.not_null = not_null || pk;
  c.collation = coll(Collation::binary());
  return c;
}

// t(id INTEGER PRIMARY KEY, name TEXT, score REAL)
TableSchema people(const std::string& name = "t") {
  TableSchema s;
  s.schema_name = "main";
  s.name = name;
  s.module_name = "store";
  s.columns = {column("id", QRS_LT_INTEGER, true), column("name", QRS_LT_TEXT), column("score", QRS_LT_REAL)};
  s.primary_key = {{0, false}};
  s.primary_key_declared = true;
  return s;
}

FilterSpec filter(int column, qrs_filter_op op, Value v) {
  FilterSpec f;
  f.column = column;
  f.op = op;
  f.has_value = true;
  f.value = std::move(v);
  return f;
}

std::string render(const Row& row) {
  std::string s;
  for (const Value& v : row) {
    if (!s.empty()) s += "|";
    s += v.is_null() ? "NULL" : v.to_text();
  }
  return s;
}

Row row3(int64_t id, const std::string& name, double score) {
  return Row{Value::Integer(id), Value::Text(name), Value::Real(score)};
}

class StoreModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("quereus-store-module-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    registry_ = std::make_shared<Registry>();
    PluginLoader loader(registry_, {QUEREUS_PLUGIN_DIR});
    PluginSpec spec;
    spec.path = "store";
    Status st = loader.load(spec);
    ASSERT_TRUE(st.ok()) << st.to_string();
    shared_ = registry_->find_module("store");
    ASSERT_NE(shared_, nullptr);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::shared_ptr<VtabModule> open(Options extra = {}) {
    Options o{{"path", Value::Text(dir_)}};
    for (auto& e : extra) o.push_back(std::move(e));
    return shared_->open_database("main", o);
  }

  // Expects `f` to throw an Error with `code` whose message contains every one of `texts`.
  template <class F>
  void expect_error(F&& f, StatusCode code, std::vector<std::string> texts) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      for (const std::string& t : texts) EXPECT_NE(std::string(e.what()).find(t), std::string::npos) << e.what();
    }
  }

  static std::vector<std::string> scan(VtabTable& t, std::vector<FilterSpec> filters = {},
                                       std::vector<OrderSpec> ordering = {}, bool committed = false) {
    PlanRequest req;
    req.filters = filters;
    req.ordering = ordering;
    PlanResult plan = t.best_access_plan(req);
    ScanArgs args;
    args.plan_id = plan.plan_id;
    args.filters = filters;
    args.handled = plan.handled;
    args.handled.resize(filters.size(), false);
    args.provides_ordering = plan.provides_ordering;
    args.ordering = ordering;
    args.read_committed = committed;
    auto cur = t.open_cursor(args);
    std::vector<Row> batch;
    std::vector<std::string> out;
    while (size_t n = cur->next_batch(batch))
      for (size_t i = 0; i < n; ++i) out.push_back(render(batch[i]));
    return out;
  }

  static UpdateResult insert(VtabTable& t, Row row, ConflictAction c = ConflictAction::kAbort) {
    return t.update(RowOp::kInsert, row, {}, c);
  }

  std::string dir_;
  std::shared_ptr<Registry> registry_;
  std::shared_ptr<VtabModule> shared_;
};

using V = std::vector<std::string>;

TEST_F(StoreModuleTest, CommittedRowsAndCatalogSurviveReopen) {
  EXPECT_TRUE(shared_->capabilities().persistent);
  {
    auto db = open();
    ASSERT_NE(db, nullptr);
    auto t = db->create(people());
    auto conn = t->open_connection();
    conn->begin();
    insert(*t, row3(2, "bea", 2.5));
    insert(*t, row3(1, "al", 1.5));
    insert(*t, row3(3, "cy", 3.5));
    conn->commit();
    EXPECT_TRUE(db->catalog_put("table:main.t", "create table t (id integer primary key, name text, score real)"));
    EXPECT_TRUE(db->catalog_put("view:main.v", "create view v as select 1"));
    EXPECT_TRUE(db->catalog_put("view:main.v", ""));  // removes it
    // Uncommitted writes at close are lost.
    conn->begin();
    insert(*t, row3(4, "dee", 4.5));
  }
  auto db = open();
  auto t = db->connect(people());
  EXPECT_EQ(scan(*t), (V{"1|al|1.5", "2|bea|2.5", "3|cy|3.5"}));
  std::vector<std::string> cat;
  EXPECT_TRUE(db->catalog_list([&](const std::string& k, const std::string& v) { cat.push_back(k + "=" + v); }));
  EXPECT_EQ(cat, (V{"table:main.t=create table t (id integer primary key, name text, score real)"}));
  // The row count came back from the stats keyspace and feeds the plan estimate.
  PlanResult full = t->best_access_plan(PlanRequest{});
  EXPECT_EQ(full.rows, 3);
}

TEST_F(StoreModuleTest, ReadsMergePendingWritesInKeyOrder) {
  auto db = open();
  auto t = db->create(people());
  for (int i = 1; i <= 9; i += 2) insert(*t, row3(i, "n" + std::to_string(i), i));  // autocommit
  auto conn = t->open_connection();
  conn->begin();
  insert(*t, row3(4, "four", 4));
  t->update(RowOp::kDelete, {}, Row{Value::Integer(3)}, ConflictAction::kAbort);
  t->update(RowOp::kUpdate, row3(5, "five", 5.5), Row{Value::Integer(5)}, ConflictAction::kAbort);
  t->update(RowOp::kUpdate, row3(10, "ten", 10), Row{Value::Integer(9)}, ConflictAction::kAbort);  // key moves
  V expect{"1|n1|1", "4|four|4", "5|five|5.5", "7|n7|7", "10|ten|10"};
  EXPECT_EQ(scan(*t), expect);
  V reversed(expect.rbegin(), expect.rend());
  EXPECT_EQ(scan(*t, {}, {OrderSpec{0, true}}), reversed);
  // A range seek and an IN list over the merged view.
  FilterSpec ge = filter(0, QRS_OP_GE, Value::Integer(4));
  FilterSpec lt = filter(0, QRS_OP_LT, Value::Integer(10));
  EXPECT_EQ(scan(*t, {ge, lt}), (V{"4|four|4", "5|five|5.5", "7|n7|7"}));
  FilterSpec in = filter(0, QRS_OP_IN, Value());
  in.in_values = {Value::Integer(10), Value::Integer(3), Value::Integer(1), Value::Integer(1)};
  in.in_count = 4;
  EXPECT_EQ(scan(*t, {in}), (V{"1|n1|1", "10|ten|10"}));
  FilterSpec eq = filter(0, QRS_OP_EQ, Value::Integer(4));
  EXPECT_EQ(scan(*t, {eq}), (V{"4|four|4"}));
  // A committed read skips the transaction's writes.
  EXPECT_EQ(scan(*t, {}, {}, true), (V{"1|n1|1", "3|n3|3", "5|n5|5", "7|n7|7", "9|n9|9"}));
  EXPECT_EQ(t->best_access_plan(PlanRequest{}).rows, 5);
  conn->commit();
  auto again = db->connect(people());
  EXPECT_EQ(scan(*again), expect);
}

TEST_F(StoreModuleTest, RollbackAndSavepoints) {
  auto db = open();
  auto t = db->create(people());
  auto conn = t->open_connection();
  conn->begin();
  insert(*t, row3(1, "a", 1));
  conn->savepoint(1);
  insert(*t, row3(2, "b", 2));
  conn->savepoint(2);
  insert(*t, row3(3, "c", 3));
  conn->rollback_to_savepoint(2);
  EXPECT_EQ(scan(*t), (V{"1|a|1", "2|b|2"}));
  conn->rollback_to_savepoint(1);
  EXPECT_EQ(scan(*t), (V{"1|a|1"}));
  insert(*t, row3(4, "d", 4));
  conn->release_savepoint(1);
  conn->commit();
  conn->begin();
  insert(*t, row3(5, "e", 5));
  t->update(RowOp::kDelete, {}, Row{Value::Integer(1)}, ConflictAction::kAbort);
  conn->rollback();
  EXPECT_EQ(scan(*t), (V{"1|a|1", "4|d|4"}));
  t.reset();
  conn.reset();
  db.reset();
  auto db2 = open();
  auto t2 = db2->connect(people());
  EXPECT_EQ(scan(*t2), (V{"1|a|1", "4|d|4"}));
  EXPECT_EQ(t2->best_access_plan(PlanRequest{}).rows, 2);
}

TEST_F(StoreModuleTest, ConflictsReportTheExistingRow) {
  auto db = open();
  auto t = db->create(people());
  insert(*t, row3(1, "a", 1));
  insert(*t, row3(2, "b", 2));
  UpdateResult dup = insert(*t, row3(1, "z", 9));
  EXPECT_EQ(dup.outcome, UpdateResult::Outcome::kConstraint);
  EXPECT_EQ(dup.constraint_kind, QRS_CONSTRAINT_UNIQUE);
  ASSERT_TRUE(dup.existing_row.has_value());
  EXPECT_EQ(render(*dup.existing_row), "1|a|1");
  EXPECT_EQ(insert(*t, row3(1, "z", 9), ConflictAction::kIgnore).outcome, UpdateResult::Outcome::kNoop);
  UpdateResult rep = insert(*t, row3(1, "z", 9), ConflictAction::kReplace);
  EXPECT_EQ(rep.outcome, UpdateResult::Outcome::kOk);
  ASSERT_TRUE(rep.replaced_row.has_value());
  EXPECT_EQ(render(*rep.replaced_row), "1|a|1");
  UpdateResult moved = t->update(RowOp::kUpdate, row3(2, "x", 0), Row{Value::Integer(1)}, ConflictAction::kAbort);
  EXPECT_EQ(moved.outcome, UpdateResult::Outcome::kConstraint);
  ASSERT_TRUE(moved.existing_row.has_value());
  EXPECT_EQ(render(*moved.existing_row), "2|b|2");
  UpdateResult gone = t->update(RowOp::kDelete, {}, Row{Value::Integer(7)}, ConflictAction::kAbort);
  EXPECT_EQ(gone.outcome, UpdateResult::Outcome::kNoop);
  UpdateResult del = t->update(RowOp::kDelete, {}, Row{Value::Integer(2)}, ConflictAction::kAbort);
  ASSERT_TRUE(del.row.has_value());
  EXPECT_EQ(render(*del.row), "2|b|2");
  EXPECT_EQ(scan(*t), (V{"1|z|9"}));
}

TEST_F(StoreModuleTest, OneCommitCoversEveryTableOfTheTransaction) {
  auto db = open();
  auto a = db->create(people("a"));
  auto b = db->create(people("b"));
  auto ca = a->open_connection(), cb = b->open_connection();
  ca->begin();
  cb->begin();
  insert(*a, row3(1, "a", 1));
  insert(*b, row3(1, "b", 1));
  ca->commit();
  // b is still open: nothing of the transaction has landed yet.
  auto a2 = db->connect(people("a"));
  EXPECT_EQ(scan(*a2), V{});
  cb->commit();
  EXPECT_EQ(scan(*a2), (V{"1|a|1"}));
  EXPECT_EQ(scan(*db->connect(people("b"))), (V{"1|b|1"}));
}

TEST_F(StoreModuleTest, DestroyErasesTheRowsAndRenameKeepsThem) {
  auto db = open();
  {
    auto t = db->create(people());
    insert(*t, row3(1, "a", 1));
    expect_error([&] { db->create(people()); }, StatusCode::kError, {"already exists"});  // while it is open
  }
  db->destroy("main", "t");
  {
    auto t = db->create(people());
    EXPECT_EQ(scan(*t), V{});
    insert(*t, row3(2, "b", 2));
    SchemaChange rename;
    rename.kind = QRS_CHANGE_RENAME_TABLE;
    rename.name = "t";
    rename.new_name = "u";
    EXPECT_TRUE(t->alter_table(rename, people("u")));
  }
  db.reset();
  db = open();
  EXPECT_EQ(scan(*db->connect(people("u"))), (V{"2|b|2"}));
  // The old name holds nothing: connecting to it (as reopening a catalog that still named
  // it would) is CORRUPT, never an empty table.
  expect_error([&] { db->connect(people("t")); }, StatusCode::kCorrupt, {"main.t", "no storage"});
}

TEST_F(StoreModuleTest, EveryAlterArmRewritesStoredRows) {
  auto db = open();
  auto t = db->create(people());
  insert(*t, row3(1, "Al", 1.5));
  insert(*t, row3(2, "bea", 2));
  TableSchema s = people();

  // ADD COLUMN with a per-row fill.
  TableSchema s1 = s;
  s1.columns.push_back(column("tag", QRS_LT_TEXT));
  SchemaChange add;
  add.kind = QRS_CHANGE_ADD_COLUMN;
  add.column = 3;
  add.name = "tag";
  add.fill = [](std::span<const Value> row) { return Value::Text("t" + row[0].to_text()); };
  EXPECT_TRUE(t->alter_table(add, s1));
  EXPECT_EQ(scan(*t), (V{"1|Al|1.5|t1", "2|bea|2|t2"}));

  // SET DATA TYPE converting every value; a value that does not convert refuses the arm.
  TableSchema s2 = s1;
  s2.columns[2] = column("score", QRS_LT_TEXT);
  SchemaChange retype;
  retype.kind = QRS_CHANGE_SET_DATA_TYPE;
  retype.column = 2;
  retype.name = "score";
  retype.convert = [](const Value& v) {
    if (v.to_double() == 2) throw Error(StatusCode::kMismatch, "cannot convert 2");
    return Value::Text("s" + v.to_text());
  };
  expect_error([&] { t->alter_table(retype, s2); }, StatusCode::kMismatch, {"cannot convert 2"});
  EXPECT_EQ(scan(*t), (V{"1|Al|1.5|t1", "2|bea|2|t2"}));  // untouched
  retype.convert = [](const Value& v) { return Value::Text("s" + v.to_text()); };
  EXPECT_TRUE(t->alter_table(retype, s2));
  EXPECT_EQ(scan(*t), (V{"1|Al|s1.5|t1", "2|bea|s2|t2"}));

  // SET NOT NULL: a NULL with no backfill refuses; with one it is filled.
  insert(*t, Row{Value::Integer(3), Value(), Value::Text("s3"), Value::Text("t3")});
  TableSchema s3 = s2;
  s3.columns[1].not_null = true;
  SchemaChange nn;
  nn.kind = QRS_CHANGE_SET_NOT_NULL;
  nn.column = 1;
  nn.name = "name";
  expect_error([&] { t->alter_table(nn, s3); }, StatusCode::kConstraint, {"SET NOT NULL", "name"});
  nn.fill = [](std::span<const Value>) { return Value::Text("anon"); };
  EXPECT_TRUE(t->alter_table(nn, s3));
  EXPECT_EQ(scan(*t), (V{"1|Al|s1.5|t1", "2|bea|s2|t2", "3|anon|s3|t3"}));

  // RENAME COLUMN and DROP NOT NULL: schema only.
  TableSchema s4 = s3;
  s4.columns[3].name = "label";
  SchemaChange rn;
  rn.kind = QRS_CHANGE_RENAME_COLUMN;
  rn.column = 3;
  rn.name = "tag";
  rn.new_name = "label";
  EXPECT_TRUE(t->alter_table(rn, s4));

  // DROP COLUMN.
  TableSchema s5 = s4;
  s5.columns.erase(s5.columns.begin() + 2);
  SchemaChange drop;
  drop.kind = QRS_CHANGE_DROP_COLUMN;
  drop.column = 2;
  drop.name = "score";
  EXPECT_TRUE(t->alter_table(drop, s5));
  EXPECT_EQ(scan(*t), (V{"1|Al|t1", "2|bea|t2", "3|anon|t3"}));

  // ALTER PRIMARY KEY to (name): rows re-keyed in name order.
  TableSchema s6 = s5;
  s6.columns[0].primary_key = false;
  s6.columns[1].primary_key = true;
  s6.primary_key = {{1, false}};
  SchemaChange pk;
  pk.kind = QRS_CHANGE_ALTER_PRIMARY_KEY;
  EXPECT_TRUE(t->alter_table(pk, s6));
  EXPECT_EQ(scan(*t), (V{"1|Al|t1", "3|anon|t3", "2|bea|t2"}));  // BINARY: 'A' < 'a' < 'b'

  // SET COLLATE NOCASE on the key: re-keyed; a collision refuses and leaves storage as is.
  insert(*t, Row{Value::Integer(4), Value::Text("al"), Value::Text("t4")});
  TableSchema s7 = s6;
  s7.columns[1].collation = coll(Collation::nocase());
  SchemaChange sc;
  sc.kind = QRS_CHANGE_SET_COLLATION;
  sc.column = 1;
  sc.name = "name";
  expect_error([&] { t->alter_table(sc, s7); }, StatusCode::kConstraint, {"UNIQUE"});
  EXPECT_EQ(scan(*t), (V{"1|Al|t1", "4|al|t4", "3|anon|t3", "2|bea|t2"}));
  t->update(RowOp::kDelete, {}, Row{Value::Text("al")}, ConflictAction::kAbort);
  EXPECT_TRUE(t->alter_table(sc, s7));
  UpdateResult dup = insert(*t, Row{Value::Integer(9), Value::Text("AL"), Value::Text("x")});
  EXPECT_EQ(dup.outcome, UpdateResult::Outcome::kConstraint);  // NOCASE key: 'AL' = 'Al'

  // A row-rewriting arm with uncommitted writes rewrites them too, ALTER PRIMARY KEY included.
  auto conn = t->open_connection();
  conn->begin();
  insert(*t, Row{Value::Integer(5), Value::Text("eve"), Value::Text("t5")});
  t->update(RowOp::kDelete, {}, Row{Value::Text("anon")}, ConflictAction::kAbort);
  SchemaChange drop2;
  drop2.kind = QRS_CHANGE_DROP_COLUMN;
  drop2.column = 2;
  drop2.name = "label";
  TableSchema s8 = s7;
  s8.columns.erase(s8.columns.begin() + 2);
  EXPECT_TRUE(t->alter_table(drop2, s8));
  EXPECT_EQ(scan(*t), (V{"1|Al", "2|bea", "5|eve"}));
  EXPECT_EQ(scan(*t, {}, {}, true), (V{"1|Al", "3|anon", "2|bea"}));  // committed, in the new layout
  TableSchema s9 = s8;
  s9.columns[0].primary_key = true;
  s9.columns[1].primary_key = false;
  s9.primary_key = {{0, false}};
  EXPECT_TRUE(t->alter_table(pk, s9));
  EXPECT_EQ(scan(*t), (V{"1|Al", "2|bea", "5|eve"}));
  EXPECT_EQ(scan(*t, {}, {}, true), (V{"1|Al", "2|bea", "3|anon"}));  // committed, under the new key
  conn->rollback();
  EXPECT_EQ(scan(*t), (V{"1|Al", "2|bea", "3|anon"}));
  EXPECT_TRUE(t->alter_table(pk, s8));  // back to the NOCASE name key
  EXPECT_EQ(scan(*t), (V{"1|Al", "3|anon", "2|bea"}));

  // Everything above is durable.
  t.reset();
  conn.reset();
  db.reset();
  db = open();
  auto back = db->connect(s8);
  EXPECT_EQ(scan(*back), (V{"1|Al", "3|anon", "2|bea"}));
  FilterSpec eq = filter(1, QRS_OP_EQ, Value::Text("BEA"));
  EXPECT_EQ(scan(*back, {eq}), (V{"2|bea"}));
}

TEST_F(StoreModuleTest, OpenErrorsAreClear) {
  // The shared instance has no directory.
  expect_error([&] { shared_->create(people()); }, StatusCode::kMisuse, {"path"});
  // Options.
  expect_error([&] { shared_->open_database("main", {}); }, StatusCode::kMisuse, {"'path'", "required"});
  expect_error([&] { open({{"synch", Value::Boolean(true)}}); }, StatusCode::kMisuse, {"synch", "unknown"});
  expect_error([&] { open({{"sync", Value::Text("maybe")}}); }, StatusCode::kMisuse, {"sync", "true or false"});
  // Missing with create_if_missing = false.
  expect_error([&] { open({{"create_if_missing", Value::Boolean(false)}}); }, StatusCode::kCantOpen,
               {dir_, "create_if_missing"});
  // Locked by another user.
  {
    auto first = open({{"sync", Value::Boolean(false)}, {"cache_size", Value::Integer(1 << 20)},
                       {"paranoid_checks", Value::Boolean(true)}});
    expect_error([&] { open(); }, StatusCode::kBusy, {dir_, "locked"});
  }
  // An incompatible format version, and a directory that is not a store.
  {
    store::KvOptions o;
    o.path = dir_;
    auto kv = store::open_leveldb(o);
    store::KvBatch b;
    b.put(std::string(1, '\0') + "format", "99");
    kv->write(b, true);
  }
  expect_error([&] { open(); }, StatusCode::kFormat, {dir_, "version 99"});
  std::filesystem::remove_all(dir_);
  {
    store::KvOptions o;
    o.path = dir_;
    auto kv = store::open_leveldb(o);
    store::KvBatch b;
    b.put("something", "else");
    kv->write(b, true);
  }
  expect_error([&] { open(); }, StatusCode::kCantOpen, {dir_, "not a Quereus store"});
  // Corruption: a damaged CURRENT file.
  std::filesystem::remove_all(dir_);
  { auto db = open(); }
  {
    FILE* f = std::fopen((dir_ + "/CURRENT").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("MANIFEST-999999\n", f);
    std::fclose(f);
  }
  try {
    open();
    ADD_FAILURE() << "opened a damaged store";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir_), std::string::npos) << e.what();
  }
}

// words(w TEXT COLLATE NOCASE PRIMARY KEY, n INTEGER)
TableSchema words() {
  TableSchema s;
  s.schema_name = "main";
  s.name = "words";
  s.module_name = "store";
  s.columns = {column("w", QRS_LT_TEXT, true), column("n", QRS_LT_INTEGER)};
  s.columns[0].collation = coll(Collation::nocase());
  s.primary_key = {{0, false}};
  s.primary_key_declared = true;
  return s;
}

// Rewrites the store in dir as store format 1 wrote it: NOCASE text keys folded A-Z only.
void downgrade_to_format_1(const std::string& dir) {
  store::KvOptions o;
  o.path = dir;
  auto kv = store::open_leveldb(o);
  store::KvBatch b;
  b.put(std::string(1, '\0') + "format", "1");
  const std::string rows(1, '\x04');
  auto it = kv->iterate(store::KvRange{rows, std::string(1, '\x05')}, false);
  std::vector<qrs_value> cells;
  for (; it->valid(); it->next()) {
    std::string key(it->key());
    store::decode_row(it->value(), cells);
    std::string w(cells[0].u.str.data, cells[0].u.str.len);
    for (char& c : w)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    std::string legacy = key.substr(0, 9) + '\x20' + w + std::string("\x00\x01", 2);
    if (legacy == key) continue;
    b.del(key);
    b.put(legacy, std::string(it->value()));
  }
  it->check();
  kv->write(b, true);
}

// Format 1 folded only A-Z in NOCASE keys, so 'É' and 'é' were two keys; format 2 keys by
// the engine's Unicode fold. A format-1 store opens, each table re-keyed at first open.
TEST_F(StoreModuleTest, Format1StoreIsUpgradedAndItsNocaseKeysRefolded) {
  {
    auto db = open();
    auto t = db->create(words());
    for (const char* w : {"Émile", "apple", "Zoë", "ÖL"}) insert(*t, Row{Value::Text(w), Value::Integer(1)});
  }
  downgrade_to_format_1(dir_);
  {
    auto db = open();
    auto t = db->connect(words());
    // Key order is now the NOCASE order of the engine: 'apple' < 'zoë' < 'émile' < 'öl'.
    EXPECT_EQ(scan(*t), (V{"apple|1", "Zoë|1", "Émile|1", "ÖL|1"}));
    // A key differing only in non-ASCII case is the same key.
    UpdateResult dup = insert(*t, Row{Value::Text("émile"), Value::Integer(2)});
    EXPECT_EQ(dup.outcome, UpdateResult::Outcome::kConstraint);
    ASSERT_TRUE(dup.existing_row.has_value());
    EXPECT_EQ(render(*dup.existing_row), "Émile|1");
    EXPECT_EQ(scan(*t, {filter(0, QRS_OP_EQ, Value::Text("öl"))}), (V{"ÖL|1"}));
  }
  {  // the upgrade is durable and done once
    store::KvOptions o;
    o.path = dir_;
    o.create_if_missing = false;
    auto kv = store::open_leveldb(o);
    EXPECT_EQ(kv->get(std::string(1, '\0') + "format"), std::optional<std::string>("2"));
    auto it = kv->iterate(store::KvRange{std::string(1, '\x05'), std::string(1, '\x06')}, false);
    EXPECT_FALSE(it->valid()) << "a table is still marked as format 1";
  }
  auto db = open();
  auto t = db->connect(words());
  EXPECT_EQ(scan(*t).size(), 4u);
}

// Two format-1 keys that the new fold makes one: the open of that table fails, naming the
// table, and nothing is changed.
TEST_F(StoreModuleTest, Format1KeysThatMeetUnderTheNewFoldAreRefused) {
  {
    auto db = open();
    auto t = db->create(words());
    insert(*t, Row{Value::Text("Émile"), Value::Integer(1)});
  }
  downgrade_to_format_1(dir_);
  {  // format 1 allowed 'émile' beside 'Émile': add it as format 1 would have
    store::KvOptions o;
    o.path = dir_;
    auto kv = store::open_leveldb(o);
    auto it = kv->iterate(store::KvRange{std::string(1, '\x04'), std::string(1, '\x05')}, false);
    ASSERT_TRUE(it->valid());
    std::string key(it->key()), value(it->value());
    it.reset();
    std::string lower = std::string("\xc3\xa9", 2);  // é
    std::string k2 = key.substr(0, 10) + lower + key.substr(12);
    store::KvBatch b;
    std::string v2 = value;
    v2.replace(v2.find("\xc3\x89"), 2, lower);
    b.put(k2, v2);
    kv->write(b, true);
  }
  auto db = open();
  expect_error([&] { db->connect(words()); }, StatusCode::kFormat, {"main.words", "non-ASCII", "nothing was changed"});
}

TEST_F(StoreModuleTest, UnencodableKeyCollationIsRefusedAtCreate) {
  auto db = open();
  TableSchema s = people();
  static const Collation natural("NATURAL", [](void*, const char*, size_t, const char*, size_t) { return 0; },
                                 nullptr, 0);
  s.columns[0].collation = coll(natural);
  expect_error([&] { db->create(s); }, StatusCode::kUnsupported, {"'id'", "NATURAL"});
}

// A CREATE TABLE interrupted between the store's registration and the host's catalog entry
// (a crash) leaves a registered table the catalog does not know: the next CREATE of the
// name starts afresh instead of failing with "already exists", and the orphan's rows go.
TEST_F(StoreModuleTest, CreateOverAnInterruptedCreateStartsAfresh) {
  {
    auto db = open();
    auto t = db->create(people());
    insert(*t, row3(1, "al", 1.5));  // autocommit: lands
    // ... and no catalog_put: the process "died" here.
  }
  auto db = open();
  auto t = db->create(people());
  EXPECT_EQ(scan(*t), V{});
  insert(*t, row3(2, "bea", 2.5));
  EXPECT_EQ(scan(*t), (V{"2|bea|2.5"}));
  // A live table of that name is still refused.
  expect_error([&] { db->create(people()); }, StatusCode::kError, {"already exists"});
}

// ---- SDK 1.4: the schema-change scope ----

TEST_F(StoreModuleTest, SchemaScopeLandsAtCommitAndNothingBefore) {
  {
    auto db = open();
    ASSERT_TRUE(db->schema_begin());
    auto t = db->create(people());
    insert(*t, row3(1, "al", 1.5));  // outside a transaction: staged with the scope
    insert(*t, row3(2, "bea", 2.5));
    EXPECT_TRUE(db->catalog_put("table:main.t", "create table t (id integer primary key, name text, score real)"));
    // The scope reads its own writes.
    EXPECT_EQ(scan(*t), (V{"1|al|1.5", "2|bea|2.5"}));
    EXPECT_EQ(t->best_access_plan(PlanRequest{}).rows, 2);
    // The process "dies" here: the scope never commits.
  }
  {
    auto db = open();
    std::vector<std::string> cat;
    EXPECT_TRUE(db->catalog_list([&](const std::string& k, const std::string&) { cat.push_back(k); }));
    EXPECT_EQ(cat, V{});
    // Nothing of the table landed: connecting to it is CORRUPT, never an empty table.
    expect_error([&] { db->connect(people()); }, StatusCode::kCorrupt, {"main.t", "no storage"});
    ASSERT_TRUE(db->schema_begin());
    auto t = db->create(people());
    insert(*t, row3(1, "al", 1.5));
    EXPECT_TRUE(db->catalog_put("table:main.t", "create table t (id integer primary key, name text, score real)"));
    db->schema_commit();
  }
  auto db = open();
  auto t = db->connect(people());
  EXPECT_EQ(scan(*t), (V{"1|al|1.5"}));
  EXPECT_EQ(t->best_access_plan(PlanRequest{}).rows, 1);
}

TEST_F(StoreModuleTest, SchemaScopeRollbackRestoresStorageAndTableState) {
  auto db = open();
  auto t = db->create(people());
  insert(*t, row3(1, "al", 1.5));
  insert(*t, row3(2, "bea", 2.5));
  ASSERT_TRUE(db->schema_begin());
  // An ALTER (DROP COLUMN score), more rows, a second table, a drop: all undone.
  TableSchema narrow = people();
  narrow.columns.pop_back();
  SchemaChange drop;
  drop.kind = QRS_CHANGE_DROP_COLUMN;
  drop.column = 2;
  ASSERT_TRUE(t->alter_table(drop, narrow));
  EXPECT_EQ(scan(*t), (V{"1|al", "2|bea"}));
  t->update(RowOp::kInsert, Row{Value::Integer(3), Value::Text("cy")}, {}, ConflictAction::kAbort);
  auto u = db->create(people("u"));
  insert(*u, row3(9, "zed", 9.5));
  db->destroy("main", "u");
  db->schema_rollback();
  // The instance the host holds works again with its old schema, count and rows.
  EXPECT_EQ(scan(*t), (V{"1|al|1.5", "2|bea|2.5"}));
  EXPECT_EQ(t->best_access_plan(PlanRequest{}).rows, 2);
  insert(*t, row3(4, "dee", 4.5));
  EXPECT_EQ(scan(*t), (V{"1|al|1.5", "2|bea|2.5", "4|dee|4.5"}));
  expect_error([&] { db->connect(people("u")); }, StatusCode::kCorrupt, {"main.u"});
  // Scopes do not nest.
  ASSERT_TRUE(db->schema_begin());
  expect_error([&] { db->schema_begin(); }, StatusCode::kMisuse, {"already open"});
  db->schema_rollback();
}

TEST_F(StoreModuleTest, StagedKvMergesItsWritesOverTheStore) {
  store::KvOptions o;
  o.path = dir_;
  auto kv = store::open_leveldb(o);
  store::KvBatch base;
  for (const char* k : {"a", "c", "e", "g"}) base.put(k, std::string("base-") + k);
  kv->write(base, true);
  store::StagedKv staged(*kv);
  store::KvBatch w;
  w.put("b", "new-b");
  w.put("c", "new-c");
  w.del("e");
  w.put("h", "new-h");
  w.del("zz");  // a deletion of nothing
  staged.write(w, true);
  auto walk = [&](store::KvStore& s, store::KvRange r, bool reverse) {
    std::vector<std::string> out;
    for (auto it = s.iterate(r, reverse); it->valid(); it->next())
      out.push_back(std::string(it->key()) + "=" + std::string(it->value()));
    return out;
  };
  EXPECT_EQ(walk(staged, {}, false), (V{"a=base-a", "b=new-b", "c=new-c", "g=base-g", "h=new-h"}));
  EXPECT_EQ(walk(staged, {}, true), (V{"h=new-h", "g=base-g", "c=new-c", "b=new-b", "a=base-a"}));
  EXPECT_EQ(walk(staged, {"b", "g"}, false), (V{"b=new-b", "c=new-c"}));
  EXPECT_EQ(walk(staged, {"b", "g"}, true), (V{"c=new-c", "b=new-b"}));
  EXPECT_EQ(staged.get("e"), std::nullopt);
  EXPECT_EQ(staged.get("c"), std::optional<std::string>("new-c"));
  // The store underneath is untouched until commit.
  EXPECT_EQ(walk(*kv, {}, false), (V{"a=base-a", "c=base-c", "e=base-e", "g=base-g"}));
  staged.commit();
  EXPECT_EQ(walk(*kv, {}, false), (V{"a=base-a", "b=new-b", "c=new-c", "g=base-g", "h=new-h"}));
}

// ---- refusing rather than guessing ----

TEST_F(StoreModuleTest, MissingCurrentIsRefusedAndTheDataKept) {
  {
    auto db = open();
    auto t = db->create(people());
    insert(*t, row3(1, "al", 1.5));
  }
  { auto db = open(); }  // a reopen turns the log into a table file
  std::filesystem::remove(dir_ + "/CURRENT");
  size_t files_before = 0;
  for (auto& e : std::filesystem::directory_iterator(dir_)) files_before += e.is_regular_file();
  expect_error([&] { open(); }, StatusCode::kCorrupt, {dir_, "no CURRENT", "not re-created"});
  size_t files_after = 0;
  for (auto& e : std::filesystem::directory_iterator(dir_)) files_after += e.is_regular_file();
  EXPECT_EQ(files_after, files_before);  // nothing deleted, nothing created
}

// The table files of the store (after a reopen compacted the log into one).
std::vector<std::filesystem::path> table_files(const std::string& dir) {
  std::vector<std::filesystem::path> out;
  for (auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".ldb" || e.path().extension() == ".sst") out.push_back(e.path());
  return out;
}

TEST_F(StoreModuleTest, DamagedTableFilesReadAsCorrupt) {
  {
    auto db = open();
    auto t = db->create(people());
    auto conn = t->open_connection();
    conn->begin();
    for (int i = 0; i < 2000; ++i) insert(*t, row3(i, "name-" + std::to_string(i) + std::string(40, 'x'), i));
    conn->commit();
  }
  { auto db = open(); }
  auto files = table_files(dir_);
  ASSERT_FALSE(files.empty());
  std::filesystem::path biggest = files[0];
  for (auto& f : files)
    if (std::filesystem::file_size(f) > std::filesystem::file_size(biggest)) biggest = f;
  auto size = std::filesystem::file_size(biggest);
  // One flipped byte in the middle of a data block.
  {
    std::FILE* f = std::fopen(biggest.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    std::fseek(f, static_cast<long>(size / 3), SEEK_SET);
    int c = std::fgetc(f);
    std::fseek(f, static_cast<long>(size / 3), SEEK_SET);
    std::fputc(c ^ 0x5A, f);
    std::fclose(f);
  }
  {
    auto db = open();
    auto t = db->connect(people());
    expect_error([&] { scan(*t); }, StatusCode::kCorrupt, {dir_, "corrupt"});
  }
  // Cut short.
  std::filesystem::resize_file(biggest, size / 2);
  try {
    auto db = open();
    auto t = db->connect(people());
    scan(*t);
    ADD_FAILURE() << "a truncated table file read as data";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kCorrupt) << e.what();
  }
}

TEST_F(StoreModuleTest, ARowOfAnotherShapeIsCorruptNamingTheTable) {
  {
    auto db = open();
    auto t = db->create(people());
    insert(*t, row3(1, "al", 1.5));
  }
  auto db = open();
  TableSchema wider = people();
  wider.columns.push_back(column("extra", QRS_LT_TEXT));
  auto t = db->connect(wider);
  expect_error([&] { scan(*t); }, StatusCode::kCorrupt, {"main.t", "3 cells", "4 columns"});
  Row out;
  expect_error([&] { t->lookup(Row{Value::Integer(1)}, out); }, StatusCode::kCorrupt, {"main.t"});
}

}  // namespace
}  // namespace quereus
