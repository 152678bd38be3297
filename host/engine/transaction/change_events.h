// ChangeLog: the current transaction's change events, and their delivery after commit
// (docs/change-events.md).
//
// The one write path (write/dml_writer) records a data event per row it writes; the
// DDL statements record a schema event each on their success path. The log follows the
// transaction: a statement, savepoint or transaction rollback drops the data events
// recorded since its mark; a failed statement also retracts its schema events. Schema
// events survive a transaction rollback: DDL applies at once (it is not undone by
// ROLLBACK), so the change it announces really happened and is delivered.
//
// An ALTER TABLE inside the transaction rewrites the events already recorded for its
// table so that every delivered event matches the schema at delivery: images reshaped
// (ADD / DROP COLUMN, SET DATA TYPE, …), keys re-projected (ALTER PRIMARY KEY), the
// table relabelled (RENAME TO), changed-column names renamed (RENAME COLUMN).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "transaction/change_types.h"
#include "catalog/table_schema.h"

namespace quereus {

class ChangeLog {
 public:
  struct Mark {
    size_t data = 0;
    size_t schema = 0;
  };

  // Events are recorded only while capturing (some listener is subscribed).
  bool capturing() const { return capturing_; }
  void set_capturing(bool on) { capturing_ = on; }
  bool remote() const { return remote_; }
  bool set_remote(bool remote) { return std::exchange(remote_, remote); }

  // Data events, recorded after the module applied the write. `table` is the table's
  // schema at the time of the write.
  void record_insert(const TableSchema& table, const Row& row);
  void record_delete(const TableSchema& table, const Row& row);
  // An update whose primary key changed (under the key columns' collations) is recorded
  // as delete(old) + insert(new).
  void record_update(const TableSchema& table, const Row& old_row, const Row& new_row);
  void record_schema(SchemaChangeEvent event);

  Mark mark() const { return {data_.size(), schema_.size()}; }
  // Drops the data events recorded after `m` (a rolled-back statement or savepoint).
  void rollback_data(const Mark& m);
  // Drops the schema events recorded after `m` (a failed DDL statement).
  void retract_schema(const Mark& m);
  // Drops every data event (a rolled-back transaction); schema events stay.
  void clear_data() { data_.clear(); }
  bool empty() const { return data_.empty() && schema_.empty(); }
  // Moves the recorded events out, leaving the log empty.
  ChangeBatch take();

  // ---- keeping recorded events as-of-delivery across ALTER TABLE
  // RENAME TO: events on schema.old_name now name new_name.
  void rename_table(const std::string& schema, const std::string& old_name, const std::string& new_name);
  // Any arm that changed the table's columns or key: each recorded image of the table
  // goes through `to_new` (best-effort: an image it throws on keeps its values, padded
  // or cut to the new width), then key and changed columns are derived again under
  // `now`. A null `to_new` keeps the images (RENAME COLUMN, ALTER PRIMARY KEY).
  void reshape_table(const TableSchema& now, const std::function<Row(const Row&)>& to_new);

 private:
  DataChangeEvent& start(const TableSchema& table, DataChangeKind kind);

  bool capturing_ = false;
  bool remote_ = false;
  std::vector<DataChangeEvent> data_;
  std::vector<SchemaChangeEvent> schema_;
};

// A schema event about `table` (or one of its indexes / columns): module and schema
// from the table, `object_name` the table unless an index is meant.
SchemaChangeEvent schema_event(SchemaChangeKind type, SchemaObjectKind object, const TableSchema& table,
                               std::string ddl, std::string object_name = {});

// A schema event about an object that belongs to no module (a view, an assertion).
SchemaChangeEvent object_event(SchemaChangeKind type, SchemaObjectKind object, std::string schema, std::string name,
                               std::string ddl);

// The subscribers and the delivery of a committed batch.
class ChangeListeners {
 public:
  uint64_t add_data(DataChangeListener l);
  uint64_t add_schema(SchemaChangeListener l);
  uint64_t add_batch(ChangeBatchListener l);
  bool remove(uint64_t id);
  bool any() const { return !data_.empty() || !schema_.empty() || !batch_.empty(); }
  // Calls every listener: batch listeners first with the whole batch, then the schema
  // listeners per schema event, then the data listeners per data event. A throwing
  // listener is logged and skipped.
  void deliver(const ChangeBatch& batch) const;

 private:
  template <class F>
  struct Entry {
    uint64_t id;
    F fn;
  };
  uint64_t next_id_ = 1;
  std::vector<Entry<DataChangeListener>> data_;
  std::vector<Entry<SchemaChangeListener>> schema_;
  std::vector<Entry<ChangeBatchListener>> batch_;
};

}  // namespace quereus
