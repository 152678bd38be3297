// The one write path (write/dml_writer.h) and its seams: every row change a statement
// makes — its own, a foreign-key action's, a REPLACE eviction, an UPSERT's update —
// reaches the row observers with full images, in order, inside the statement; a throwing
// observer fails the statement like a constraint; rollbacks and the commit pipeline
// reach the observers; foreign-key actions are bound when the statement is planned.
#include <string>
#include <vector>

#include "main/database_impl.h"
#include "mem_db_test.h"

namespace quereus {
namespace {

struct Seen {
  std::string table;
  RowOp op;
  std::string old_row, new_row;  // "" when absent
  uint64_t seq;
};

std::string show(const Row* r) {
  if (!r) return "";
  std::string out;
  for (const Value& v : *r) out += (out.empty() ? "" : ",") + (v.is_null() ? std::string("NULL") : v.to_text());
  return out;
}

class Recorder : public RowObserver {
 public:
  void on_row(const ObservedChange& c) override {
    if (fail_on_table == c.table.schema.name) throw Error(StatusCode::kConstraint, "observer refused " + fail_on_table);
    seen.push_back({c.table.schema.name, c.op, show(c.old_row), show(c.new_row), c.seq});
  }
  void rollback_to(uint64_t seq) override {
    rollbacks.push_back(seq);
    while (!seen.empty() && seen.back().seq >= seq) seen.pop_back();
  }
  void flush() override {
    ++flushes;
    flushed += seen.size();
    seen.clear();
  }
  std::vector<Seen> seen;
  std::vector<uint64_t> rollbacks;
  int flushes = 0;
  size_t flushed = 0;
  std::string fail_on_table;
};

class WritePathTest : public MemDbTest {
 protected:
  void SetUp() override {
    MemDbTest::SetUp();
    impl().add_row_observer(&rec_);
  }
  void TearDown() override { impl().remove_row_observer(&rec_); }
  DatabaseImpl& impl() { return static_cast<DatabaseImpl&>(*db_); }
  Recorder rec_;
};

TEST_F(WritePathTest, ObserverSeesFullImagesWithDefaultsAndGeneratedColumns) {
  exec("create table t (id integer primary key, a integer default 7, b integer generated always as (a * 2))");
  rec_.flushes = 0;  // every autocommit statement's commit flushes (CREATE TABLE's too)
  exec("begin");
  exec("insert into t (id) values (1)");
  exec("update t set a = 5 where id = 1");
  exec("delete from t where id = 1");
  ASSERT_EQ(rec_.seen.size(), 3u);
  EXPECT_EQ(rec_.seen[0].op, RowOp::kInsert);
  EXPECT_EQ(rec_.seen[0].old_row, "");
  EXPECT_EQ(rec_.seen[0].new_row, "1,7,14");
  EXPECT_EQ(rec_.seen[1].op, RowOp::kUpdate);
  EXPECT_EQ(rec_.seen[1].old_row, "1,7,14");
  EXPECT_EQ(rec_.seen[1].new_row, "1,5,10");
  EXPECT_EQ(rec_.seen[2].op, RowOp::kDelete);
  EXPECT_EQ(rec_.seen[2].old_row, "1,5,10");
  EXPECT_EQ(rec_.seen[2].new_row, "");
  EXPECT_EQ(rec_.seen[2].seq, 2u);
  exec("commit");
  EXPECT_EQ(rec_.flushes, 1);
  EXPECT_EQ(rec_.flushed, 3u);
}

TEST_F(WritePathTest, ForeignKeyActionsEvictionsAndUpsertsAreObserved) {
  exec("create table p (id integer primary key, u text unique)");
  exec("create table c (id integer primary key, pid integer null references p(id) on delete cascade on update set null)");
  exec("insert into p values (1, 'x'), (2, 'y')");
  exec("insert into c values (10, 1), (11, 2)");
  rec_.flushed = rec_.flushes = 0;
  exec("begin");
  exec("delete from p where id = 1");
  ASSERT_EQ(rec_.seen.size(), 2u);
  EXPECT_EQ(rec_.seen[0].table, "p");
  EXPECT_EQ(rec_.seen[0].op, RowOp::kDelete);
  EXPECT_EQ(rec_.seen[1].table, "c");  // the cascade, after its parent's change
  EXPECT_EQ(rec_.seen[1].op, RowOp::kDelete);
  EXPECT_EQ(rec_.seen[1].old_row, "10,1");
  rec_.seen.clear();
  // REPLACE evicts the holder of u = 'y' (a delete, whose ON DELETE CASCADE follows),
  // then inserts.
  exec("insert or replace into p values (3, 'y')");
  ASSERT_EQ(rec_.seen.size(), 3u);
  EXPECT_EQ(rec_.seen[0].table, "p");
  EXPECT_EQ(rec_.seen[0].op, RowOp::kDelete);
  EXPECT_EQ(rec_.seen[0].old_row, "2,y");
  EXPECT_EQ(rec_.seen[1].table, "c");
  EXPECT_EQ(rec_.seen[2].op, RowOp::kInsert);
  EXPECT_EQ(rec_.seen[2].new_row, "3,y");
  rec_.seen.clear();
  exec("insert into p values (4, 'y') on conflict (u) do update set u = 'z'");
  ASSERT_EQ(rec_.seen.size(), 1u);
  EXPECT_EQ(rec_.seen[0].op, RowOp::kUpdate);
  EXPECT_EQ(rec_.seen[0].old_row, "3,y");
  EXPECT_EQ(rec_.seen[0].new_row, "3,z");
  rec_.seen.clear();
  exec("insert or ignore into p values (3, 'dup')");  // nothing written: nothing observed
  EXPECT_TRUE(rec_.seen.empty());
  exec("rollback");
  EXPECT_EQ(rec_.rollbacks.back(), 0u);
  EXPECT_EQ(rec_.flushes, 0);
}

TEST_F(WritePathTest, ThrowingObserverFailsTheStatementAndUndoesItsRows) {
  exec("create table t (id integer primary key)");
  exec("create table audit (id integer primary key)");
  exec("begin");
  exec("insert into t values (1)");
  rec_.fail_on_table = "audit";
  fails("insert into audit values (1)", StatusCode::kConstraint, "observer refused audit");
  rec_.fail_on_table.clear();
  exec("insert into t values (2)");
  exec("commit");
  auto rows = query("select count(*) from audit");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as_int(), 0);
  rows = query("select count(*) from t");
  EXPECT_EQ(rows[0][0].as_int(), 2);
  EXPECT_EQ(rec_.flushed, 2u);
}

TEST_F(WritePathTest, FailedStatementAndSavepointRollbackReachTheObservers) {
  exec("create table t (id integer primary key, v integer check (v > 0))");
  exec("begin");
  exec("insert into t values (1, 1)");
  // The second row fails its CHECK: the statement's first row is undone and so is its
  // observation.
  fails("insert into t values (2, 1), (3, 0)", StatusCode::kConstraint, "CHECK");
  ASSERT_EQ(rec_.seen.size(), 1u);
  EXPECT_EQ(rec_.rollbacks.back(), 1u);
  exec("savepoint s");
  exec("insert into t values (4, 4)");
  exec("rollback to s");
  EXPECT_EQ(rec_.seen.size(), 1u);
  exec("insert into t values (5, 5)");
  exec("commit");
  EXPECT_EQ(rec_.flushed, 2u);
}

TEST_F(WritePathTest, FlushFailureRollsTheTransactionBack) {
  struct Refuser : RowObserver {
    void on_row(const ObservedChange&) override {}
    void flush() override { throw Error(StatusCode::kConstraint, "maintenance refused the commit"); }
  } refuser;
  exec("create table t (id integer primary key)");
  impl().add_row_observer(&refuser);
  exec("begin");
  exec("insert into t values (1)");
  fails("commit", StatusCode::kConstraint, "maintenance refused the commit");
  impl().remove_row_observer(&refuser);
  EXPECT_FALSE(db_->in_transaction());
  auto rows = query("select count(*) from t");
  EXPECT_EQ(rows[0][0].as_int(), 0);
}

// A statement planned before a cascading child existed is re-planned when the schema
// moves, so the child's action runs with bindings made at plan time (its SET DEFAULT).
TEST_F(WritePathTest, CascadeBindingsFollowTheSchema) {
  exec("create table p (id integer primary key)");
  exec("insert into p values (1), (2)");
  std::vector<std::unique_ptr<Statement>> del;
  ASSERT_TRUE(db_->prepare("delete from p where id = ?", &del).ok());
  exec("create table c (id integer primary key, pid integer default 2 references p(id) on delete set default)");
  exec("insert into c values (10, 1)");
  ASSERT_TRUE(del[0]->bind(1, Value::Integer(1)).ok());
  bool has = false;
  Status st = del[0]->step(&has);
  ASSERT_TRUE(st.ok()) << st.to_string();
  auto rows = query("select pid from c");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as_int(), 2);
}

// A key that cannot be enforced, or a child whose expressions no longer bind, is
// reported when an action reaches it — never when the parent is merely written.
TEST_F(WritePathTest, CascadeProblemsSurfaceOnlyWhereTheActionRuns) {
  exec("create table p (a integer primary key)");
  exec("create table c (x integer null, y integer null, foreign key (x, y) references p on delete cascade)");
  exec("insert into p values (1)");  // the broken key is not involved
  exec("create table aux (v integer)");
  exec("create table q (id integer primary key)");
  exec("create table d (id integer primary key, qid integer null references q(id) on delete cascade, "
       "check ((select count(*) from aux) >= 0))");
  exec("insert into q values (1), (2)");
  exec("insert into d values (5, 2)");
  // A table a CHECK reads cannot be dropped from under it (so no binding breaks).
  fails("drop table aux", StatusCode::kConstraint, "referenced by CHECK constraint '_check_0' on table 'd'");
  exec("insert into q values (3)");    // writes q; d's CHECK is not needed
  exec("delete from q where id = 1");  // no row of d references it: nothing cascades
  exec("delete from q where id = 2");  // cascades to d, whose CHECK still binds
  EXPECT_EQ(query("select count(*) from d")[0][0].as_int(), 0);
}

}  // namespace
}  // namespace quereus
