// Committed change events (docs/change-events.md): what is published, when, and in
// which shape, through the embedding API.
#include <string>
#include <vector>

#include "mem_db_test.h"

namespace quereus {
namespace {

// One line per event, e.g. "insert main.t key=[1] new=[1,'a']", for compact assertions.
std::string row_text(const Row& r) {
  std::string s = "[";
  for (size_t i = 0; i < r.size(); ++i) {
    if (i) s += ",";
    s += r[i].is_null() ? "null" : r[i].type() == ValueType::kText ? "'" + r[i].to_text() + "'" : r[i].to_text();
  }
  return s + "]";
}

std::string data_text(const DataChangeEvent& e) {
  std::string s = std::string(data_change_kind_name(e.type)) + " " + e.schema + "." + e.table + " key=" + row_text(e.key);
  if (e.old_row) s += " old=" + row_text(*e.old_row);
  if (e.new_row) s += " new=" + row_text(*e.new_row);
  if (!e.changed_columns.empty()) {
    s += " changed=";
    for (size_t i = 0; i < e.changed_columns.size(); ++i) s += (i ? "," : "") + e.changed_columns[i];
  }
  if (e.remote) s += " remote";
  return s;
}

std::string schema_text(const SchemaChangeEvent& e) {
  std::string s = std::string(schema_change_kind_name(e.type)) + " " + schema_object_kind_name(e.object_type) + " " +
                  e.schema + "." + e.object_name;
  if (!e.old_object_name.empty()) s += " from " + e.old_object_name;
  if (!e.column_name.empty()) s += " column " + e.column_name;
  if (!e.old_column_name.empty()) s += " from " + e.old_column_name;
  if (e.remote) s += " remote";
  return s;
}

class ChangeEventsTest : public MemDbTest {
 protected:
  void SetUp() override {
    MemDbTest::SetUp();
    data_id_ = db_->on_data_change([this](const DataChangeEvent& e) { data_.push_back(data_text(e)); });
    db_->on_schema_change([this](const SchemaChangeEvent& e) {
      schema_.push_back(schema_text(e));
      ddl_.push_back(e.ddl);
    });
    db_->on_commit([this](const ChangeBatch& b) { batches_.push_back(b.schema.size() + b.data.size()); });
  }
  std::vector<std::string> take_data() { return std::exchange(data_, {}); }
  std::vector<std::string> take_schema() {
    ddl_.clear();
    return std::exchange(schema_, {});
  }

  uint64_t data_id_ = 0;
  std::vector<std::string> data_, schema_, ddl_;
  std::vector<size_t> batches_;
};

using Lines = std::vector<std::string>;

TEST_F(ChangeEventsTest, AutocommitWritesPublishOneEventPerRow) {
  exec("create table t (id integer primary key, v text)");
  EXPECT_EQ(take_schema(), Lines{"create table main.t"});
  exec("insert into t values (1, 'a'), (2, 'b')");
  exec("update t set v = 'c' where id = 1");
  exec("delete from t where id = 2");
  EXPECT_EQ(take_data(), (Lines{"insert main.t key=[1] new=[1,'a']", "insert main.t key=[2] new=[2,'b']",
                                "update main.t key=[1] old=[1,'a'] new=[1,'c'] changed=v",
                                "delete main.t key=[2] old=[2,'b']"}));
  EXPECT_EQ(batches_.size(), 4u);  // CREATE and three DML statements: each its own commit
}

TEST_F(ChangeEventsTest, NothingBeforeCommitAndNothingAfterRollback) {
  exec("create table t (id integer primary key, v text)");
  take_schema();
  exec("begin; insert into t values (1, 'a')");
  EXPECT_TRUE(data_.empty()) << "events are delivered only after commit";
  exec("rollback");
  EXPECT_TRUE(take_data().empty());
  exec("begin; insert into t values (1, 'a'); insert into t values (2, 'b'); commit");
  EXPECT_EQ(take_data(), (Lines{"insert main.t key=[1] new=[1,'a']", "insert main.t key=[2] new=[2,'b']"}));
}

TEST_F(ChangeEventsTest, SavepointRollbackDropsItsSliceAndReleaseKeepsIt) {
  exec("create table t (id integer primary key)");
  exec("begin; insert into t values (1); savepoint a; insert into t values (2); rollback to a;"
       " savepoint b; insert into t values (3); release b; commit");
  EXPECT_EQ(take_data(), (Lines{"insert main.t key=[1] new=[1]", "insert main.t key=[3] new=[3]"}));
}

TEST_F(ChangeEventsTest, AFailedStatementPublishesNothingOfItsOwn) {
  exec("create table t (id integer primary key, v integer check (v > 0))");
  exec("begin; insert into t values (1, 1)");
  fails("insert into t values (2, 2), (3, -1)", StatusCode::kConstraint, "CHECK");
  exec("commit");
  EXPECT_EQ(take_data(), Lines{"insert main.t key=[1] new=[1,1]"});
  // Autocommit: the failed statement's first row is undone and unannounced.
  fails("insert into t values (4, 4), (5, -5)", StatusCode::kConstraint, "CHECK");
  EXPECT_TRUE(take_data().empty());
}

TEST_F(ChangeEventsTest, AKeyChangeIsDeleteThenInsert) {
  exec("create table t (id integer primary key, v text)");
  exec("insert into t values (1, 'a')");
  take_data();
  exec("update t set id = 2 where id = 1");
  EXPECT_EQ(take_data(), (Lines{"delete main.t key=[1] old=[1,'a']", "insert main.t key=[2] new=[2,'a']"}));
  // Under the key's own collation 'x' -> 'X' is the same key: an update in place.
  exec("create table n (k text collate nocase primary key, v integer)");
  exec("insert into n values ('x', 1)");
  take_data();
  exec("update n set k = 'X'");
  EXPECT_EQ(take_data(), Lines{"update main.n key=['X'] old=['x',1] new=['X',1] changed=k"});
}

TEST_F(ChangeEventsTest, UnchangedUpdateNamesNoColumns) {
  exec("create table t (id integer primary key, a integer, b integer)");
  exec("insert into t values (1, 1, 1)");
  take_data();
  exec("update t set a = 1, b = 2");
  EXPECT_EQ(take_data(), Lines{"update main.t key=[1] old=[1,1,1] new=[1,1,2] changed=b"});
}

TEST_F(ChangeEventsTest, ReplaceAndCascadesAreEachAnnounced) {
  exec("create table p (id integer primary key)");
  exec("create table c (id integer primary key, pid integer references p(id) on delete cascade)");
  exec("insert into p values (1); insert into c values (10, 1)");
  take_data();
  exec("delete from p where id = 1");
  EXPECT_EQ(take_data(), (Lines{"delete main.p key=[1] old=[1]", "delete main.c key=[10] old=[10,1]"}));
  exec("create table u (id integer primary key, v text unique)");
  exec("insert into u values (1, 'a')");
  take_data();
  exec("insert or replace into u values (2, 'a')");
  EXPECT_EQ(take_data(), (Lines{"delete main.u key=[1] old=[1,'a']", "insert main.u key=[2] new=[2,'a']"}));
  exec("insert or replace into u values (2, 'b')");
  EXPECT_EQ(take_data(), (Lines{"delete main.u key=[2] old=[2,'a']", "insert main.u key=[2] new=[2,'b']"}));
}

TEST_F(ChangeEventsTest, IgnoredRowsAreNotAnnounced) {
  exec("create table t (id integer primary key)");
  exec("insert into t values (1)");
  take_data();
  exec("insert or ignore into t values (1), (2)");
  EXPECT_EQ(take_data(), Lines{"insert main.t key=[2] new=[2]"});
}

TEST_F(ChangeEventsTest, RemoteOriginMarksEvents) {
  exec("create table t (id integer primary key)");
  EXPECT_FALSE(db_->set_remote_origin(true));
  exec("insert into t values (1)");
  exec("create index t_id on t (id)");
  EXPECT_TRUE(db_->set_remote_origin(false));
  exec("insert into t values (2)");
  EXPECT_EQ(take_data(), (Lines{"insert main.t key=[1] new=[1] remote", "insert main.t key=[2] new=[2]"}));
  EXPECT_EQ(take_schema(), (Lines{"create table main.t", "create index main.t_id remote"}));
}

TEST_F(ChangeEventsTest, SchemaEventsForEachDdlWithCanonicalQualifiedText) {
  exec("create table t (id integer primary key, v text)");
  exec("create index t_v on t (v)");
  exec("drop index t_v");
  exec("drop table t");
  EXPECT_EQ(schema_, (Lines{"create table main.t", "create index main.t_v", "drop index main.t_v", "drop table main.t"}));
  EXPECT_EQ(ddl_, (Lines{"create table main.t (id integer primary key, v text)",
                         "create index main.t_v on t (v)", "drop index main.t_v", "drop table main.t"}));
}

TEST_F(ChangeEventsTest, ViewsAndAssertionsAnnounceThemselves) {
  exec("create table t (id integer primary key, v integer)");
  take_schema();
  exec("create view tv as select id from t where v > 0");
  exec("create assertion nonneg check (not exists (select 1 from t where v < 0))");
  EXPECT_EQ(ddl_, (Lines{"create view main.tv as select id from t where v > 0",
                         "create assertion main.nonneg check (not exists (select 1 from t where v < 0))"}));
  exec("drop assertion nonneg");
  exec("drop view tv");
  EXPECT_EQ(schema_, (Lines{"create view main.tv", "create assertion main.nonneg", "drop assertion main.nonneg",
                            "drop view main.tv"}));
  // APPLY SCHEMA runs each statement it generates, and each announces itself.
  take_schema();
  exec("declare schema s2 { table u (k integer primary key) view uv as select k from u }");
  exec("apply schema s2");
  EXPECT_EQ(schema_, (Lines{"create table s2.u", "create view s2.uv"}));
}

TEST_F(ChangeEventsTest, EveryAlterArmReportsItsShape) {
  exec("create table t (id integer primary key, v text, w integer)");
  take_schema();
  exec("alter table t rename column v to v2");
  exec("alter table t add column x integer default 7");
  exec("alter table t drop column x");
  exec("alter table t alter column w set default 3");
  exec("alter table t add constraint w_pos check (w > 0)");
  exec("alter table t drop constraint w_pos");
  exec("alter table t alter primary key (id, w)");
  exec("alter table t rename to t2");
  EXPECT_EQ(schema_, (Lines{"alter column main.t column v2 from v", "alter column main.t column x",
                            "drop column main.t column x", "alter column main.t column w", "alter table main.t",
                            "alter table main.t", "alter table main.t", "alter table main.t2 from t"}));
  EXPECT_EQ(ddl_.front(), "alter table main.t rename column v to v2");
  EXPECT_EQ(ddl_.back(), "alter table main.t rename to t2");
}

TEST_F(ChangeEventsTest, AFailedDdlAnnouncesNothing) {
  exec("create table t (id integer primary key, v text null)");
  exec("insert into t values (1, null)");
  take_schema();
  fails("alter table t alter column v set not null", StatusCode::kConstraint, "");
  fails("create table t (x integer)", StatusCode::kError, "already exists");
  EXPECT_TRUE(take_schema().empty());
}

TEST_F(ChangeEventsTest, DdlSurvivesRollbackAndSoDoesItsEvent) {
  exec("begin; create table t (id integer primary key); insert into t values (1); rollback");
  EXPECT_EQ(take_schema(), Lines{"create table main.t"});
  EXPECT_TRUE(take_data().empty());
}

TEST_F(ChangeEventsTest, EventsRecordedBeforeAnAlterMatchTheSchemaAtDelivery) {
  exec("create table t (id integer primary key, v text, w integer)");
  exec("begin; insert into t values (1, 'a', 10); update t set w = 11 where id = 1");
  exec("alter table t add column x integer default 5");
  exec("alter table t drop column v");
  exec("alter table t rename column w to ww");
  exec("alter table t rename to t2");
  exec("commit");
  EXPECT_EQ(take_data(), (Lines{"insert main.t2 key=[1] new=[1,10,5]",
                                "update main.t2 key=[1] old=[1,10,5] new=[1,11,5] changed=ww"}));
}

TEST_F(ChangeEventsTest, RetypeConvertsRecordedImages) {
  exec("create table t (id integer primary key, v text)");
  exec("begin; insert into t values (1, '42')");
  exec("alter table t alter column v set data type integer");
  // The re-key moves the transaction's uncommitted row too; its event is keyed at delivery.
  exec("alter table t alter primary key (v)");
  exec("commit");
  auto data = take_data();
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0], "insert main.t key=[42] new=[1,42]");
  EXPECT_EQ(take_schema(), (Lines{"create table main.t", "alter column main.t column v", "alter table main.t"}));
}

TEST_F(ChangeEventsTest, SchemaEventsComeBeforeDataEventsInABatch) {
  std::vector<std::string> order;
  db_->on_commit([&](const ChangeBatch& b) {
    for (auto& e : b.schema) order.push_back("schema " + e.object_name);
    for (auto& e : b.data) order.push_back("data " + e.table);
  });
  exec("begin; create table a (id integer primary key); insert into a values (1);"
       " create table b (id integer primary key); insert into b values (1); commit");
  EXPECT_EQ(order, (Lines{"schema a", "schema b", "data a", "data b"}));
}

TEST_F(ChangeEventsTest, ListenerFailuresAreContainedAndReentryIsRefused) {
  exec("create table t (id integer primary key)");
  Status inner;
  db_->on_data_change([&](const DataChangeEvent&) {
    inner = db_->exec("insert into t values (99)");
    throw std::runtime_error("listener bug");
  });
  exec("insert into t values (1)");  // the committer sees success
  EXPECT_EQ(inner.code(), StatusCode::kMisuse);
  EXPECT_EQ(take_data(), Lines{"insert main.t key=[1] new=[1]"});  // the other listener still ran
  auto rows = query("select count(*) from t");
  EXPECT_EQ(rows[0][0].as_int(), 1);
}

TEST_F(ChangeEventsTest, UnsubscribeStopsDelivery) {
  exec("create table t (id integer primary key)");
  EXPECT_TRUE(db_->unsubscribe(data_id_));
  EXPECT_FALSE(db_->unsubscribe(data_id_));
  exec("insert into t values (1)");
  EXPECT_TRUE(data_.empty());
}

TEST(ChangeEventsCapture, NoListenerNoCapture) {
  // Without subscribers the write path records nothing (no cost on the hot path), and a
  // listener added later hears only later writes.
  auto registry = std::make_shared<Registry>();
  PluginLoader loader(registry, {QUEREUS_PLUGIN_DIR});
  PluginSpec spec;
  spec.path = "mem";
  ASSERT_TRUE(loader.load(spec).ok());
  std::unique_ptr<Database> db;
  ASSERT_TRUE(Database::Open(registry, {}, &db).ok());
  ASSERT_TRUE(db->exec("create table t (id integer primary key); insert into t values (1)").ok());
  std::vector<int64_t> seen;
  db->on_data_change([&](const DataChangeEvent& e) { seen.push_back(e.key[0].as_int()); });
  ASSERT_TRUE(db->exec("insert into t values (2)").ok());
  EXPECT_EQ(seen, std::vector<int64_t>{2});
}

}  // namespace
}  // namespace quereus
