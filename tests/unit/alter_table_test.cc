// ALTER TABLE end to end: the memory module's alter_table hook (ABI 1.2), and
// the engine's fallback for a module without it (schema-only arms run,
// data-affecting ones are refused).
#include <memory>
#include <string>

#include "catalog/registry.h"
#include "mem_db_test.h"
#include "catalog/module.h"

namespace quereus {
namespace {

// A module over the memory module whose tables do not implement alter_table (as
// a plugin built against ABI 1.1, whose table vtable has no such slot).
class NoHookTable : public VtabTable {
 public:
  explicit NoHookTable(std::unique_ptr<VtabTable> inner) : inner_(std::move(inner)) {}
  PlanResult best_access_plan(const PlanRequest& req) override { return inner_->best_access_plan(req); }
  std::unique_ptr<VtabCursor> open_cursor(const ScanArgs& args) override { return inner_->open_cursor(args); }
  UpdateResult update(RowOp op, std::span<const Value> values, std::span<const Value> old_key,
                      ConflictAction on_conflict) override {
    return inner_->update(op, values, old_key, on_conflict);
  }
  std::unique_ptr<VtabConnection> open_connection() override { return inner_->open_connection(); }

 private:
  std::unique_ptr<VtabTable> inner_;
};

class NoHookModule : public VtabModule {
 public:
  explicit NoHookModule(std::shared_ptr<VtabModule> inner) : inner_(std::move(inner)) {}
  std::unique_ptr<VtabTable> create(const TableSchema& s) override {
    return std::make_unique<NoHookTable>(inner_->create(s));
  }
  std::unique_ptr<VtabTable> connect(const TableSchema& s) override {
    return std::make_unique<NoHookTable>(inner_->connect(s));
  }
  void destroy(const std::string& schema, const std::string& table) override { inner_->destroy(schema, table); }
  ModuleCapabilities capabilities() const override { return inner_->capabilities(); }

 private:
  std::shared_ptr<VtabModule> inner_;
};

class AlterTableTest : public MemDbTest {
 protected:
  void SetUp() override {
    MemDbTest::SetUp();
    registry_->add_module("nohook", std::make_shared<NoHookModule>(registry_->find_module("memory")), "test");
  }
};

TEST_F(AlterTableTest, ModuleWithoutHookRunsSchemaOnlyArmsAndRefusesTheRest) {
  exec(
      "create table t (id integer primary key, v text null, n integer null, "
      "constraint c1 check (id > 0)) using nohook");
  exec("insert into t values (1, 'a', 1)");
  // Schema-only arms work.
  exec("alter table t rename column v to w");
  exec("alter table t alter column w set default 'z'");
  exec("alter table t alter column w drop not null");
  exec("alter table t rename constraint c1 to c2");
  exec("alter table t add constraint c3 check (id < 100)");
  exec("alter table t drop constraint c3");
  exec("insert into t (id, n) values (2, 3)");
  auto rows = query("select id, w from t order by id");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][1].str(), "z");
  // Data-affecting arms are refused, and nothing changes.
  fails("alter table t add column m integer null", StatusCode::kUnsupported, "ADD COLUMN");
  fails("alter table t drop column w", StatusCode::kUnsupported, "DROP COLUMN");
  fails("alter table t alter column n set data type text", StatusCode::kUnsupported, "SET DATA TYPE");
  fails("alter table t alter column w set not null", StatusCode::kUnsupported, "SET NOT NULL");
  fails("alter table t alter primary key (w)", StatusCode::kUnsupported, "ALTER PRIMARY KEY");
  rows = query("select count(*) from table_info('t')");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as_int(), 3);
  // A retype between aliases of one logical type is schema-only.
  exec("alter table t alter column w set data type varchar(10)");
}

TEST_F(AlterTableTest, RefusedRetypeLeavesStorageAndCatalogUntouched) {
  exec("create table t (id integer primary key, v text)");
  exec("insert into t values (1, '10'), (2, 'abc')");
  fails("alter table t alter column v set data type integer", StatusCode::kMismatch, "Cannot convert value 'abc'");
  auto rows = query("select v from t order by id");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][0].type(), ValueType::kText);
  rows = query("select type from table_info('t') where name = 'v'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].str(), "TEXT");
}

TEST_F(AlterTableTest, PendingRowsFollowAddAndDropColumn) {
  exec("create table t (id integer primary key, v text)");
  exec("insert into t values (1, 'a')");
  exec("begin");
  exec("insert into t values (2, 'b')");
  exec("alter table t add column n integer null default 5");
  exec("insert into t values (3, 'c', 6)");
  exec("alter table t drop column v");
  auto rows = query("select id, n from t order by id");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][1].as_int(), 5);
  EXPECT_EQ(rows[2][1].as_int(), 6);
  exec("rollback");
  // DDL survives the rollback; the pending rows do not.
  rows = query("select * from t order by id");
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(rows[0].size(), 2u);
  EXPECT_EQ(rows[0][1].as_int(), 5);
}

TEST_F(AlterTableTest, CollationRekeyJudgesTheTransactionsEffectiveRows) {
  exec("create table t (k text collate binary primary key, v text)");
  exec("insert into t values ('A', 'x')");
  exec("begin");
  exec("insert into t values ('a', 'y')");
  fails("alter table t alter column k set collate nocase", StatusCode::kConstraint,
        "collides under the new key definition");
  exec("delete from t where k = 'A'");
  exec("alter table t alter column k set collate nocase");
  exec("commit");
  auto rows = query("select k, v from t");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].str(), "a");
  rows = query("select k from t where k = 'A'");
  ASSERT_EQ(rows.size(), 1u);
}

TEST_F(AlterTableTest, RenameTableMovesStorageAndFollowsForeignKeys) {
  exec("create table p (id integer primary key)");
  exec(
      "create table c (id integer primary key, pid integer null references "
      "p(id))");
  exec("insert into p values (1)");
  exec("alter table p rename to p2");
  auto rows = query("select referenced_table from foreign_key_info('c')");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].str(), "p2");
  rows = query("select id from p2");
  ASSERT_EQ(rows.size(), 1u);
  // The old name is free again, with fresh storage.
  exec("create table p (x integer primary key)");
  rows = query("select count(*) from p");
  EXPECT_EQ(rows[0][0].as_int(), 0);
  fails("alter table p rename to p2", StatusCode::kError, "already exists");
}

// Renames rewrite private copies of the catalog's expressions (CHECK, DEFAULT, generated
// column, partial-index WHERE, view body, assertion body) and install them; each keeps
// working once the statements that declared it are gone.
TEST_F(AlterTableTest, RenamesKeepChecksDefaultsAndDependentsWorking) {
  exec(
      "create table t (id integer primary key, a integer check (a > 0), b integer default (1 + 2), "
      "g integer generated always as (a * 2))");
  exec("create index t_big on t (b) where a > 5");
  exec("create view v as select id, a from t where a > 1");
  exec("create assertion t_small check (not exists (select 1 from t where b > 100))");
  exec("alter table t rename column a to x");
  exec("insert into t (id, x) values (1, 5)");
  auto rows = query("select b, g from t");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as_int(), 3);
  EXPECT_EQ(rows[0][1].as_int(), 10);
  fails("insert into t (id, x) values (2, 0)", StatusCode::kConstraint, "CHECK constraint failed");
  rows = query("select sql from schema() where name = 'v'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].str(), "create view v as select id, x from t where x > 1");

  exec("alter table t rename to t2");
  rows = query("select id, x from v");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][1].as_int(), 5);
  exec("insert into t2 (id, x) values (2, 7)");
  EXPECT_EQ(query("select count(*) from t2 where x > 5")[0][0].as_int(), 1);  // the partial index's rows
  fails("insert into t2 (id, x, b) values (3, 1, 200)", StatusCode::kConstraint, "Integrity assertion failed: t_small");
  rows = query("select violation_sql from assertion_info() where name = 't_small'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].str(), "select 1 where not (not exists (select 1 from t2 where b > 100))");

  // ADD COLUMN and SET DEFAULT own their expressions too.
  exec("alter table t2 add column c integer default (2 * 2) check (c < 10)");
  exec("insert into t2 (id, x) values (4, 1)");
  EXPECT_EQ(query("select c from t2 where id = 4")[0][0].as_int(), 4);
  fails("insert into t2 (id, x, c) values (5, 1, 20)", StatusCode::kConstraint, "CHECK constraint failed");
  exec("alter table t2 alter column c set default (5 + 1)");
  exec("insert into t2 (id, x) values (6, 1)");
  EXPECT_EQ(query("select c from t2 where id = 6")[0][0].as_int(), 6);
}

// DROP COLUMN asks the rename walker whether another table's CHECK reads the column
// through a subquery; the walker renames what it visits, so it runs on a copy and the
// CHECK keeps its text.
TEST_F(AlterTableTest, DropColumnProbeLeavesOtherTablesChecksAlone) {
  exec("create table p (id integer primary key, a integer null, z integer null)");
  exec("create table q (id integer primary key, n integer check (n <= (select count(*) from p where a is not null)))");
  fails("alter table p drop column a", StatusCode::kError, "CHECK constraint '_check_n' on table 'q' references it");
  auto rows = query("select expr from check_constraint_info('q')");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].str(), "n <= (select count(*) from p where a is not null)");
  exec("alter table p drop column z");
  exec("insert into p values (1, 1)");
  exec("insert into q values (1, 1)");
  fails("insert into q values (2, 2)", StatusCode::kConstraint, "CHECK constraint failed");
}

// Errors found while a CREATE TABLE binds an expression it declares point into the
// statement as written (the catalog's copy keeps the source sites).
TEST_F(AlterTableTest, GeneratedColumnErrorPointsIntoTheCreateStatement) {
  fails("create table u (id integer primary key,\n  c integer generated always as (\n    nope + 1))",
        StatusCode::kError,
        "Column 'nope' referenced by generated column 'c' not found in table 'u' (at line 3, column 5)");
}

}  // namespace
}  // namespace quereus
