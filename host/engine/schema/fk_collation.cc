#include "schema/fk_collation.h"

#include "common/status.h"
#include "types/collation.h"

namespace quereus {

void check_foreign_key_collations(const Catalog& catalog, const TableSchema& table) {
  for (const ForeignKeySchema& fk : table.foreign_keys) {
    const TableSchema* parent = nullptr;
    std::shared_ptr<TableEntry> entry;
    if (fk.referenced_schema == table.schema_name && iequals(fk.referenced_table, table.name)) {
      parent = &table;
    } else if ((entry = catalog.find(fk.referenced_schema, fk.referenced_table))) {
      parent = &entry->schema;
    }
    if (!parent) continue;
    std::vector<int> parent_cols;
    if (fk.referenced_columns.empty()) {
      for (const KeyColumn& k : parent->primary_key) parent_cols.push_back(k.column);
    } else {
      for (const auto& name : fk.referenced_columns) parent_cols.push_back(parent->find_column(name));
    }
    for (size_t i = 0; i < fk.columns.size() && i < parent_cols.size(); ++i) {
      if (parent_cols[i] < 0) continue;  // an unknown parent column is reported on enforcement
      const ColumnSchema& c = table.columns[fk.columns[i]];
      const ColumnSchema& p = parent->columns[parent_cols[i]];
      if (!c.collation_declared || !p.collation_declared) continue;
      if (iequals(c.collation->name(), p.collation->name())) continue;
      throw Error(StatusCode::kError, "FOREIGN KEY '" + fk.name + "' on table '" + table.name +
                                          "': conflicting collations — child column '" + c.name + "' declares " +
                                          c.collation->name() + ", parent column '" + parent->name + "." + p.name +
                                          "' declares " + p.collation->name());
    }
  }
}

}  // namespace quereus
