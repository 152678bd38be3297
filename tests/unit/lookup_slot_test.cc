// The ABI 1.3 point-lookup slot (abi.h qrs_table_vtable.lookup): across the host adapter
// (a 1.2 plugin without the slot and a table keeping the C++ default both read as
// "unsupported"), in the memory module (full keys, key prefixes, the open transaction's
// writes), and end to end: foreign-key parent probes, UNIQUE probes and index scans use
// it when the module has it and give the same answers through cursors when it does not.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>

#include "catalog/registry.h"
#include "mem_db_test.h"
#include "older_table_abi.h"
#include "plugin/module_adapter.h"
#include "quereus/sdk.hpp"
#include "catalog/module.h"

namespace quereus {
namespace {

// ---- across the adapter --------------------------------------------------------------

class EmptyCursor : public sdk::Cursor {
 public:
  void next_batch(sdk::RowBatch&) override {}
};

// Answers a lookup of key 7 with the row (7, 'seven'); counts its calls.
class KeyedTable : public sdk::Table {
 public:
  KeyedTable(bool implements, int* calls) : implements_(implements), calls_(calls) {}
  std::unique_ptr<sdk::Cursor> open_cursor(const sdk::ScanArgs&) override { return std::make_unique<EmptyCursor>(); }
  sdk::UpdateResult update(sdk::UpdateArgs) override { return sdk::UpdateResult::noop(); }
  sdk::LookupResult lookup(std::span<const qrs_value> key) override {
    if (!implements_) return sdk::Table::lookup(key);
    ++*calls_;
    if (key.size() != 1 || key[0].type != QRS_TYPE_INTEGER) throw sdk::Error::misuse("bad key");
    if (key[0].u.integer != 7) return sdk::LookupResult::not_found();
    return sdk::LookupResult::of_row(sdk::make_row(sdk::Row{sdk::Value::integer(7), sdk::Value::text("seven")}));
  }

 private:
  bool implements_;
  int* calls_;
};

class KeyedModule : public sdk::Module {
 public:
  KeyedModule(bool implements, int* calls) : implements_(implements), calls_(calls) {}
  std::unique_ptr<sdk::Table> create(const sdk::TableSchema&) override {
    return std::make_unique<KeyedTable>(implements_, calls_);
  }
  std::unique_ptr<sdk::Table> connect(const sdk::TableSchema& s) override { return create(s); }
  void destroy(std::string_view, std::string_view) override {}

 private:
  bool implements_;
  int* calls_;
};

// A 1.2 plugin: its table vtable ends before the lookup slot.
using OldAbi = testing::OlderTableAbi<offsetof(qrs_table_vtable, lookup)>;

std::shared_ptr<PluginModule> make_module(bool implements, int* calls, bool old_abi) {
  return testing::wrap_sdk_module("keyed", std::make_shared<KeyedModule>(implements, calls), old_abi ? &OldAbi::kModuleVt : nullptr);
}

std::shared_ptr<const Collation> binary() {
  return std::shared_ptr<const Collation>(&Collation::binary(), [](const Collation*) {});
}

TableSchema keyed_schema() {
  TableSchema ts;
  ts.schema_name = "main";
  ts.name = "t";
  ColumnSchema id;
  id.name = "id";
  id.logical_type = QRS_LT_INTEGER;
  id.primary_key = true;
  id.collation = binary();
  ColumnSchema v = id;
  v.name = "v";
  v.logical_type = QRS_LT_TEXT;
  v.primary_key = false;
  ts.columns = {id, v};
  ts.primary_key = {{0, false}};
  return ts;
}

TEST(LookupSlotAbi, FoundAndNotFoundCrossTheBoundary) {
  int calls = 0;
  auto table = make_module(true, &calls, false)->create(keyed_schema());
  Row out;
  Row key{Value::Integer(7)};
  ASSERT_EQ(table->lookup(key, out), LookupStatus::kFound);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].as_int(), 7);
  EXPECT_EQ(out[1].str(), "seven");
  Row missing{Value::Integer(8)};
  EXPECT_EQ(table->lookup(missing, out), LookupStatus::kNotFound);
  EXPECT_EQ(calls, 2);
}

TEST(LookupSlotAbi, ErrorsComeBackWithTheirStatus) {
  int calls = 0;
  auto table = make_module(true, &calls, false)->create(keyed_schema());
  Row out;
  Row key{Value::Text("x")};
  try {
    table->lookup(key, out);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kMisuse);
    EXPECT_NE(std::string(e.what()).find("bad key"), std::string::npos) << e.what();
  }
}

TEST(LookupSlotAbi, PluginWithoutTheSlotReadsAsUnsupported) {
  int calls = 0;
  auto table = make_module(true, &calls, /*old_abi=*/true)->create(keyed_schema());
  Row out;
  Row key{Value::Integer(7)};
  EXPECT_EQ(table->lookup(key, out), LookupStatus::kUnsupported);
  EXPECT_EQ(calls, 0);  // never called
}

TEST(LookupSlotAbi, DefaultVirtualReadsAsUnsupported) {
  int calls = 0;
  auto table = make_module(false, &calls, false)->create(keyed_schema());
  Row out;
  Row key{Value::Integer(7)};
  EXPECT_EQ(table->lookup(key, out), LookupStatus::kUnsupported);
}

TEST(LookupSlotAbi, IntegerOutsideInt64IsLeftToACursor) {
  int calls = 0;
  auto table = make_module(true, &calls, false)->create(keyed_schema());
  Row out;
  Row key{Value::BigInteger("99999999999999999999")};
  EXPECT_EQ(table->lookup(key, out), LookupStatus::kUnsupported);
  EXPECT_EQ(calls, 0);
}

// ---- end to end ------------------------------------------------------------------------

struct Counts {
  int lookups = 0;  // lookup calls answered (found or not)
  int cursors = 0;  // cursors opened
};

// A module over the memory module that counts its tables' lookups and cursors; with
// `forward_lookup` false its tables answer no lookup (as a plugin built before ABI 1.3).
class CountingTable : public VtabTable {
 public:
  CountingTable(std::unique_ptr<VtabTable> inner, bool forward_lookup, Counts* counts)
      : inner_(std::move(inner)), forward_(forward_lookup), counts_(counts) {}
  PlanResult best_access_plan(const PlanRequest& req) override { return inner_->best_access_plan(req); }
  std::unique_ptr<VtabCursor> open_cursor(const ScanArgs& args) override {
    ++counts_->cursors;
    return inner_->open_cursor(args);
  }
  UpdateResult update(RowOp op, std::span<const Value> values, std::span<const Value> old_key,
                      ConflictAction on_conflict) override {
    return inner_->update(op, values, old_key, on_conflict);
  }
  std::unique_ptr<VtabConnection> open_connection() override { return inner_->open_connection(); }
  bool alter_table(const SchemaChange& change, const TableSchema& new_schema) override {
    return inner_->alter_table(change, new_schema);
  }
  LookupStatus lookup(std::span<const Value> key, Row& out) override {
    if (!forward_) return VtabTable::lookup(key, out);
    ++counts_->lookups;
    return inner_->lookup(key, out);
  }

 private:
  std::unique_ptr<VtabTable> inner_;
  bool forward_;
  Counts* counts_;
};

class CountingModule : public VtabModule {
 public:
  CountingModule(std::shared_ptr<VtabModule> inner, bool forward_lookup, Counts* counts)
      : inner_(std::move(inner)), forward_(forward_lookup), counts_(counts) {}
  std::unique_ptr<VtabTable> create(const TableSchema& s) override {
    return std::make_unique<CountingTable>(inner_->create(s), forward_, counts_);
  }
  std::unique_ptr<VtabTable> connect(const TableSchema& s) override {
    return std::make_unique<CountingTable>(inner_->connect(s), forward_, counts_);
  }
  void destroy(const std::string& schema, const std::string& table) override { inner_->destroy(schema, table); }
  ModuleCapabilities capabilities() const override { return inner_->capabilities(); }

 private:
  std::shared_ptr<VtabModule> inner_;
  bool forward_;
  Counts* counts_;
};

// Every scenario runs on "counted" (the memory module's lookup) and on "nolookup" (the
// same storage without the slot: the cursor fallback), with the same expectations.
class LookupSlotTest : public MemDbTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    MemDbTest::SetUp();
    auto memory = registry_->find_module("memory");
    registry_->add_module("counted", std::make_shared<CountingModule>(memory, true, &counts_), "test");
    registry_->add_module("nolookup", std::make_shared<CountingModule>(memory, false, &counts_), "test");
  }
  bool with_lookup() const { return GetParam(); }
  std::string using_clause() const { return with_lookup() ? " using counted" : " using nolookup"; }
  int64_t scalar(const std::string& sql) {
    auto rows = query(sql);
    EXPECT_EQ(rows.size(), 1u) << sql;
    return rows.empty() ? -1 : rows[0][0].as_int();
  }

  Counts counts_;
};

TEST_P(LookupSlotTest, ForeignKeyParentProbe) {
  exec("create table p (id integer primary key, name text)" + using_clause());
  exec("create table c (id integer primary key, pid integer null references p (id))" + using_clause());
  exec("insert into p values (1, 'one'), (2, 'two')");
  counts_ = {};
  exec("insert into c values (10, 1)");
  exec("insert into c values (11, 2)");
  exec("insert into c values (12, null)");  // MATCH SIMPLE: nothing to probe
  fails("insert into c values (13, 3)", StatusCode::kConstraint, "CHECK constraint failed");
  if (with_lookup()) {
    EXPECT_EQ(counts_.lookups, 3);  // one parent probe per non-null reference
    EXPECT_EQ(counts_.cursors, 0);  // and no cursor for them
  } else {
    EXPECT_EQ(counts_.lookups, 0);
    EXPECT_GE(counts_.cursors, 3);
  }
  // The probe sees the open transaction: a parent inserted, or deleted, in it.
  exec("begin");
  exec("insert into p values (3, 'three')");
  exec("insert into c values (13, 3)");
  exec("delete from c where id = 12");
  exec("delete from c where id = 11");
  exec("delete from p where id = 2");
  fails("insert into c values (14, 2)", StatusCode::kConstraint, "CHECK constraint failed");
  exec("commit");
  EXPECT_EQ(scalar("select count(*) from c"), 2);
  EXPECT_EQ(scalar("select sum(pid) from c"), 4);
}

TEST_P(LookupSlotTest, ForeignKeyOnACompositeKeyInAnotherOrderAndUnderNocase) {
  exec("create table p (a text collate nocase, b integer, primary key (a, b))" + using_clause());
  exec("create table c (id integer primary key, x integer, y text, foreign key (x, y) references p (b, a))" +
       using_clause());
  exec("insert into p values ('Key', 1)");
  exec("insert into c values (1, 1, 'key')");  // NOCASE: 'key' references 'Key'
  exec("insert into c values (2, 1, 'KEY')");
  fails("insert into c values (3, 2, 'key')", StatusCode::kConstraint, "CHECK constraint failed");
  fails("insert into c values (3, 1, 'other')", StatusCode::kConstraint, "CHECK constraint failed");
  EXPECT_EQ(scalar("select count(*) from c"), 2);
}

TEST_P(LookupSlotTest, UniqueProbe) {
  exec("create table t (id integer primary key, code text unique, tag text collate nocase null unique)" +
       using_clause());
  exec("insert into t values (1, 'a', 'X'), (2, 'b', null), (3, 'c', null)");  // NULLs are distinct
  counts_ = {};
  fails("insert into t values (4, 'a', null)", StatusCode::kConstraint, "UNIQUE constraint failed: t (code)");
  fails("insert into t values (4, 'd', 'x')", StatusCode::kConstraint, "UNIQUE constraint failed: t (tag)");
  if (with_lookup()) {
    EXPECT_EQ(counts_.cursors, 0);
  }
  // An update keeping its own key is no conflict; moving onto another row's key is.
  exec("update t set tag = 'x' where id = 1");
  fails("update t set code = 'b' where id = 1", StatusCode::kConstraint, "UNIQUE constraint failed: t (code)");
  // OR REPLACE evicts the holder; OR IGNORE skips.
  exec("insert or replace into t values (5, 'b', null)");
  exec("insert or ignore into t values (6, 'c', null)");
  EXPECT_EQ(scalar("select count(*) from t"), 3);  // 1, 3 and 5
  EXPECT_EQ(scalar("select id from t where code = 'b'"), 5);
  // In a transaction: a key freed by a pending delete is free; a pending insert holds one.
  exec("begin");
  exec("delete from t where id = 3");
  exec("insert into t values (7, 'c', null)");
  fails("insert into t values (8, 'c', null)", StatusCode::kConstraint, "UNIQUE constraint failed: t (code)");
  exec("update t set code = 'z' where id = 7");
  exec("insert into t values (8, 'c', null)");
  exec("commit");
  EXPECT_EQ(scalar("select id from t where code = 'c'"), 8);
  EXPECT_EQ(scalar("select id from t where code = 'z'"), 7);
  // Upsert finds the conflicting row the same way.
  exec("insert into t values (9, 'z', null) on conflict (code) do update set tag = 'up'");
  EXPECT_EQ(scalar("select count(*) from t where tag = 'up' and id = 7"), 1);
}

TEST_P(LookupSlotTest, IndexedTableReadsTheSameRows) {
  exec("create table t (id integer primary key, a integer, b text)" + using_clause());
  exec("create index t_a on t (a)");
  exec("insert into t values (1, 10, 'x'), (2, 20, 'y'), (3, 10, 'z')");
  exec("update t set a = 20 where id = 3");
  auto rows = query("select id, b from t where a = 20 order by id");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][1].str(), "y");
  EXPECT_EQ(rows[1][1].str(), "z");
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutSlot, LookupSlotTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Lookup" : "CursorFallback"; });

// ---- the memory module's lookup -------------------------------------------------------

class MemLookupTest : public MemDbTest {
 protected:
  std::unique_ptr<VtabTable> make_table() {
    TableSchema ts;
    ts.schema_name = "main";
    ts.name = "pairs";
    ts.module_name = "memory";
    ColumnSchema a;
    a.name = "a";
    a.logical_type = QRS_LT_INTEGER;
    a.primary_key = true;
    a.collation = binary();
    ColumnSchema b = a;
    b.name = "b";
    ColumnSchema v = a;
    v.name = "v";
    v.logical_type = QRS_LT_TEXT;
    v.primary_key = false;
    ts.columns = {a, b, v};
    ts.primary_key = {{0, false}, {1, true}};  // a ASC, b DESC
    return registry_->find_module("memory")->create(ts);
  }
  static void insert(VtabTable& t, int64_t a, int64_t b, const std::string& v) {
    Row row{Value::Integer(a), Value::Integer(b), Value::Text(v)};
    ASSERT_EQ(t.update(RowOp::kInsert, row, {}, ConflictAction::kAbort).outcome, UpdateResult::Outcome::kOk);
  }
  static void remove(VtabTable& t, int64_t a, int64_t b) {
    Row key{Value::Integer(a), Value::Integer(b)};
    ASSERT_EQ(t.update(RowOp::kDelete, {}, key, ConflictAction::kAbort).outcome, UpdateResult::Outcome::kOk);
  }
  static std::string found(VtabTable& t, Row key) {
    Row out;
    LookupStatus s = t.lookup(key, out);
    if (s == LookupStatus::kNotFound) return "none";
    if (s == LookupStatus::kUnsupported) return "unsupported";
    return out[2].str();
  }
};

TEST_F(MemLookupTest, FullKeysAndPrefixes) {
  auto t = make_table();
  insert(*t, 1, 1, "1/1");
  insert(*t, 1, 2, "1/2");
  insert(*t, 2, 5, "2/5");
  EXPECT_EQ(found(*t, {Value::Integer(1), Value::Integer(1)}), "1/1");
  EXPECT_EQ(found(*t, {Value::Integer(1), Value::Integer(3)}), "none");
  // A prefix answers the first row in key order: b is DESC.
  EXPECT_EQ(found(*t, {Value::Integer(1)}), "1/2");
  EXPECT_EQ(found(*t, {Value::Integer(2)}), "2/5");
  EXPECT_EQ(found(*t, {Value::Integer(0)}), "none");
  EXPECT_EQ(found(*t, {Value::Integer(3)}), "none");
  // Numbers compare by value, as an EQ seek does.
  EXPECT_EQ(found(*t, {Value::Real(2.0)}), "2/5");
  Row out;
  Row too_long{Value::Integer(1), Value::Integer(1), Value::Integer(1)};
  try {
    t->lookup(too_long, out);
    FAIL() << "expected a misuse error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kMisuse);
  }
}

TEST_F(MemLookupTest, SeesTheOpenTransaction) {
  auto t = make_table();
  insert(*t, 1, 1, "1/1");
  insert(*t, 1, 2, "1/2");
  auto conn = t->open_connection();
  ASSERT_TRUE(conn);
  conn->begin();
  remove(*t, 1, 2);  // the prefix's first committed row, deleted in the transaction
  EXPECT_EQ(found(*t, {Value::Integer(1)}), "1/1");
  EXPECT_EQ(found(*t, {Value::Integer(1), Value::Integer(2)}), "none");
  insert(*t, 1, 3, "1/3 pending");
  EXPECT_EQ(found(*t, {Value::Integer(1)}), "1/3 pending");
  remove(*t, 1, 3);
  remove(*t, 1, 1);
  EXPECT_EQ(found(*t, {Value::Integer(1)}), "none");
  insert(*t, 4, 0, "4/0 pending");
  EXPECT_EQ(found(*t, {Value::Integer(4)}), "4/0 pending");
  conn->rollback();
  EXPECT_EQ(found(*t, {Value::Integer(1)}), "1/2");
  EXPECT_EQ(found(*t, {Value::Integer(4)}), "none");
}

// A prefix probe leaves the position it found for the next insert (the UNIQUE probe
// followed by the entry's insert); inserts anywhere after a probe still land in order,
// and a duplicate is still refused.
TEST_F(MemLookupTest, InsertsAfterAProbeLandInOrder) {
  auto t = make_table();
  insert(*t, 5, 5, "5/5");  // committed
  auto conn = t->open_connection();
  ASSERT_TRUE(conn);
  conn->begin();
  insert(*t, 1, 5, "1/5");
  insert(*t, 3, 5, "3/5");
  EXPECT_EQ(found(*t, {Value::Integer(2)}), "none");
  insert(*t, 2, 7, "2/7");  // at the probed position
  EXPECT_EQ(found(*t, {Value::Integer(1)}), "1/5");
  insert(*t, 4, 1, "4/1");  // elsewhere: the position is not this key's
  EXPECT_EQ(found(*t, {Value::Integer(1)}), "1/5");
  insert(*t, 1, 9, "1/9");  // same prefix, before (1, 5) in the DESC member
  EXPECT_EQ(found(*t, {Value::Integer(3)}), "3/5");
  Row dup{Value::Integer(3), Value::Integer(5), Value::Text("again")};
  EXPECT_EQ(t->update(RowOp::kInsert, dup, {}, ConflictAction::kAbort).outcome, UpdateResult::Outcome::kConstraint);
  EXPECT_EQ(found(*t, {Value::Integer(5)}), "5/5");
  Row committed_dup{Value::Integer(5), Value::Integer(5), Value::Text("again")};
  EXPECT_EQ(t->update(RowOp::kInsert, committed_dup, {}, ConflictAction::kAbort).outcome,
            UpdateResult::Outcome::kConstraint);
  // The transaction's view, in key order (a ASC, b DESC).
  ScanArgs args;
  args.plan_id = t->best_access_plan(PlanRequest{}).plan_id;
  auto cursor = t->open_cursor(args);
  std::vector<Row> batch;
  std::string seen;
  while (size_t n = cursor->next_batch(batch))
    for (size_t i = 0; i < n; ++i) seen += batch[i][2].str() + " ";
  EXPECT_EQ(seen, "1/9 1/5 2/7 3/5 4/1 5/5 ");
  conn->commit();
  EXPECT_EQ(found(*t, {Value::Integer(2), Value::Integer(7)}), "2/7");
}

}  // namespace
}  // namespace quereus
