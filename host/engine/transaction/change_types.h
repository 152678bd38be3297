// The change events a committed transaction publishes: part of the public embedding API
// (main/database.h includes this header), defined here so the change log
// (transaction/change_events.h) needs nothing from main/.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "types/value.h"

namespace quereus {

// ---- change events (docs/change-events.md)
//
// After a transaction commits, the engine publishes what it changed: one SchemaChangeEvent
// per successful DDL statement, then one DataChangeEvent per row written, in the order
// the writes happened. Nothing is published for a rolled-back write or a failed
// statement. `remote` is true for changes made while the database's change origin was
// set to remote (sync ingestion) and false for local SQL.

enum class DataChangeKind { kInsert, kUpdate, kDelete };
const char* data_change_kind_name(DataChangeKind kind);  // "insert" | "update" | "delete"

struct DataChangeEvent {
  DataChangeKind type = DataChangeKind::kInsert;
  std::string module;  // the table's module, as registered
  std::string schema;  // lower-case
  std::string table;   // as declared, as the table is named at delivery
  // The primary key projected from the event's own image (new_row for insert / update,
  // old_row for delete), under the key the table has at delivery. An update never moves
  // a row: a write that changes the primary key is delivered as delete + insert.
  Row key;
  std::optional<Row> old_row;  // update, delete
  std::optional<Row> new_row;  // insert, update
  // Update only: the columns whose stored value changed (identical type and value
  // counts as unchanged), by their names at delivery.
  std::vector<std::string> changed_columns;
  bool remote = false;
};

enum class SchemaChangeKind { kCreate, kAlter, kDrop };
enum class SchemaObjectKind { kTable, kIndex, kColumn, kView, kAssertion };
const char* schema_change_kind_name(SchemaChangeKind kind);    // "create" | "alter" | "drop"
// "table" | "index" | "column" | "view" | "assertion"
const char* schema_object_kind_name(SchemaObjectKind kind);

struct SchemaChangeEvent {
  SchemaChangeKind type = SchemaChangeKind::kCreate;
  SchemaObjectKind object_type = SchemaObjectKind::kTable;
  std::string module;
  std::string schema;
  std::string object_name;      // the table or index (the table for a column arm)
  std::string old_object_name;  // ALTER TABLE … RENAME TO: the name before
  std::string column_name;      // column arms: the column (the new name for a rename)
  std::string old_column_name;  // RENAME COLUMN: the name before
  // The statement's canonical, schema-qualified text; always set for ALTER TABLE.
  std::string ddl;
  bool remote = false;
};

// One transaction's events as delivered after its commit: schema events first, then
// data events, each in the order they happened.
struct ChangeBatch {
  std::vector<SchemaChangeEvent> schema;
  std::vector<DataChangeEvent> data;
};

using DataChangeListener = std::function<void(const DataChangeEvent&)>;
using SchemaChangeListener = std::function<void(const SchemaChangeEvent&)>;
using ChangeBatchListener = std::function<void(const ChangeBatch&)>;

}  // namespace quereus
