// DmlWriter: the one write path. Every insert, update and delete — from SQL today,
// from views, lenses and sync ingestion later — goes through it: value coercion to
// the declared types, NOT NULL, the module's update call, conflict outcomes.
#pragma once

#include <optional>

#include "core/database_impl.h"
#include "vtab/module.h"

namespace quereus {

class DmlWriter {
 public:
  DmlWriter(DatabaseImpl& db, std::shared_ptr<TableEntry> table);

  // Each returns the stored row (the deleted row for remove), or nullopt when nothing
  // changed (IGNORE, or a key that does not exist). Throws Error on a violation.
  std::optional<Row> insert(Row row, ConflictAction action);
  std::optional<Row> update(const Row& old_row, Row new_row, ConflictAction action);
  std::optional<Row> remove(const Row& old_row);

  // Converts a value to a column's declared type (the write-side coercion).
  static Value coerce(const Value& v, const ColumnSchema& col, const TableSchema& table);

 private:
  void prepare_row(Row& row);
  Row key_of(const Row& row) const;
  std::optional<Row> handle(const UpdateResult& r, ConflictAction action);
  std::string unique_message() const;

  DatabaseImpl& db_;
  std::shared_ptr<TableEntry> table_;
};

}  // namespace quereus
