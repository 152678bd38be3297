// Catalog: the tables of one database, by schema and name.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "schema/table_schema.h"
#include "vtab/module.h"

namespace quereus {

// A connected table: its schema, the module instance and its transaction participant.
struct TableEntry {
  TableSchema schema;
  std::shared_ptr<VtabModule> module;
  std::unique_ptr<VtabTable> table;
  std::unique_ptr<VtabConnection> connection;  // opened when it first joins a transaction
  bool connection_opened = false;
  bool joined = false;  // participates in the current transaction
  std::string qualified_name() const { return schema.schema_name + "." + schema.name; }
};

class Catalog {
 public:
  std::shared_ptr<TableEntry> find(std::string_view schema, std::string_view name) const;
  void add(std::shared_ptr<TableEntry> entry);
  void remove(std::string_view schema, std::string_view name);
  std::vector<std::shared_ptr<TableEntry>> tables() const;
  bool has_schema(std::string_view schema) const;

 private:
  static std::string key(std::string_view schema, std::string_view name);
  std::map<std::string, std::shared_ptr<TableEntry>> tables_;
};

std::string to_lower(std::string_view s);
std::string to_upper(std::string_view s);
bool iequals(std::string_view a, std::string_view b);

}  // namespace quereus
