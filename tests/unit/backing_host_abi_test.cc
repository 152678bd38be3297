// The ABI 1.5 backing-host slots (abi.h qrs_table_vtable.apply_maintenance /
// replace_contents, qrs_module_capabilities.backing_host) across the host adapter: ops,
// reported changes and replacement rows cross the boundary intact; errors come back with
// the plugin's status and message, and an exception the host's own callback raised comes
// back as itself; a table keeping the C++ defaults and a plugin built against 1.4 (its
// table vtable ends before the slots, its capabilities writer knows no backing_host byte)
// both read as "not a backing host", and the 1.4 plugin's implementation is never reached.
// The modules' semantics are the conformance suite's `backing` group.
#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>

#include "catalog/module.h"
#include "older_table_abi.h"
#include "plugin/module_adapter.h"
#include "quereus/sdk.hpp"

namespace quereus {
namespace {

class EmptyCursor : public sdk::Cursor {
 public:
  void next_batch(sdk::RowBatch&) override {}
};

struct Calls {
  int apply = 0;
  int replace = 0;
};

// (k integer primary key, v text) in a std::map; a backing host when `implements`.
class BackingTable : public sdk::Table {
 public:
  BackingTable(bool implements, Calls* calls, std::map<int64_t, std::string>* rows)
      : implements_(implements), calls_(calls), rows_(rows) {}
  std::unique_ptr<sdk::Cursor> open_cursor(const sdk::ScanArgs&) override { return std::make_unique<EmptyCursor>(); }
  sdk::UpdateResult update(sdk::UpdateArgs) override { return sdk::UpdateResult::noop(); }

  void apply_maintenance(std::span<const sdk::MaintenanceOp> ops, sdk::ChangeSink& sink) override {
    if (!implements_) return sdk::Table::apply_maintenance(ops, sink);
    ++calls_->apply;
    for (const sdk::MaintenanceOp& op : ops) {
      if (op.row.empty() || op.row[0].type != QRS_TYPE_INTEGER) throw sdk::Error::misuse("bad key cell");
      int64_t k = op.row[0].u.integer;
      auto it = rows_->find(k);
      std::string old = it == rows_->end() ? std::string() : it->second;
      sdk::Value old_text = sdk::Value::text(old);
      qrs_value old_cells[2] = {op.row[0], old_text.to_c()};
      if (op.kind == sdk::MaintenanceKind::kDeleteKey) {
        if (it == rows_->end()) continue;
        rows_->erase(it);
        sink.deleted(old_cells);
        continue;
      }
      std::string v(op.row[1].u.str.data, op.row[1].u.str.len);
      if (v == "boom") throw sdk::Error::constraint("boom refused");
      if (it != rows_->end() && it->second == v) continue;
      (*rows_)[k] = v;
      if (it == rows_->end()) sink.inserted(op.row); else sink.updated(old_cells, op.row);
    }
  }
  void replace_contents(sdk::RowSource& source) override {
    if (!implements_) return sdk::Table::replace_contents(source);
    ++calls_->replace;
    std::map<int64_t, std::string> fresh;
    for (std::span<const qrs_value> cells; source.next(cells);)
      if (!fresh.emplace(cells[0].u.integer, std::string(cells[1].u.str.data, cells[1].u.str.len)).second)
        throw sdk::Error::constraint("key " + sdk::describe_cells(cells.first(1)) + " twice");
    rows_->swap(fresh);
  }

 private:
  bool implements_;
  Calls* calls_;
  std::map<int64_t, std::string>* rows_;
};

class BackingModule : public sdk::Module {
 public:
  BackingModule(bool implements, Calls* calls, std::map<int64_t, std::string>* rows)
      : implements_(implements), calls_(calls), rows_(rows) {}
  std::unique_ptr<sdk::Table> create(const sdk::TableSchema&) override {
    return std::make_unique<BackingTable>(implements_, calls_, rows_);
  }
  std::unique_ptr<sdk::Table> connect(const sdk::TableSchema& s) override { return create(s); }
  void destroy(std::string_view, std::string_view) override {}
  sdk::Capabilities capabilities() const override {
    sdk::Capabilities c;
    c.backing_host = implements_;
    return c;
  }

 private:
  bool implements_;
  Calls* calls_;
  std::map<int64_t, std::string>* rows_;
};

// A plugin built against SDK 1.4: the table vtable ends before apply_maintenance, and its
// capabilities writer fills a struct that ends before backing_host (the byte was reserved).
using Abi14 = testing::OlderTableAbi<offsetof(qrs_table_vtable, apply_maintenance)>;
void capabilities_14(void* self, qrs_module_capabilities* out) {
  qrs_module_capabilities mine{};
  mine.struct_size = static_cast<uint32_t>(offsetof(qrs_module_capabilities, backing_host));
  sdk::detail::kModuleVtable.capabilities(self, &mine);
  out->persistent = mine.persistent;
  out->scan_snapshot_isolation = mine.scan_snapshot_isolation;
  out->committed_reads = mine.committed_reads;
}
const qrs_module_vtable kModuleVt14 = [] {
  qrs_module_vtable vt = Abi14::kModuleVt;
  vt.capabilities = &capabilities_14;
  return vt;
}();

std::shared_ptr<PluginModule> make_module(bool implements, Calls* calls, std::map<int64_t, std::string>* rows,
                                          bool abi14) {
  return testing::wrap_sdk_module("backing", std::make_shared<BackingModule>(implements, calls, rows),
                                  abi14 ? &kModuleVt14 : nullptr);
}

TableSchema schema() {
  TableSchema ts;
  ts.schema_name = "main";
  ts.name = "mv";
  ColumnSchema k;
  k.name = "k";
  k.logical_type = QRS_LT_INTEGER;
  k.primary_key = true;
  k.collation = std::shared_ptr<const Collation>(&Collation::binary(), [](const Collation*) {});
  ColumnSchema v = k;
  v.name = "v";
  v.logical_type = QRS_LT_TEXT;
  v.primary_key = false;
  ts.columns = {k, v};
  ts.primary_key = {{0, false}};
  return ts;
}

MaintenanceOp upsert(int64_t k, std::string v) {
  return MaintenanceOp{MaintenanceOp::Kind::kUpsert, {Value::Integer(k), Value::Text(std::move(v))}};
}
MaintenanceOp del(int64_t k) { return MaintenanceOp{MaintenanceOp::Kind::kDeleteKey, {Value::Integer(k)}}; }

std::function<bool(Row&)> rows_of(std::vector<Row> rows) {
  auto state = std::make_shared<std::pair<std::vector<Row>, size_t>>(std::move(rows), 0);
  return [state](Row& out) {
    if (state->second == state->first.size()) return false;
    out = state->first[state->second++];
    return true;
  };
}

TEST(BackingHostAbi, CapabilityIsRead) {
  Calls calls;
  std::map<int64_t, std::string> rows;
  EXPECT_TRUE(make_module(true, &calls, &rows, false)->capabilities().backing_host);
  EXPECT_FALSE(make_module(false, &calls, &rows, false)->capabilities().backing_host);
  EXPECT_FALSE(make_module(true, &calls, &rows, /*abi14=*/true)->capabilities().backing_host);
}

TEST(BackingHostAbi, OpsAndChangesCrossTheBoundary) {
  Calls calls;
  std::map<int64_t, std::string> rows;
  auto table = make_module(true, &calls, &rows, false)->create(schema());
  std::vector<MaintenanceOp> ops = {upsert(1, "a"), upsert(2, "b"), upsert(1, "a"), upsert(1, "c"), del(2), del(9)};
  std::vector<BackingChange> out;
  ASSERT_TRUE(table->apply_maintenance(ops, out));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].op, RowOp::kInsert);
  EXPECT_TRUE(out[0].old_row.empty());
  EXPECT_EQ(out[0].new_row.at(1).str(), "a");
  EXPECT_EQ(out[1].op, RowOp::kInsert);
  EXPECT_EQ(out[2].op, RowOp::kUpdate);
  EXPECT_EQ(out[2].old_row.at(1).str(), "a");
  EXPECT_EQ(out[2].new_row.at(1).str(), "c");
  EXPECT_EQ(out[3].op, RowOp::kDelete);
  EXPECT_EQ(out[3].old_row.at(0).as_int(), 2);
  EXPECT_TRUE(out[3].new_row.empty());
  EXPECT_EQ(rows, (std::map<int64_t, std::string>{{1, "c"}}));
  EXPECT_EQ(calls.apply, 1);
}

TEST(BackingHostAbi, ReplaceContentsPullsEveryRow) {
  Calls calls;
  std::map<int64_t, std::string> rows{{1, "old"}};
  auto table = make_module(true, &calls, &rows, false)->create(schema());
  ASSERT_TRUE(table->replace_contents(rows_of({{Value::Integer(5), Value::Text("x")}, {Value::Integer(6), Value::Text("y")}})));
  EXPECT_EQ(rows, (std::map<int64_t, std::string>{{5, "x"}, {6, "y"}}));
}

TEST(BackingHostAbi, ErrorsComeBackWithTheirStatus) {
  Calls calls;
  std::map<int64_t, std::string> rows;
  auto table = make_module(true, &calls, &rows, false)->create(schema());
  std::vector<BackingChange> out;
  std::vector<MaintenanceOp> ops = {upsert(1, "a"), upsert(2, "boom")};
  try {
    table->apply_maintenance(ops, out);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kConstraint);
    EXPECT_NE(std::string(e.what()).find("boom refused"), std::string::npos) << e.what();
  }
  EXPECT_EQ(out.size(), 1u);  // the op applied before the failure was reported
  try {
    table->replace_contents(rows_of({{Value::Integer(5), Value::Text("x")}, {Value::Integer(5), Value::Text("y")}}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kConstraint);
    EXPECT_NE(std::string(e.what()).find("key (5) twice"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rows, (std::map<int64_t, std::string>{{1, "a"}}));
}

TEST(BackingHostAbi, TheHostsOwnExceptionComesBackAsItself) {
  Calls calls;
  std::map<int64_t, std::string> rows{{1, "old"}};
  auto table = make_module(true, &calls, &rows, false)->create(schema());
  int pulled = 0;
  try {
    table->replace_contents([&](Row& out) {
      if (++pulled == 2) throw Error(StatusCode::kInterrupt, "interrupted while refreshing");
      out = {Value::Integer(pulled), Value::Text("x")};
      return true;
    });
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kInterrupt);
    EXPECT_NE(std::string(e.what()).find("interrupted while refreshing"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rows, (std::map<int64_t, std::string>{{1, "old"}}));
}

TEST(BackingHostAbi, DefaultVirtualsReadAsNotABackingHost) {
  Calls calls;
  std::map<int64_t, std::string> rows;
  auto table = make_module(false, &calls, &rows, false)->create(schema());
  std::vector<BackingChange> out;
  std::vector<MaintenanceOp> ops = {upsert(1, "a")};
  EXPECT_FALSE(table->apply_maintenance(ops, out));
  EXPECT_FALSE(table->replace_contents(rows_of({})));
  EXPECT_TRUE(out.empty());
}

TEST(BackingHostAbi, PluginBuiltAgainst14ReadsAsNotABackingHost) {
  Calls calls;
  std::map<int64_t, std::string> rows;
  auto table = make_module(true, &calls, &rows, /*abi14=*/true)->create(schema());
  std::vector<BackingChange> out;
  std::vector<MaintenanceOp> ops = {upsert(1, "a")};
  EXPECT_FALSE(table->apply_maintenance(ops, out));
  EXPECT_FALSE(table->replace_contents(rows_of({{Value::Integer(5), Value::Text("x")}})));
  EXPECT_EQ(calls.apply, 0);  // never reached past the 1.4 struct_size
  EXPECT_EQ(calls.replace, 0);
  EXPECT_TRUE(rows.empty());
}

}  // namespace
}  // namespace quereus
