#include "catalog/catalog.h"

#include <algorithm>
#include <cctype>

#include "common/status.h"

namespace quereus {

int TableSchema::find_column(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i)
    if (iequals(columns[i].name, name)) return static_cast<int>(i);
  return -1;
}

std::string Catalog::key(std::string_view schema, std::string_view name) {
  return to_lower(schema) + "." + to_lower(name);
}

std::shared_ptr<TableEntry> Catalog::find(std::string_view schema, std::string_view name) const {
  auto it = tables_.find(key(schema, name));
  return it == tables_.end() ? nullptr : it->second;
}

void Catalog::add(std::shared_ptr<TableEntry> entry) {
  tables_[key(entry->schema.schema_name, entry->schema.name)] = std::move(entry);
}

void Catalog::remove(std::string_view schema, std::string_view name) { tables_.erase(key(schema, name)); }

void Catalog::reserve(std::string_view kind, std::string_view schema, std::string_view name, std::string owner) {
  reserved_[std::string(kind) + ":" + key(schema, name)] = std::move(owner);
}

void Catalog::release(std::string_view kind, std::string_view schema, std::string_view name) {
  reserved_.erase(std::string(kind) + ":" + key(schema, name));
}

void Catalog::check_unreserved(std::string_view kind, std::string_view schema, std::string_view name) const {
  auto it = reserved_.find(std::string(kind) + ":" + key(schema, name));
  if (it == reserved_.end()) return;
  throw Error(StatusCode::kConstraint,
              std::string(kind == "index" ? "Index '" : "Table '") + std::string(schema) + "." + std::string(name) +
                  "' is held by preserved table '" + it->second +
                  "' (dormant, docs/reconciliation.md): declare that table again to reactivate it, or drop it "
                  "with migrate.drop, before reusing the name");
}

std::vector<std::shared_ptr<TableEntry>> Catalog::tables() const {
  std::vector<std::shared_ptr<TableEntry>> out;
  for (auto& [k, v] : tables_) out.push_back(v);
  return out;
}

std::shared_ptr<const ViewEntry> Catalog::find_view(std::string_view schema, std::string_view name) const {
  auto it = views_.find(key(schema, name));
  return it == views_.end() ? nullptr : it->second;
}

void Catalog::add_view(std::shared_ptr<const ViewEntry> view) {
  views_[key(view->schema_name, view->name)] = std::move(view);
}

void Catalog::remove_view(std::string_view schema, std::string_view name) { views_.erase(key(schema, name)); }

std::vector<std::shared_ptr<const ViewEntry>> Catalog::views() const {
  std::vector<std::shared_ptr<const ViewEntry>> out;
  for (auto& [k, v] : views_) out.push_back(v);
  return out;
}

bool Catalog::has_schema(std::string_view schema) const {
  std::string s = to_lower(schema);
  return s == "main" || s == "temp" || std::find(schemas_.begin(), schemas_.end(), s) != schemas_.end();
}

void Catalog::add_schema(std::string_view schema) {
  if (!has_schema(schema)) schemas_.push_back(to_lower(schema));
}

void Catalog::remove_schema(std::string_view schema) {
  std::string s = to_lower(schema);
  schemas_.erase(std::remove(schemas_.begin(), schemas_.end(), s), schemas_.end());
}

std::vector<std::string> Catalog::schemas() const {
  std::vector<std::string> out{"main", "temp"};
  out.insert(out.end(), schemas_.begin(), schemas_.end());
  return out;
}

}  // namespace quereus
