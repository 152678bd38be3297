#include "transaction/change_events.h"

#include <spdlog/spdlog.h>

#include "catalog/catalog.h"
#include "types/compare.h"

namespace quereus {

const char* data_change_kind_name(DataChangeKind kind) {
  switch (kind) {
    case DataChangeKind::kInsert: return "insert";
    case DataChangeKind::kUpdate: return "update";
    case DataChangeKind::kDelete: return "delete";
  }
  return "?";
}

const char* schema_change_kind_name(SchemaChangeKind kind) {
  switch (kind) {
    case SchemaChangeKind::kCreate: return "create";
    case SchemaChangeKind::kAlter: return "alter";
    case SchemaChangeKind::kDrop: return "drop";
  }
  return "?";
}

const char* schema_object_kind_name(SchemaObjectKind kind) {
  switch (kind) {
    case SchemaObjectKind::kTable: return "table";
    case SchemaObjectKind::kIndex: return "index";
    case SchemaObjectKind::kColumn: return "column";
    case SchemaObjectKind::kView: return "view";
    case SchemaObjectKind::kAssertion: return "assertion";
  }
  return "?";
}

namespace {

// The primary key projected from `row`; an image too short for the key keeps `fallback`.
Row project_key(const TableSchema& t, const Row& row, const Row& fallback) {
  Row key;
  key.reserve(t.primary_key.size());
  for (const KeyColumn& k : t.primary_key) {
    if (static_cast<size_t>(k.column) >= row.size()) return fallback;
    key.push_back(row[k.column]);
  }
  return key;
}

bool key_moved(const TableSchema& t, const Row& old_row, const Row& new_row) {
  for (const KeyColumn& k : t.primary_key) {
    const ColumnSchema& c = t.columns[k.column];
    if (compare_values(old_row[k.column], new_row[k.column], c.collation.get()) != 0) return true;
  }
  return false;
}

std::vector<std::string> changed_columns(const TableSchema& t, const Row& old_row, const Row& new_row) {
  std::vector<std::string> out;
  size_t n = std::min({t.columns.size(), old_row.size(), new_row.size()});
  for (size_t i = 0; i < n; ++i)
    if (!(old_row[i] == new_row[i])) out.push_back(t.columns[i].name);
  return out;
}

bool same_table(const DataChangeEvent& e, const std::string& schema, const std::string& table) {
  return e.schema == schema && iequals(e.table, table);
}

}  // namespace

DataChangeEvent& ChangeLog::start(const TableSchema& table, DataChangeKind kind) {
  DataChangeEvent& e = data_.emplace_back();
  e.type = kind;
  e.module = table.module_name;
  e.schema = table.schema_name;
  e.table = table.name;
  e.remote = remote_;
  return e;
}

void ChangeLog::record_insert(const TableSchema& table, const Row& row) {
  DataChangeEvent& e = start(table, DataChangeKind::kInsert);
  e.key = project_key(table, row, {});
  e.new_row = row;
}

void ChangeLog::record_delete(const TableSchema& table, const Row& row) {
  DataChangeEvent& e = start(table, DataChangeKind::kDelete);
  e.key = project_key(table, row, {});
  e.old_row = row;
}

void ChangeLog::record_update(const TableSchema& table, const Row& old_row, const Row& new_row) {
  if (key_moved(table, old_row, new_row)) {
    record_delete(table, old_row);
    record_insert(table, new_row);
    return;
  }
  DataChangeEvent& e = start(table, DataChangeKind::kUpdate);
  e.key = project_key(table, new_row, {});
  e.old_row = old_row;
  e.new_row = new_row;
  e.changed_columns = changed_columns(table, old_row, new_row);
}

void ChangeLog::record_schema(SchemaChangeEvent event) {
  event.remote = remote_;
  schema_.push_back(std::move(event));
}

void ChangeLog::rollback_data(const Mark& m) {
  if (data_.size() > m.data) data_.resize(m.data);
}

void ChangeLog::retract_schema(const Mark& m) {
  if (schema_.size() > m.schema) schema_.resize(m.schema);
}

ChangeBatch ChangeLog::take() {
  ChangeBatch b;
  b.schema.swap(schema_);
  b.data.swap(data_);
  return b;
}

void ChangeLog::rename_table(const std::string& schema, const std::string& old_name, const std::string& new_name) {
  for (DataChangeEvent& e : data_)
    if (same_table(e, schema, old_name)) e.table = new_name;
}

void ChangeLog::reshape_table(const TableSchema& now, const std::function<Row(const Row&)>& to_new) {
  size_t width = now.columns.size();
  auto reshape = [&](std::optional<Row>& image) {
    if (!image) return;
    if (to_new) {
      try {
        *image = to_new(*image);
      } catch (const std::exception& ex) {
        spdlog::debug("change event image of {}.{} kept as recorded: {}", now.schema_name, now.name, ex.what());
      }
    }
    image->resize(width);  // an image the converter could not reshape: NULL-padded / cut
  };
  for (DataChangeEvent& e : data_) {
    if (!same_table(e, now.schema_name, now.name)) continue;
    reshape(e.old_row);
    reshape(e.new_row);
    const std::optional<Row>& own = e.type == DataChangeKind::kDelete ? e.old_row : e.new_row;
    if (own) e.key = project_key(now, *own, e.key);
    if (e.type == DataChangeKind::kUpdate && e.old_row && e.new_row)
      e.changed_columns = changed_columns(now, *e.old_row, *e.new_row);
  }
}

SchemaChangeEvent schema_event(SchemaChangeKind type, SchemaObjectKind object, const TableSchema& table,
                               std::string ddl, std::string object_name) {
  SchemaChangeEvent e;
  e.type = type;
  e.object_type = object;
  e.module = table.module_name;
  e.schema = table.schema_name;
  e.object_name = object_name.empty() ? table.name : std::move(object_name);
  e.ddl = std::move(ddl);
  return e;
}

SchemaChangeEvent object_event(SchemaChangeKind type, SchemaObjectKind object, std::string schema, std::string name,
                               std::string ddl) {
  SchemaChangeEvent e;
  e.type = type;
  e.object_type = object;
  e.schema = std::move(schema);
  e.object_name = std::move(name);
  e.ddl = std::move(ddl);
  return e;
}

// ---------------------------------------------------------------- listeners

uint64_t ChangeListeners::add_data(DataChangeListener l) {
  data_.push_back({next_id_, std::move(l)});
  return next_id_++;
}

uint64_t ChangeListeners::add_schema(SchemaChangeListener l) {
  schema_.push_back({next_id_, std::move(l)});
  return next_id_++;
}

uint64_t ChangeListeners::add_batch(ChangeBatchListener l) {
  batch_.push_back({next_id_, std::move(l)});
  return next_id_++;
}

bool ChangeListeners::remove(uint64_t id) {
  auto drop = [id](auto& v) {
    for (auto it = v.begin(); it != v.end(); ++it)
      if (it->id == id) {
        v.erase(it);
        return true;
      }
    return false;
  };
  return drop(data_) || drop(schema_) || drop(batch_);
}

namespace {

template <class F, class E>
void call(const F& fn, const E& event, const char* what) {
  try {
    fn(event);
  } catch (const std::exception& ex) {
    spdlog::error("{} listener failed: {}", what, ex.what());
  } catch (...) {
    spdlog::error("{} listener failed with a non-standard exception", what);
  }
}

}  // namespace

void ChangeListeners::deliver(const ChangeBatch& batch) const {
  if (batch.schema.empty() && batch.data.empty()) return;
  // Copies: a listener may unsubscribe (itself or another) while being called.
  auto batch_ls = batch_;
  auto schema_ls = schema_;
  auto data_ls = data_;
  for (const auto& l : batch_ls) call(l.fn, batch, "commit");
  for (const SchemaChangeEvent& e : batch.schema)
    for (const auto& l : schema_ls) call(l.fn, e, "schema change");
  for (const DataChangeEvent& e : batch.data)
    for (const auto& l : data_ls) call(l.fn, e, "data change");
}

}  // namespace quereus
