// Catalog: the tables and views of one database, by schema and name. Tables and views
// share one namespace per schema.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/strings.h"
#include "catalog/table_schema.h"
#include "catalog/module.h"
#include "catalog/lens.h"

namespace quereus {

namespace ast { struct CreateViewStmt; }

struct IndexRuntime;  // write/indexes.h

// A connected table: its schema, the module instance and its transaction participant.
struct TableEntry {
  TableSchema schema;
  std::shared_ptr<VtabModule> module;
  std::unique_ptr<VtabTable> table;
  std::unique_ptr<VtabConnection> connection;  // opened when it first joins a transaction
  bool connection_opened = false;
  bool joined = false;  // participates in the current transaction
  std::optional<int64_t> row_count;  // collected by ANALYZE; absent until then
  // The companion table holding the entries of schema.indexes[i] (same module; not in
  // the catalog's name space). Parallel to schema.indexes.
  std::vector<std::shared_ptr<TableEntry>> index_tables;
  // Per-table write-side state derived from schema.indexes (bound partial predicates,
  // cached probe plans); rebuilt when the indexes change. Null until first written.
  std::shared_ptr<IndexRuntime> index_runtime;
  // This table's resolved FOREIGN KEYs (write/foreign_keys.h FkLink), reused by every
  // writer while the schema version they were resolved at holds. Null until first used.
  std::shared_ptr<const void> fk_links;
  uint64_t fk_links_version = 0;
  // A maintained table whose body no longer plans (a source dropped or reshaped): why.
  // Reads refuse it and maintenance skips it until a REFRESH or a recreate.
  std::string stale;
  std::string qualified_name() const { return schema.schema_name + "." + schema.name; }
};

// A plain view: a named query, planned afresh wherever its name is referenced.
struct ViewEntry {
  std::string schema_name;  // lower-case
  std::string name;         // display casing
  std::vector<std::string> columns;  // explicit column list; empty when none was written
  // The definition, owned by the catalog (a deep copy of the CREATE VIEW, so it
  // outlives the statement that created it; `sql` is its printed text). Never null.
  std::shared_ptr<const ast::CreateViewStmt> definition;
  std::string sql;        // canonical CREATE VIEW text (schema().sql)
  TagSet tags;  // WITH TAGS
  // A logical table (a table of a logical schema, compiled by its lens): the slot. Null
  // for an ordinary view. Such a view is never persisted as a view: the declarations and
  // the applied marker rebuild it at open.
  std::shared_ptr<const LensSlot> lens;
  std::string qualified_name() const { return schema_name + "." + name; }
};

// What a relation name resolves to: a table or a view (exactly one is set).
struct ResolvedRelation {
  std::shared_ptr<TableEntry> table;
  std::shared_ptr<const ViewEntry> view;
};

class Catalog {
 public:
  std::shared_ptr<TableEntry> find(std::string_view schema, std::string_view name) const;
  void add(std::shared_ptr<TableEntry> entry);
  void remove(std::string_view schema, std::string_view name);
  std::vector<std::shared_ptr<TableEntry>> tables() const;
  // `main` and `temp` always exist; other schemas exist once created (APPLY SCHEMA).
  bool has_schema(std::string_view schema) const;
  void add_schema(std::string_view schema);
  void remove_schema(std::string_view schema);  // a created schema; main and temp stay
  std::vector<std::string> schemas() const;  // main, temp, then the created ones

  std::shared_ptr<const ViewEntry> find_view(std::string_view schema, std::string_view name) const;
  void add_view(std::shared_ptr<const ViewEntry> view);
  void remove_view(std::string_view schema, std::string_view name);
  std::vector<std::shared_ptr<const ViewEntry>> views() const;

  // Names held by tables that open-time reconciliation preserved (dormant: stored, not
  // loaded; docs/reconciliation.md): a table, view or index may not take one, or it would
  // meet the dormant table's storage. `kind` is "table" or "index".
  void reserve(std::string_view kind, std::string_view schema, std::string_view name, std::string owner);
  void release(std::string_view kind, std::string_view schema, std::string_view name);
  // Throws CONSTRAINT naming the dormant table when `name` is reserved.
  void check_unreserved(std::string_view kind, std::string_view schema, std::string_view name) const;

 private:
  static std::string key(std::string_view schema, std::string_view name);
  std::map<std::string, std::shared_ptr<TableEntry>> tables_;
  std::map<std::string, std::shared_ptr<const ViewEntry>> views_;
  std::vector<std::string> schemas_;  // created schemas (lower-case), in creation order
  std::map<std::string, std::string> reserved_;  // "kind:schema.name" (lower-case) → the dormant table
};

}  // namespace quereus
