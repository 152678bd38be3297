// The ABI 1.2 alter_table slot across the host adapter (plugin/module_adapter.h): a
// table from a 1.1 plugin (no slot) and one whose C++ layer keeps the default both read
// as "not implemented"; a table implementing it sees the change and calls back into the
// host's fill / convert, whose errors come back with their status and message.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>

#include "older_table_abi.h"
#include "plugin/module_adapter.h"
#include "quereus/sdk.hpp"

namespace quereus {
namespace {

class EmptyCursor : public sdk::Cursor {
 public:
  void next_batch(sdk::RowBatch&) override {}
};

// Records what alter_table saw, and calls the host back when asked to.
struct Seen {
  sdk::SchemaChangeKind kind{};
  std::string name, new_name, table_name;
  size_t columns = 0;
  int64_t converted = 0;
  int64_t filled = 0;
};

class HookTable : public sdk::Table {
 public:
  HookTable(bool implements, Seen* seen) : implements_(implements), seen_(seen) {}
  std::unique_ptr<sdk::Cursor> open_cursor(const sdk::ScanArgs&) override { return std::make_unique<EmptyCursor>(); }
  sdk::UpdateResult update(sdk::UpdateArgs) override { return sdk::UpdateResult::noop(); }
  void alter_table(const sdk::SchemaChange& change, const sdk::TableSchema& new_schema) override {
    if (!implements_) return sdk::Table::alter_table(change, new_schema);
    seen_->kind = change.kind;
    seen_->name = change.name;
    seen_->new_name = change.new_name;
    seen_->table_name = new_schema.table_name;
    seen_->columns = new_schema.columns.size();
    qrs_value in{};
    in.type = QRS_TYPE_INTEGER;
    in.u.integer = 20;
    if (change.kind == sdk::SchemaChangeKind::kSetDataType) seen_->converted = change.convert(in).u.integer;
    if (change.kind == sdk::SchemaChangeKind::kAddColumn) seen_->filled = change.fill(std::span(&in, 1)).u.integer;
  }

 private:
  bool implements_;
  Seen* seen_;
};

class HookModule : public sdk::Module {
 public:
  HookModule(bool implements, Seen* seen) : implements_(implements), seen_(seen) {}
  std::unique_ptr<sdk::Table> create(const sdk::TableSchema&) override {
    return std::make_unique<HookTable>(implements_, seen_);
  }
  std::unique_ptr<sdk::Table> connect(const sdk::TableSchema& s) override { return create(s); }
  void destroy(std::string_view, std::string_view) override {}

 private:
  bool implements_;
  Seen* seen_;
};

// A 1.1 plugin: its table vtable ends before the alter_table slot.
using OldAbi = testing::OlderTableAbi<offsetof(qrs_table_vtable, alter_table)>;

std::shared_ptr<PluginModule> make_module(bool implements, Seen* seen, bool old_abi) {
  return testing::wrap_sdk_module("hook", std::make_shared<HookModule>(implements, seen), old_abi ? &OldAbi::kModuleVt : nullptr);
}

TableSchema schema() {
  TableSchema ts;
  ts.schema_name = "main";
  ts.name = "t";
  ColumnSchema c;
  c.name = "id";
  c.logical_type = QRS_LT_INTEGER;
  c.primary_key = true;
  c.collation = std::shared_ptr<const Collation>(&Collation::binary(), [](const Collation*) {});
  ts.columns.push_back(c);
  ts.primary_key = {{0, false}};
  return ts;
}

TEST(AlterHookAbi, PluginWithoutTheSlotReadsAsNotImplemented) {
  Seen seen;
  auto table = make_module(true, &seen, /*old_abi=*/true)->create(schema());
  SchemaChange change;
  change.kind = QRS_CHANGE_RENAME_COLUMN;
  EXPECT_FALSE(table->alter_table(change, schema()));
  EXPECT_EQ(seen.name, "");  // never called
}

TEST(AlterHookAbi, DefaultVirtualReadsAsNotImplemented) {
  Seen seen;
  auto table = make_module(false, &seen, false)->create(schema());
  SchemaChange change;
  change.kind = QRS_CHANGE_DROP_COLUMN;
  EXPECT_FALSE(table->alter_table(change, schema()));
}

TEST(AlterHookAbi, ChangeAndCallbacksCrossTheBoundary) {
  Seen seen;
  auto table = make_module(true, &seen, false)->create(schema());
  TableSchema ns = schema();
  ns.name = "t2";
  SchemaChange change;
  change.kind = QRS_CHANGE_SET_DATA_TYPE;
  change.column = 0;
  change.name = "id";
  change.convert = [](const Value& v) { return Value::Integer(v.as_int() * 2); };
  EXPECT_TRUE(table->alter_table(change, ns));
  EXPECT_EQ(seen.kind, sdk::SchemaChangeKind::kSetDataType);
  EXPECT_EQ(seen.name, "id");
  EXPECT_EQ(seen.table_name, "t2");
  EXPECT_EQ(seen.columns, 1u);
  EXPECT_EQ(seen.converted, 40);

  change.kind = QRS_CHANGE_ADD_COLUMN;
  change.fill = [](std::span<const Value> row) { return Value::Integer(row[0].as_int() + 1); };
  EXPECT_TRUE(table->alter_table(change, ns));
  EXPECT_EQ(seen.filled, 21);

  // A host callback's error comes back through the module with its status and message.
  change.kind = QRS_CHANGE_SET_DATA_TYPE;
  change.convert = [](const Value&) -> Value { throw Error(StatusCode::kMismatch, "Cannot convert value '20'"); };
  try {
    table->alter_table(change, ns);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kMismatch);
    EXPECT_NE(std::string(e.what()).find("Cannot convert value '20'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace quereus
