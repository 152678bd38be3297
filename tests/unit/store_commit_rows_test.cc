// StoreDb's observer rows (modules/store/store_db.h, CommitRows): a pool kept from commit to
// commit. What one commit's observer left in a row (its sidecar) must not reach the next,
// and a commit made while the pool is in use (inside the observer's before_commit) takes
// rows of its own, leaving the outer commit's rows as they were.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../../modules/store/row_codec.h"
#include "../../modules/store/store_db.h"

namespace quereus::store {
namespace {

sdk::TableSchema two_columns(const std::string& name) {
  sdk::TableSchema s;
  s.schema_name = "main";
  s.table_name = name;
  s.columns.push_back(sdk::ColumnDef{"id", "integer", QRS_LT_INTEGER, true, true, sdk::Collation()});
  s.columns.push_back(sdk::ColumnDef{"v", "integer", QRS_LT_INTEGER, false, false, sdk::Collation()});
  sdk::KeyColumn k;
  k.column = 0;
  s.primary_key.push_back(k);
  return s;
}

std::string row_of(int64_t id, int64_t v) { return encode_row(sdk::Row{sdk::Value::integer(id), sdk::Value::integer(v)}); }

// An observer that hands each call's rows to `on_rows`.
struct Observer : CommitObserver {
  std::function<void(std::span<RowWrite>, KvBatch&)> on_rows;
  int calls = 0;
  void before_commit(std::span<RowWrite> rows, KvBatch& out) override {
    ++calls;
    if (on_rows) on_rows(rows, out);
  }
  void after_commit(bool) override {}
};

class store_commit_rows : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("quereus-commit-rows-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    StoreOptions o;
    o.kv.path = dir_;
    o.sync = false;
    db_ = std::make_unique<StoreDb>(o);
    db_->set_observer(&observer_);
  }
  void TearDown() override {
    db_->set_observer(nullptr);
    db_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string sidecar_at(const std::string& key) {
    std::optional<std::string> v = db_->kv().get(key);
    EXPECT_TRUE(v.has_value()) << "no row";
    return v ? std::string(row_sidecar(*v)) : std::string();
  }

  std::string dir_;
  Observer observer_;
  std::unique_ptr<StoreDb> db_;
};

TEST_F(store_commit_rows, a_sidecar_of_one_commit_never_reaches_the_next) {
  std::lock_guard lock(db_->mu());
  auto t = db_->open_table(two_columns("a"), true);
  Txn txn(t);
  db_->add_txn(&txn);
  const std::string k1 = t->prefix + "k1", k2 = t->prefix + "k2";
  observer_.on_rows = [](std::span<CommitObserver::RowWrite> rows, KvBatch&) {
    for (auto& w : rows) w.sidecar = "versions of " + std::string(w.key.substr(9));
  };
  db_->write(txn, k1, row_of(1, 10), false, false);  // autocommit
  std::vector<size_t> seen;
  observer_.on_rows = [&](std::span<CommitObserver::RowWrite> rows, KvBatch&) {
    for (auto& w : rows) seen.push_back(w.sidecar.size());  // what the store hands over
  };
  db_->write(txn, k2, row_of(2, 20), false, false);
  db_->begin(txn);
  db_->write(txn, k1, row_of(1, 11), false, true);
  db_->commit(txn);
  EXPECT_EQ(seen, (std::vector<size_t>{0, 0}));
  EXPECT_EQ(sidecar_at(k2), "");
  EXPECT_EQ(sidecar_at(k1), "");  // rewritten by a commit whose observer left it none
  db_->remove_txn(&txn);
}

TEST_F(store_commit_rows, a_commit_inside_before_commit_leaves_the_outer_rows_as_they_were) {
  std::lock_guard lock(db_->mu());
  auto a = db_->open_table(two_columns("a"), true);
  auto b = db_->open_table(two_columns("b"), true);
  Txn ta(a), tb(b);
  db_->add_txn(&ta);
  db_->add_txn(&tb);
  // Warm the pool past what the outer commit needs, so a nested use of it would show.
  observer_.on_rows = nullptr;
  db_->begin(ta);
  for (int i = 0; i < 100; ++i) db_->write(ta, a->prefix + "w" + std::to_string(100 + i), row_of(i, i), false, false);
  db_->commit(ta);
  const std::string outer1 = a->prefix + "o1", outer2 = a->prefix + "o2", inner = b->prefix + "i1";
  int depth = 0;
  std::vector<std::string> outer_keys_after;
  observer_.on_rows = [&](std::span<CommitObserver::RowWrite> rows, KvBatch&) {
    if (depth++ == 0) {
      const CommitObserver::RowWrite* before = rows.data();
      db_->write(tb, inner, row_of(7, 70), false, false);  // an autocommit, nested
      EXPECT_EQ(rows.data(), before);
      for (auto& w : rows) {
        outer_keys_after.emplace_back(w.key);
        EXPECT_TRUE(w.sidecar.empty()) << "the nested commit wrote into the outer rows";
        w.sidecar = "outer";
      }
    } else {
      ASSERT_EQ(rows.size(), 1u);
      EXPECT_EQ(rows[0].key, inner);
      rows[0].sidecar = "inner";
    }
    --depth;
  };
  db_->begin(ta);
  db_->write(ta, outer1, row_of(1, 1), false, false);
  db_->write(ta, outer2, row_of(2, 2), false, false);
  db_->commit(ta);
  EXPECT_EQ(outer_keys_after, (std::vector<std::string>{outer1, outer2}));
  EXPECT_EQ(sidecar_at(outer1), "outer");
  EXPECT_EQ(sidecar_at(outer2), "outer");
  EXPECT_EQ(sidecar_at(inner), "inner");
  // And the pool is usable again after both.
  observer_.on_rows = [](std::span<CommitObserver::RowWrite> rows, KvBatch&) {
    for (auto& w : rows) w.sidecar = "again";
  };
  db_->write(ta, outer1, row_of(1, 3), false, true);
  EXPECT_EQ(sidecar_at(outer1), "again");
  db_->remove_txn(&ta);
  db_->remove_txn(&tb);
}

// A transaction remembers the committed rows it read (so a write's lookup and the write do
// not read twice, and the observer gets the row the write replaced): any write to the store
// after the read makes it stale, and then the row is read again.
TEST_F(store_commit_rows, a_remembered_read_goes_stale_when_anything_is_written) {
  std::lock_guard lock(db_->mu());
  auto t = db_->open_table(two_columns("a"), true);
  Txn a(t), b(t);
  db_->add_txn(&a);
  db_->add_txn(&b);
  const std::string k = t->prefix + "k1";
  auto value = [](std::string_view row) {
    std::vector<qrs_value> cells;
    decode_row(row, cells, "a");
    return cells.at(1).u.integer;
  };
  db_->write(b, k, row_of(1, 10), false, false);  // autocommit
  db_->begin(a);
  EXPECT_EQ(value(db_->find(a, k).bytes), 10);
  db_->write(b, k, row_of(1, 20), false, true);  // lands between a's reads
  EXPECT_EQ(value(db_->find(a, k).bytes), 20);
  EXPECT_EQ(value(db_->find(a, k).bytes), 20);  // (this one from memory)
  db_->write(a, k, row_of(1, 30), false, true);
  // The observer gets what the write replaced while nothing else was written...
  int64_t replaced = -1;
  bool current = false;
  observer_.on_rows = [&](std::span<CommitObserver::RowWrite> rows, KvBatch&) {
    ASSERT_EQ(rows.size(), 1u);
    ASSERT_NE(rows[0].committed, nullptr);
    current = rows[0].committed->generation == db_->kv().generation();
    if (rows[0].committed->found) replaced = value(rows[0].committed->row);
  };
  db_->begin(b);  // (b joins the group: a's commit waits for it)
  db_->commit(a);
  EXPECT_EQ(replaced, -1);  // not yet committed
  db_->rollback(b);
  EXPECT_TRUE(current);
  EXPECT_EQ(replaced, 20);
  // ... and a stale one after a write landed in between.
  auto check = std::move(observer_.on_rows);
  observer_.on_rows = nullptr;
  db_->begin(a);
  EXPECT_EQ(value(db_->find(a, k).bytes), 30);
  db_->write(a, k, row_of(1, 31), false, true);
  db_->write(b, k, row_of(1, 40), false, true);
  replaced = -1;
  observer_.on_rows = std::move(check);
  db_->commit(a);
  EXPECT_FALSE(current);
  EXPECT_EQ(replaced, 30);  // what it read: for the observer to see it is not current
  db_->remove_txn(&a);
  db_->remove_txn(&b);
}

}  // namespace
}  // namespace quereus::store
