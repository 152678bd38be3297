// TEST ONLY — two deliberately broken backing hosts (SDK 1.5), built with the SDK alone.
//
// Both keep each table's rows sorted by primary key, answer writes, prefix scans and
// ordering claims correctly and declare `backing_host`; each breaks one promise of the
// contract (abi.h qrs_table_vtable.apply_maintenance / replace_contents):
//
//   noisy_backing  reports an upsert of a value-identical row as an UPDATE (and rewrites it)
//   torn_backing   replace_contents clears the table and writes rows as it pulls them, so a
//                  duplicate key found part-way leaves the table half replaced
//
// The conformance suite's `backing` group must fail each on exactly that point (ctest
// conformance.broken_backing_host, tests/sdk/expect_backing_failure.sh). Neither takes
// part in transactions. Do not copy this module.
#include <quereus/sdk.hpp>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace sdk = quereus::sdk;

extern const char kBadBackingManifest[];

namespace {

enum class Bug { kNoisyUpsert, kTornReplace };

struct Storage {
  std::vector<sdk::KeyColumn> key;
  size_t columns = 0;
  std::vector<sdk::RowPtr> rows;  // ascending key order

  int compare(const sdk::Row& a, const sdk::Row& b) const {
    for (const sdk::KeyColumn& k : key) {
      int c = sdk::compare_values(a[k.column], b[k.column], k.collation);
      if (c != 0) return k.desc ? -c : c;
    }
    return 0;
  }
  size_t lower(const sdk::Row& row) const {
    return static_cast<size_t>(std::partition_point(rows.begin(), rows.end(),
                                                    [&](const sdk::RowPtr& r) { return compare(*r, row) < 0; }) -
                               rows.begin());
  }
  bool at(size_t pos, const sdk::Row& row) const { return pos < rows.size() && compare(*rows[pos], row) == 0; }
  sdk::Row probe(const sdk::Row& key_cells) const {
    sdk::Row r(columns);
    for (size_t i = 0; i < key.size() && i < key_cells.size(); ++i) r[key[i].column] = key_cells[i];
    return r;
  }
  // Sets (row) or removes (null) the row at `probe`'s key.
  void put(const sdk::Row& probe, sdk::RowPtr row) {
    size_t pos = lower(probe);
    bool there = at(pos, probe);
    if (!row) {
      if (there) rows.erase(rows.begin() + static_cast<std::ptrdiff_t>(pos));
    } else if (there) {
      rows[pos] = std::move(row);
    } else {
      rows.insert(rows.begin() + static_cast<std::ptrdiff_t>(pos), std::move(row));
    }
  }
};

sdk::Row copy(std::span<const qrs_value> cells) {
  sdk::Row r;
  for (const qrs_value& c : cells) r.push_back(sdk::Value::from_c(c));
  return r;
}
std::vector<qrs_value> views(const sdk::Row& r) {
  std::vector<qrs_value> v;
  for (const sdk::Value& x : r) v.push_back(x.to_c());
  return v;
}

class RowsCursor final : public sdk::Cursor {
 public:
  explicit RowsCursor(std::vector<sdk::RowPtr> rows) : rows_(std::move(rows)) {}
  void next_batch(sdk::RowBatch& out) override {
    while (pos_ < rows_.size() && !out.full()) out.add(rows_[pos_++]);
  }

 private:
  std::vector<sdk::RowPtr> rows_;
  size_t pos_ = 0;
};

class BrokenTable final : public sdk::Table {
 public:
  BrokenTable(std::shared_ptr<Storage> s, std::mutex* mu, Bug bug) : s_(std::move(s)), mu_(mu), bug_(bug) {}

  // EQ filters on a leading run of key members are handled; a forward key-prefix ordering
  // is provided (the rows are stored in key order).
  sdk::PlanResult best_access_plan(const sdk::PlanRequest& req) override {
    std::lock_guard lock(*mu_);
    sdk::PlanResult p;
    p.handled.assign(req.filters.size(), false);
    for (const sdk::KeyColumn& k : s_->key) {
      bool found = false;
      for (size_t i = 0; i < req.filters.size() && !found; ++i)
        if (req.filters[i].usable && req.filters[i].op == sdk::FilterOp::kEq && req.filters[i].column == k.column)
          p.handled[i] = found = true;
      if (!found) break;
    }
    bool ordered = req.ordering.size() <= s_->key.size();
    for (size_t i = 0; i < req.ordering.size() && ordered; ++i)
      ordered = req.ordering[i].column == s_->key[i].column && req.ordering[i].desc == s_->key[i].desc;
    p.provides_ordering = ordered && !req.ordering.empty();
    p.cost = p.rows = static_cast<double>(s_->rows.size()) + 1;
    p.explain = "broken backing scan";
    return p;
  }

  std::unique_ptr<sdk::Cursor> open_cursor(const sdk::ScanArgs& args) override {
    std::lock_guard lock(*mu_);
    std::vector<sdk::RowPtr> out;
    for (const sdk::RowPtr& r : s_->rows) {
      bool keep = true;
      for (size_t i = 0; i < args.filters.size() && keep; ++i) {
        if (!args.handled[i]) continue;
        const sdk::Filter& f = args.filters[i];
        sdk::Collation coll;
        for (const sdk::KeyColumn& k : s_->key)
          if (k.column == f.column) coll = k.collation;
        keep = !f.value.is_null() && !(*r)[f.column].is_null() && sdk::compare_values((*r)[f.column], f.value, coll) == 0;
      }
      if (keep) out.push_back(r);
    }
    return std::make_unique<RowsCursor>(std::move(out));
  }

  sdk::UpdateResult update(sdk::UpdateArgs a) override {
    std::lock_guard lock(*mu_);
    Storage& s = *s_;
    if (a.op == sdk::RowOp::kInsert) {
      size_t pos = s.lower(a.values);
      if (s.at(pos, a.values)) {
        if (a.on_conflict == sdk::Conflict::kIgnore) return sdk::UpdateResult::noop();
        if (a.on_conflict != sdk::Conflict::kReplace)
          return sdk::UpdateResult::constraint(sdk::ConstraintKind::kUnique, s.rows[pos]);
        sdk::RowPtr old = s.rows[pos];
        s.rows[pos] = sdk::make_row(std::move(a.values));
        return sdk::UpdateResult::ok(nullptr, old);
      }
      s.rows.insert(s.rows.begin() + static_cast<std::ptrdiff_t>(pos), sdk::make_row(std::move(a.values)));
      return sdk::UpdateResult::ok(nullptr);
    }
    sdk::Row probe = s.probe(a.old_key);
    size_t pos = s.lower(probe);
    if (!s.at(pos, probe)) return sdk::UpdateResult::noop();
    sdk::RowPtr old = s.rows[pos];
    if (a.op == sdk::RowOp::kDelete) {
      s.rows.erase(s.rows.begin() + static_cast<std::ptrdiff_t>(pos));
      return sdk::UpdateResult::ok(old);
    }
    if (s.compare(a.values, *old) != 0) {
      size_t to = s.lower(a.values);
      if (s.at(to, a.values)) {
        if (a.on_conflict == sdk::Conflict::kIgnore) return sdk::UpdateResult::noop();
        if (a.on_conflict != sdk::Conflict::kReplace)
          return sdk::UpdateResult::constraint(sdk::ConstraintKind::kUnique, s.rows[to]);
      }
    }
    s.put(*old, nullptr);
    sdk::Row values = a.values;
    s.put(values, sdk::make_row(std::move(a.values)));
    return sdk::UpdateResult::ok(nullptr);
  }

  void apply_maintenance(std::span<const sdk::MaintenanceOp> ops, sdk::ChangeSink& sink) override {
    std::lock_guard lock(*mu_);
    Storage& s = *s_;
    for (const sdk::MaintenanceOp& op : ops) {
      sdk::Row given = copy(op.row);
      sdk::Row probe = op.kind == sdk::MaintenanceKind::kUpsert ? given : s.probe(given);
      size_t pos = s.lower(probe);
      sdk::RowPtr old = s.at(pos, probe) ? s.rows[pos] : nullptr;
      std::vector<qrs_value> old_cells = old ? views(*old) : std::vector<qrs_value>();
      if (op.kind == sdk::MaintenanceKind::kDeleteKey) {
        if (!old) continue;
        s.put(probe, nullptr);
        sink.deleted(old_cells);
        continue;
      }
      // THE noisy_backing BUG: no value-identical suppression.
      if (old && bug_ != Bug::kNoisyUpsert && sdk::identical(old_cells, op.row)) continue;
      s.put(probe, sdk::make_row(std::move(given)));
      if (old) sink.updated(old_cells, op.row); else sink.inserted(op.row);
    }
  }

  void replace_contents(sdk::RowSource& source) override {
    Storage fresh;
    fresh.key = s_->key;
    fresh.columns = s_->columns;
    if (bug_ == Bug::kTornReplace) {
      // THE torn_backing BUG: the old rows go first and the new ones land as they arrive.
      std::lock_guard lock(*mu_);
      s_->rows.clear();
    }
    for (std::span<const qrs_value> cells; source.next(cells);) {
      sdk::Row row = copy(cells);
      Storage& target = bug_ == Bug::kTornReplace ? *s_ : fresh;
      std::lock_guard lock(*mu_);
      if (target.at(target.lower(row), row))
        throw sdk::Error::constraint("duplicate primary key " + sdk::describe_cells(cells) + " in the replacement rows");
      sdk::Row probe = row;
      target.put(probe, sdk::make_row(std::move(row)));
    }
    if (bug_ != Bug::kTornReplace) {
      std::lock_guard lock(*mu_);
      s_->rows.swap(fresh.rows);
    }
  }

 private:
  std::shared_ptr<Storage> s_;
  std::mutex* mu_;
  Bug bug_;
};

class BrokenModule final : public sdk::Module {
 public:
  explicit BrokenModule(Bug bug) : bug_(bug) {}
  std::unique_ptr<sdk::Table> create(const sdk::TableSchema& schema) override {
    std::lock_guard lock(mu_);
    auto s = std::make_shared<Storage>();
    s->key = schema.primary_key;
    s->columns = schema.columns.size();
    tables_[name(schema.schema_name, schema.table_name)] = s;
    return std::make_unique<BrokenTable>(s, &mu_, bug_);
  }
  std::unique_ptr<sdk::Table> connect(const sdk::TableSchema& schema) override {
    std::lock_guard lock(mu_);
    auto it = tables_.find(name(schema.schema_name, schema.table_name));
    if (it == tables_.end()) throw sdk::Error::not_found("badbacking: no table " + schema.table_name);
    return std::make_unique<BrokenTable>(it->second, &mu_, bug_);
  }
  void destroy(std::string_view schema_name, std::string_view table_name) override {
    std::lock_guard lock(mu_);
    tables_.erase(name(schema_name, table_name));
  }
  sdk::Capabilities capabilities() const override {
    sdk::Capabilities c;
    c.backing_host = true;
    return c;
  }
  std::shared_ptr<sdk::Module> open_database(std::string_view, const std::vector<sdk::Option>&) override {
    return std::make_shared<BrokenModule>(bug_);
  }
  // The lens notification (conformance group 11): torn_backing counts its own tables;
  // noisy_backing claims every relation of the snapshot, its own or not.
  uint32_t notify_lens_deployment(const sdk::LensDeploymentSnapshot& snapshot) override {
    std::lock_guard lock(mu_);
    uint32_t n = 0;
    for (const auto& t : snapshot.tables)
      for (const auto& r : t.relations)
        if (bug_ == Bug::kNoisyUpsert || tables_.count(name(r.schema_name, r.table_name))) ++n;
    return n;
  }

 private:
  static std::string name(std::string_view schema, std::string_view table) {
    std::string n = std::string(schema) + "." + std::string(table);
    for (char& c : n) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return n;
  }
  Bug bug_;
  std::mutex mu_;  // guards every table's storage (the tables hold a pointer to it)
  std::map<std::string, std::shared_ptr<Storage>> tables_;
};

void register_badbacking(sdk::Registrar& r) {
  r.add_module("noisy_backing", std::make_shared<BrokenModule>(Bug::kNoisyUpsert));
  r.add_module("torn_backing", std::make_shared<BrokenModule>(Bug::kTornReplace));
}

}  // namespace

QUEREUS_PLUGIN(kBadBackingManifest, register_badbacking)
