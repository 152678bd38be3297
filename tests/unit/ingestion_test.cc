// External row-change ingestion (Database::ingest_external_row_changes, docs/mv-ingestion.md):
// rows a host wrote to module storage itself reach the materialized views, the change
// listeners and, on request, the parent side of the foreign keys.
#include "mem_db_test.h"

#include "catalog/module.h"
#include "main/database_impl.h"

namespace quereus {
namespace {

class IngestionTest : public MemDbTest {
 protected:
  // Writes `row` into table `name` behind the engine's back (as a sync apply would).
  void write_directly(const std::string& name, RowOp op, const Row& row, const Row& key = {}) {
    auto& impl = static_cast<DatabaseImpl&>(*db_);
    auto entry = impl.catalog().find("main", name);
    ASSERT_TRUE(entry);
    UpdateResult r = entry->table->update(op, row, key, ConflictAction::kAbort);
    ASSERT_EQ(r.outcome, UpdateResult::Outcome::kOk);
  }
  int64_t count(const std::string& sql) { return query(sql)[0][0].as_int(); }
};

TEST_F(IngestionTest, ReportedRowsReachTheViewsAndTheListeners) {
  exec("create table src (id integer primary key, g integer, v integer)");
  exec("insert into src values (1, 1, 10), (2, 1, 20)");
  exec("create materialized view big as select id, v from src where v >= 15");
  exec("create materialized view per_g as select g, count(*) as n, sum(v) as total from src group by g");
  std::vector<DataChangeEvent> seen;
  db_->on_data_change([&](const DataChangeEvent& e) { seen.push_back(e); });

  Row r3{Value::Integer(3), Value::Integer(2), Value::Integer(30)};
  Row r1_old{Value::Integer(1), Value::Integer(1), Value::Integer(10)};
  Row r1_new{Value::Integer(1), Value::Integer(1), Value::Integer(99)};
  write_directly("src", RowOp::kInsert, r3);
  write_directly("src", RowOp::kUpdate, r1_new, {Value::Integer(1)});
  // Before the report the views know nothing of the writes.
  EXPECT_EQ(count("select count(*) from big"), 1);
  Status st = db_->ingest_external_row_changes(
      {{"", "src", RowOp::kInsert, {}, r3}, {"main", "src", RowOp::kUpdate, r1_old, r1_new}});
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(count("select count(*) from big"), 3);
  EXPECT_EQ(count("select total from per_g where g = 1"), 119);
  EXPECT_EQ(count("select n from per_g where g = 2"), 1);
  // The reported rows and the views' own changes were announced.
  int src_events = 0, view_events = 0;
  for (const auto& e : seen) (e.table == "src" ? src_events : view_events)++;
  EXPECT_EQ(src_events, 2);
  EXPECT_GE(view_events, 3);

  // capture off: the reported rows are not announced, the views' changes still are.
  seen.clear();
  Row r4{Value::Integer(4), Value::Integer(2), Value::Integer(40)};
  write_directly("src", RowOp::kInsert, r4);
  IngestOptions quiet;
  quiet.capture_changes = false;
  ASSERT_TRUE(db_->ingest_external_row_changes({{"", "src", RowOp::kInsert, {}, r4}}, quiet).ok());
  for (const auto& e : seen) EXPECT_NE(e.table, "src");
  EXPECT_FALSE(seen.empty());
  EXPECT_EQ(count("select n from per_g where g = 2"), 2);
}

TEST_F(IngestionTest, BadReportsAreRefusedBeforeAnyEffect) {
  exec("create table src (id integer primary key, v integer)");
  exec("create materialized view mv as select id, v from src");
  Row good{Value::Integer(1), Value::Integer(1)};
  write_directly("src", RowOp::kInsert, good);
  Status st = db_->ingest_external_row_changes({{"", "src", RowOp::kInsert, {}, good}, {"", "nope", RowOp::kInsert, {}, good}});
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.to_string();
  st = db_->ingest_external_row_changes({{"", "src", RowOp::kInsert, {}, good}, {"", "src", RowOp::kDelete, {}, {}}});
  EXPECT_EQ(st.code(), StatusCode::kMisuse) << st.to_string();
  EXPECT_NE(st.message().find("delete needs the old row"), std::string::npos) << st.to_string();
  st = db_->ingest_external_row_changes({{"", "mv", RowOp::kInsert, {}, good}});
  EXPECT_EQ(st.code(), StatusCode::kMisuse) << st.to_string();
  // Nothing ran: the view still lacks the row.
  EXPECT_EQ(count("select count(*) from mv"), 0);
  ASSERT_TRUE(db_->ingest_external_row_changes({{"", "src", RowOp::kInsert, {}, good}}).ok());
  EXPECT_EQ(count("select count(*) from mv"), 1);
}

TEST_F(IngestionTest, ForeignKeyActionsRunOnlyWhenAsked) {
  exec("pragma foreign_keys = true");
  exec("create table p (id integer primary key)");
  exec("create table c (id integer primary key, pid integer null references p(id) on delete cascade)");
  exec("create table r (id integer primary key, pid integer null references p(id) on delete restrict)");
  exec("insert into p values (1), (2), (3)");
  exec("insert into c values (10, 1), (11, 2)");
  exec("insert into r values (20, 3)");
  Row p1{Value::Integer(1)}, p2{Value::Integer(2)}, p3{Value::Integer(3)};
  // Default: the origin already cascaded; nothing runs here.
  write_directly("p", RowOp::kDelete, {}, p1);
  ASSERT_TRUE(db_->ingest_external_row_changes({{"", "p", RowOp::kDelete, p1, {}}}).ok());
  EXPECT_EQ(count("select count(*) from c"), 2);
  // Asked: the cascade runs through the write path.
  IngestOptions fk;
  fk.apply_foreign_key_actions = true;
  write_directly("p", RowOp::kDelete, {}, p2);
  ASSERT_TRUE(db_->ingest_external_row_changes({{"", "p", RowOp::kDelete, p2, {}}}, fk).ok());
  EXPECT_EQ(count("select count(*) from c where pid = 2"), 0);
  // A RESTRICT fails the batch.
  write_directly("p", RowOp::kDelete, {}, p3);
  Status st = db_->ingest_external_row_changes({{"", "p", RowOp::kDelete, p3, {}}}, fk);
  EXPECT_EQ(st.code(), StatusCode::kConstraint) << st.to_string();
  EXPECT_NE(st.message().find("_fk_r_pid"), std::string::npos) << st.to_string();
}

// Captured rows take part in the commit's global assertions. Throw mode (the default)
// fails the batch and undoes its derived effects; report mode commits the batch — the
// views follow the reported rows — and lists every violated assertion; inside the
// caller's transaction the assertions fire at its COMMIT whatever the mode.
TEST_F(IngestionTest, GlobalAssertionsSeeReportedRowsAndReportModeCollects) {
  exec("create table acct (id integer primary key, bal integer)");
  exec("insert into acct values (1, 10), (2, 20)");
  exec("create materialized view acct_mv as select id, bal from acct");
  exec("create assertion nonneg check (not exists (select 1 from acct where bal < 0))");
  exec("create assertion small check (not exists (select 1 from acct where bal > 1000))");
  Row bad{Value::Integer(3), Value::Integer(-5)};
  write_directly("acct", RowOp::kInsert, bad);
  // Throw: the batch fails, the view does not take the row.
  Status st = db_->ingest_external_row_changes({{"", "acct", RowOp::kInsert, {}, bad}});
  EXPECT_EQ(st.code(), StatusCode::kConstraint) << st.to_string();
  EXPECT_NE(st.message().find("nonneg"), std::string::npos) << st.to_string();
  EXPECT_EQ(count("select count(*) from acct_mv"), 2);
  // Report: the batch commits, the view follows, both violations are listed.
  Row huge{Value::Integer(4), Value::Integer(5000)};
  write_directly("acct", RowOp::kInsert, huge);
  IngestOptions report;
  report.assertion_failure_mode = IngestOptions::AssertionFailureMode::kReport;
  IngestResult result;
  st = db_->ingest_external_row_changes({{"", "acct", RowOp::kInsert, {}, bad}, {"", "acct", RowOp::kInsert, {}, huge}},
                                        report, &result);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(count("select count(*) from acct_mv"), 4);
  ASSERT_EQ(result.assertion_violations.size(), 2u);
  EXPECT_EQ(result.assertion_violations[0].assertion, "nonneg");
  EXPECT_EQ(result.assertion_violations[1].assertion, "small");
  EXPECT_FALSE(result.assertion_violations[0].samples.empty());
  // Capture off: the reported rows drive no assertion.
  exec("delete from acct where id in (3, 4)");
  Row bad5{Value::Integer(5), Value::Integer(-1)};
  write_directly("acct", RowOp::kInsert, bad5);
  IngestOptions quiet;
  quiet.capture_changes = false;
  EXPECT_TRUE(db_->ingest_external_row_changes({{"", "acct", RowOp::kInsert, {}, bad5}}, quiet).ok());
  exec("delete from acct where id = 5");
  // Inside the caller's transaction: report is not honored; COMMIT fails.
  Row bad6{Value::Integer(6), Value::Integer(-2)};
  exec("begin");
  write_directly("acct", RowOp::kInsert, bad6);
  result.assertion_violations.push_back({"stale", {}});
  ASSERT_TRUE(db_->ingest_external_row_changes({{"", "acct", RowOp::kInsert, {}, bad6}}, report, &result).ok());
  EXPECT_TRUE(result.assertion_violations.empty());
  Status commit = db_->exec("commit");
  EXPECT_EQ(commit.code(), StatusCode::kConstraint) << commit.to_string();
}

}  // namespace
}  // namespace quereus
