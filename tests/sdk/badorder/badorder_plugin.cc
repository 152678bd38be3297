// TEST ONLY — a deliberately misbehaving storage module, built with the SDK alone.
//
// `badorder` keeps each table's rows sorted by primary key and answers writes correctly,
// but its access plan claims the key ordering (forwards or backwards) that a key-ordered
// module could give while its cursors swap neighbouring rows. Nothing else is wrong, so the
// conformance suite must fail it on ordering (ctest conformance.misbehaving_plugin,
// docs/conformance-suite.md). Do not copy this module.
#include <quereus/sdk.hpp>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace sdk = quereus::sdk;

extern const char kBadOrderManifest[];

namespace {

struct Storage {
  std::vector<sdk::KeyColumn> key;
  std::vector<sdk::RowPtr> rows;  // ascending key order

  int compare(const sdk::Row& a, const sdk::Row& b) const {
    for (const sdk::KeyColumn& k : key) {
      int c = sdk::compare_values(a[k.column], b[k.column], k.collation);
      if (c != 0) return k.desc ? -c : c;
    }
    return 0;
  }
  // Position of the first row not before `row`'s key.
  size_t lower(const sdk::Row& row) const {
    return static_cast<size_t>(std::partition_point(rows.begin(), rows.end(),
                                                    [&](const sdk::RowPtr& r) { return compare(*r, row) < 0; }) -
                               rows.begin());
  }
  bool at(size_t pos, const sdk::Row& row) const { return pos < rows.size() && compare(*rows[pos], row) == 0; }
  // A row holding `key` (one cell per key member) in its key columns.
  sdk::Row probe(const sdk::Row& key_cells, size_t columns) const {
    sdk::Row r(columns);
    for (size_t i = 0; i < key.size() && i < key_cells.size(); ++i) r[key[i].column] = key_cells[i];
    return r;
  }
};

class BadCursor final : public sdk::Cursor {
 public:
  BadCursor(std::vector<sdk::RowPtr> rows) : rows_(std::move(rows)) {
    // THE BUG: neighbouring rows swapped.
    for (size_t i = 0; i + 1 < rows_.size(); i += 2) std::swap(rows_[i], rows_[i + 1]);
  }
  void next_batch(sdk::RowBatch& out) override {
    while (pos_ < rows_.size() && !out.full()) out.add(rows_[pos_++]);
  }

 private:
  std::vector<sdk::RowPtr> rows_;
  size_t pos_ = 0;
};

class BadTable final : public sdk::Table {
 public:
  BadTable(std::shared_ptr<Storage> s, size_t columns) : s_(std::move(s)), columns_(columns) {}

  sdk::PlanResult best_access_plan(const sdk::PlanRequest& req) override {
    sdk::PlanResult p;
    p.handled.assign(req.filters.size(), false);
    p.cost = static_cast<double>(s_->rows.size()) + 1;
    p.rows = static_cast<double>(s_->rows.size()) + 1;
    // Claims the ordering when it is a prefix of the key, all forwards or all backwards.
    bool fwd = !req.ordering.empty() && req.ordering.size() <= s_->key.size(), bwd = fwd;
    for (size_t i = 0; i < req.ordering.size() && fwd | bwd; ++i) {
      if (req.ordering[i].column != s_->key[i].column) fwd = bwd = false;
      fwd = fwd && req.ordering[i].desc == s_->key[i].desc;
      bwd = bwd && req.ordering[i].desc != s_->key[i].desc;
    }
    p.provides_ordering = fwd || bwd;
    p.plan_id = bwd ? 1 : 0;
    p.explain = bwd ? "badorder scan (reverse)" : "badorder scan";
    return p;
  }

  std::unique_ptr<sdk::Cursor> open_cursor(const sdk::ScanArgs& args) override {
    std::vector<sdk::RowPtr> rows = s_->rows;
    if (args.plan_id == 1) std::reverse(rows.begin(), rows.end());
    return std::make_unique<BadCursor>(std::move(rows));
  }

  sdk::UpdateResult update(sdk::UpdateArgs a) override {
    Storage& s = *s_;
    if (a.op == sdk::RowOp::kInsert) {
      size_t pos = s.lower(a.values);
      sdk::RowPtr row = sdk::make_row(std::move(a.values));
      if (s.at(pos, *row)) {
        if (a.on_conflict == sdk::Conflict::kIgnore) return sdk::UpdateResult::noop();
        if (a.on_conflict != sdk::Conflict::kReplace)
          return sdk::UpdateResult::constraint(sdk::ConstraintKind::kUnique, s.rows[pos]);
        sdk::RowPtr old = s.rows[pos];
        s.rows[pos] = row;
        return sdk::UpdateResult::ok(row, old);
      }
      s.rows.insert(s.rows.begin() + static_cast<std::ptrdiff_t>(pos), row);
      return sdk::UpdateResult::ok(row);
    }
    sdk::Row probe = s.probe(a.old_key, columns_);
    size_t pos = s.lower(probe);
    if (!s.at(pos, probe)) return sdk::UpdateResult::noop();
    sdk::RowPtr old = s.rows[pos];
    if (a.op == sdk::RowOp::kDelete) {
      s.rows.erase(s.rows.begin() + static_cast<std::ptrdiff_t>(pos));
      return sdk::UpdateResult::ok(old);
    }
    sdk::RowPtr row = sdk::make_row(std::move(a.values));
    if (s.compare(*row, *old) == 0) {
      s.rows[pos] = row;
      return sdk::UpdateResult::ok(row);
    }
    size_t to = s.lower(*row);
    sdk::RowPtr displaced;
    if (s.at(to, *row)) {
      if (a.on_conflict == sdk::Conflict::kIgnore) return sdk::UpdateResult::noop();
      if (a.on_conflict != sdk::Conflict::kReplace)
        return sdk::UpdateResult::constraint(sdk::ConstraintKind::kUnique, s.rows[to]);
      displaced = s.rows[to];
    }
    s.rows.erase(s.rows.begin() + static_cast<std::ptrdiff_t>(pos));
    to = s.lower(*row);
    if (s.at(to, *row)) s.rows[to] = row;
    else s.rows.insert(s.rows.begin() + static_cast<std::ptrdiff_t>(to), row);
    return sdk::UpdateResult::ok(row, displaced);
  }

 private:
  std::shared_ptr<Storage> s_;
  size_t columns_;
};

class BadModule final : public sdk::Module {
 public:
  std::unique_ptr<sdk::Table> create(const sdk::TableSchema& schema) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto s = std::make_shared<Storage>();
    s->key = schema.primary_key;
    tables_[name(schema.schema_name, schema.table_name)] = s;
    return std::make_unique<BadTable>(s, schema.columns.size());
  }
  std::unique_ptr<sdk::Table> connect(const sdk::TableSchema& schema) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tables_.find(name(schema.schema_name, schema.table_name));
    if (it == tables_.end()) throw sdk::Error::not_found("badorder: no table " + schema.table_name);
    return std::make_unique<BadTable>(it->second, schema.columns.size());
  }
  void destroy(std::string_view schema_name, std::string_view table_name) override {
    std::lock_guard<std::mutex> lock(mu_);
    tables_.erase(name(schema_name, table_name));
  }

 private:
  static std::string name(std::string_view schema, std::string_view table) {
    std::string n = std::string(schema) + "." + std::string(table);
    for (char& c : n) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return n;
  }
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Storage>> tables_;
};

void register_badorder(sdk::Registrar& r) { r.add_module("badorder", std::make_shared<BadModule>()); }

}  // namespace

QUEREUS_PLUGIN(kBadOrderManifest, register_badorder)
