// plugins/trigram/trigram_plugin.cc — a third-party-style storage module with a trigram
// index, built against sdk/include only (docs/decompositions.md "Auxiliary access").
//
// `create table t (id integer primary key, body text, …) using trigram` keeps its rows in
// memory, keyed by the INTEGER primary key, with every other TEXT column indexed by the
// byte trigrams of its values. What it shows module authors:
//
//   - access forms (SDK 1.11): best_access_plan answers a FilterOp::kForm filter of form
//     "contains" (the engine reads `col like '%x%'` and `instr(col, x) > 0` that way) and
//     of form "word", a form this plugin adds with a recognizer function
//     `has_word(text, w)` (true when w is one of the text's words: maximal runs of ASCII
//     letters, digits and '_'). The trigram postings give the candidates; each candidate
//     is checked, so the answer is exact;
//   - a dedicated module's mapping advertisements (SDK 1.10): it takes part in tag-built
//     decompositions (the SDK's shared builder) and, for each of its tables that is a
//     member of one, synthesizes an auxiliary-access advertisement — the same table,
//     answering "contains" and "word" over the logical columns its TEXT columns back — so
//     the engine starts a logical read with such a predicate from this table.
//
// `trigram_rows_read()` is the number of stored rows the module's cursors have read
// (examined, not only returned) since the process started: a routed read shows it touched
// only its candidates.
//
// Transactions: one writer at a time (the host's connection); writes go to the table at
// once, with an undo log that ROLLBACK and ROLLBACK TO replay. Nothing is persisted.
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "quereus/mapping_advertisement.hpp"
#include "quereus/sdk.hpp"

extern const char kTrigramManifest[];  // trigram.plugin.json, embedded by CMake

namespace quereus::trigram {
namespace {

namespace sdk = quereus::sdk;

std::atomic<int64_t> g_rows_read{0};

uint32_t gram(std::string_view s, size_t i) {
  return static_cast<uint32_t>(static_cast<unsigned char>(s[i])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(s[i + 1])) << 8 | static_cast<unsigned char>(s[i + 2]);
}

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Whether `w` occurs in `text` as a whole word.
bool has_word(std::string_view text, std::string_view w) {
  if (w.empty()) return false;
  for (size_t at = text.find(w); at != std::string_view::npos; at = text.find(w, at + 1)) {
    const bool before = at == 0 || !word_char(text[at - 1]);
    const bool after = at + w.size() == text.size() || !word_char(text[at + w.size()]);
    if (before && after) return true;
  }
  return false;
}

bool matches(const std::string& form, std::string_view text, std::string_view arg) {
  return form == "contains" ? text.find(arg) != std::string_view::npos : has_word(text, arg);
}

// One table's rows and index. Guarded by `mu`; the undo log belongs to the open
// transaction (one writer).
struct Storage {
  std::mutex mu;
  sdk::TableSchema schema;
  uint32_t key_column = 0;
  std::vector<uint32_t> indexed;  // TEXT columns other than the key
  std::map<int64_t, sdk::RowPtr> rows;
  std::unordered_map<uint64_t, std::set<int64_t>> postings;  // (column << 32 | trigram) → keys
  struct Undo {
    int64_t key;
    sdk::RowPtr before;  // null: the key was absent
  };
  std::vector<Undo> undo;
  std::vector<size_t> savepoints;  // undo size at each open savepoint depth
  bool in_txn = false;

  void index(int64_t key, const sdk::Row& row, bool add) {
    for (uint32_t c : indexed) {
      if (row[c].type() != sdk::ValueType::kText) continue;
      std::string_view s = row[c].as_text();
      for (size_t i = 0; i + 3 <= s.size(); ++i) {
        const uint64_t k = static_cast<uint64_t>(c) << 32 | gram(s, i);
        if (add) {
          postings[k].insert(key);
        } else if (auto it = postings.find(k); it != postings.end()) {
          it->second.erase(key);
          if (it->second.empty()) postings.erase(it);
        }
      }
    }
  }
  // Sets `key` to `row` (null: absent), logging the previous state while a transaction is open.
  void put(int64_t key, sdk::RowPtr row, bool log = true) {
    auto it = rows.find(key);
    sdk::RowPtr before = it == rows.end() ? nullptr : it->second;
    if (log && in_txn) undo.push_back({key, before});
    if (before) index(key, *before, false);
    if (row) {
      index(key, *row, true);
      rows[key] = std::move(row);
    } else if (it != rows.end()) {
      rows.erase(it);
    }
  }
  void undo_to(size_t mark) {
    while (undo.size() > mark) {
      Undo u = std::move(undo.back());
      undo.pop_back();
      put(u.key, std::move(u.before), false);
    }
  }
  // Candidate keys for `arg` in column `c`: the intersection of its trigrams' postings;
  // every key when `arg` is shorter than a trigram.
  std::vector<int64_t> candidates(uint32_t c, std::string_view arg) const {
    std::vector<int64_t> out;
    if (arg.size() < 3) {
      for (const auto& [k, r] : rows) out.push_back(k);
      return out;
    }
    const std::set<int64_t>* smallest = nullptr;
    std::vector<const std::set<int64_t>*> lists;
    for (size_t i = 0; i + 3 <= arg.size(); ++i) {
      auto it = postings.find(static_cast<uint64_t>(c) << 32 | gram(arg, i));
      if (it == postings.end()) return out;
      lists.push_back(&it->second);
      if (!smallest || it->second.size() < smallest->size()) smallest = &it->second;
    }
    for (int64_t k : *smallest) {
      bool all = true;
      for (const auto* l : lists) all = all && (l == smallest || l->count(k));
      if (all) out.push_back(k);
    }
    return out;
  }
};

class TrigramCursor final : public sdk::Cursor {
 public:
  explicit TrigramCursor(std::vector<sdk::RowPtr> rows) : rows_(std::move(rows)) {}
  void next_batch(sdk::RowBatch& out) override {
    while (pos_ < rows_.size() && !out.full()) out.add(rows_[pos_++]);
  }

 private:
  std::vector<sdk::RowPtr> rows_;
  size_t pos_ = 0;
};

class TrigramConnection final : public sdk::Connection {
 public:
  explicit TrigramConnection(std::shared_ptr<Storage> s) : s_(std::move(s)) {}
  void begin() override {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->in_txn = true;
    s_->undo.clear();
    s_->savepoints.clear();
  }
  void commit() override { end(); }
  void rollback() override {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->undo_to(0);
    s_->in_txn = false;
    s_->savepoints.clear();
  }
  void savepoint(uint32_t depth) override {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->savepoints.resize(depth + 1, s_->undo.size());
    s_->savepoints[depth] = s_->undo.size();
  }
  void release_savepoint(uint32_t depth) override {
    std::lock_guard<std::mutex> lock(s_->mu);
    if (depth < s_->savepoints.size()) s_->savepoints.resize(depth);
  }
  void rollback_to_savepoint(uint32_t depth) override {
    std::lock_guard<std::mutex> lock(s_->mu);
    if (depth < s_->savepoints.size()) {
      s_->undo_to(s_->savepoints[depth]);
      s_->savepoints.resize(depth + 1);
    }
  }

 private:
  void end() {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->in_txn = false;
    s_->undo.clear();
    s_->savepoints.clear();
  }
  std::shared_ptr<Storage> s_;
};

// Plan ids: 0 full scan, 1 key point, 2 + i the form filter i.
class TrigramTable final : public sdk::Table {
 public:
  explicit TrigramTable(std::shared_ptr<Storage> s) : s_(std::move(s)) {}

  sdk::PlanResult best_access_plan(const sdk::PlanRequest& req) override {
    std::lock_guard<std::mutex> lock(s_->mu);
    const double n = static_cast<double>(std::max<size_t>(s_->rows.size(), 1));
    sdk::PlanResult r;
    r.handled.assign(req.filters.size(), false);
    r.cost = n;
    r.rows = n;
    r.explain = "trigram full scan";
    for (size_t i = 0; i < req.filters.size(); ++i) {
      const sdk::Filter& f = req.filters[i];
      if (!f.usable) continue;
      if (f.op == sdk::FilterOp::kEq && f.column == s_->key_column) {
        r.handled.assign(req.filters.size(), false);
        r.handled[i] = true;
        r.cost = r.rows = 1;
        r.plan_id = 1;
        r.explain = "trigram key point";
        return r;
      }
      if (f.op == sdk::FilterOp::kForm && (f.form == "contains" || f.form == "word") && indexed(f.column) &&
          r.plan_id == 0) {
        // The candidates' count when the argument is known now, else a guess.
        double est = n / 100 + 1;
        if (f.has_value && f.value.type() == sdk::ValueType::kText)
          est = static_cast<double>(s_->candidates(f.column, f.value.as_text()).size()) + 1;
        r.handled[i] = true;
        r.cost = r.rows = est;
        r.plan_id = 2 + static_cast<int64_t>(i);
        r.explain = "trigram " + f.form + " seek";
      }
    }
    return r;
  }

  std::unique_ptr<sdk::Cursor> open_cursor(const sdk::ScanArgs& args) override {
    std::lock_guard<std::mutex> lock(s_->mu);
    std::vector<sdk::RowPtr> out;
    int64_t read = 0;
    if (args.plan_id == 1) {
      for (const sdk::Filter& f : args.filters)
        if (f.op == sdk::FilterOp::kEq && f.column == s_->key_column && f.value.type() == sdk::ValueType::kInteger) {
          if (auto it = s_->rows.find(f.value.as_integer()); it != s_->rows.end()) {
            out.push_back(it->second);
            ++read;
          }
          break;
        }
    } else if (args.plan_id >= 2 && static_cast<size_t>(args.plan_id - 2) < args.filters.size()) {
      const sdk::Filter& f = args.filters[static_cast<size_t>(args.plan_id - 2)];
      if (f.value.type() == sdk::ValueType::kText) {
        const std::string arg(f.value.as_text());
        for (int64_t k : s_->candidates(f.column, arg)) {
          const sdk::RowPtr& row = s_->rows.at(k);
          ++read;
          const sdk::Value& v = (*row)[f.column];
          if (v.type() == sdk::ValueType::kText && matches(f.form, v.as_text(), arg)) out.push_back(row);
        }
      }  // a NULL (or non-text) argument matches nothing
    } else {
      for (const auto& [k, row] : s_->rows) out.push_back(row);
      read = static_cast<int64_t>(out.size());
    }
    g_rows_read += read;
    return std::make_unique<TrigramCursor>(std::move(out));
  }

  sdk::UpdateResult update(sdk::UpdateArgs a) override {
    std::lock_guard<std::mutex> lock(s_->mu);
    const uint32_t kc = s_->key_column;
    auto key_of = [](const sdk::Value& v) {
      if (v.type() != sdk::ValueType::kInteger) throw sdk::Error::mismatch("trigram: the key must be an INTEGER");
      return v.as_integer();
    };
    if (a.op == sdk::RowOp::kDelete) {
      const int64_t k = key_of(a.old_key.at(0));
      auto it = s_->rows.find(k);
      if (it == s_->rows.end()) return sdk::UpdateResult::noop();
      sdk::RowPtr before = it->second;
      s_->put(k, nullptr);
      return sdk::UpdateResult::ok(before);
    }
    if (a.values.size() != s_->schema.columns.size()) throw sdk::Error::misuse("trigram: row has the wrong width");
    const int64_t k = key_of(a.values[kc]);
    if (a.op == sdk::RowOp::kUpdate) {
      const int64_t old = key_of(a.old_key.at(0));
      if (!s_->rows.count(old)) return sdk::UpdateResult::noop();
      sdk::RowPtr displaced;
      if (k != old) {
        auto clash = s_->rows.find(k);
        if (clash != s_->rows.end()) {
          if (a.on_conflict != sdk::Conflict::kReplace)
            return sdk::UpdateResult::constraint(sdk::ConstraintKind::kUnique, clash->second);
          displaced = clash->second;
        }
        s_->put(old, nullptr);
      }
      sdk::RowPtr row = sdk::make_row(std::move(a.values));
      s_->put(k, row);
      return sdk::UpdateResult::ok(row, displaced);
    }
    sdk::RowPtr displaced;
    if (auto clash = s_->rows.find(k); clash != s_->rows.end()) {
      if (a.on_conflict == sdk::Conflict::kIgnore) return sdk::UpdateResult::noop();
      if (a.on_conflict != sdk::Conflict::kReplace)
        return sdk::UpdateResult::constraint(sdk::ConstraintKind::kUnique, clash->second);
      displaced = clash->second;
    }
    sdk::RowPtr row = sdk::make_row(std::move(a.values));
    s_->put(k, row);
    return sdk::UpdateResult::ok(row, displaced);
  }

  std::unique_ptr<sdk::Connection> open_connection() override { return std::make_unique<TrigramConnection>(s_); }

 private:
  bool indexed(uint32_t c) const { return std::find(s_->indexed.begin(), s_->indexed.end(), c) != s_->indexed.end(); }
  std::shared_ptr<Storage> s_;
};

class TrigramModule final : public sdk::Module {
 public:
  std::unique_ptr<sdk::Table> create(const sdk::TableSchema& schema) override {
    if (schema.primary_key.size() != 1 ||
        schema.columns[schema.primary_key[0].column].logical_type != QRS_LT_INTEGER)
      throw sdk::Error::schema("trigram: table '" + schema.table_name +
                               "' needs a single INTEGER PRIMARY KEY column");
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = tables_[name(schema)];
    if (slot) throw sdk::Error(QRS_ERROR, "trigram: table '" + schema.table_name + "' already exists");
    slot = std::make_shared<Storage>();
    slot->schema = schema;
    slot->key_column = schema.primary_key[0].column;
    for (uint32_t c = 0; c < schema.columns.size(); ++c)
      if (c != slot->key_column && schema.columns[c].logical_type == QRS_LT_TEXT) slot->indexed.push_back(c);
    return std::make_unique<TrigramTable>(slot);
  }
  std::unique_ptr<sdk::Table> connect(const sdk::TableSchema& schema) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tables_.find(name(schema));
    if (it == tables_.end()) throw sdk::Error(QRS_ERROR, "trigram: no table '" + schema.table_name + "'");
    return std::make_unique<TrigramTable>(it->second);
  }
  void destroy(std::string_view schema_name, std::string_view table_name) override {
    std::lock_guard<std::mutex> lock(mu_);
    tables_.erase(lower(std::string(schema_name) + "." + std::string(table_name)));
  }
  sdk::Capabilities capabilities() const override {
    sdk::Capabilities c;
    c.access_forms = true;  // SDK 1.11: plans "contains" / "word" form filters
    return c;
  }

  // The tag-built decompositions its tables take part in, and for each member table an
  // auxiliary-access advertisement of itself over the logical columns its TEXT columns back.
  std::vector<sdk::MappingAdvertisement> mapping_advertisements(std::string_view /*basis_schema*/,
                                                                const std::vector<sdk::BasisTable>& tables) override {
    std::vector<sdk::MappingAdvertisement> out = sdk::advertisements_from_tags(tables);
    std::vector<sdk::MappingAdvertisement> aux;
    for (const sdk::MappingAdvertisement& ad : out) {
      if (ad.role != sdk::AdRole::kPrimaryStorage) continue;
      for (const sdk::AdMember& m : ad.members) {
        const sdk::BasisTable* t = nullptr;
        for (const sdk::BasisTable& b : tables)
          if (b.schema.table_name == m.table_name) t = &b;
        if (!t || m.pivot) continue;
        sdk::MappingAdvertisement a;
        a.id = m.relation_id + "#trigram";
        a.logical_table = ad.logical_table;
        a.role = sdk::AdRole::kAuxiliaryAccess;
        a.anchor_relation_id = m.relation_id;
        a.key_kind = ad.key_kind;
        a.members.push_back(m);
        for (const auto& [logical, basis] : m.columns)
          for (const sdk::ColumnDef& c : t->schema.columns)
            if (lower(c.name) == lower(basis) && c.logical_type == QRS_LT_TEXT)
              a.access.push_back(sdk::AdAccess{{logical}, {"contains", "word"}});
        if (!a.access.empty()) aux.push_back(std::move(a));
      }
    }
    for (auto& a : aux) out.push_back(std::move(a));
    return out;
  }

 private:
  static std::string lower(std::string s) {
    for (char& c : s)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    return s;
  }
  static std::string name(const sdk::TableSchema& s) { return lower(s.schema_name + "." + s.table_name); }
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Storage>> tables_;
};

void register_trigram(sdk::Registrar& r) {
  r.add_module("trigram", std::make_shared<TrigramModule>());
  // has_word(text, w): w is one of text's words. The recognizer of form "word".
  r.add_scalar(
      "has_word", 2, QRS_FUNC_DETERMINISTIC | QRS_FUNC_REPLICABLE, QRS_LT_BOOLEAN,
      [](std::span<const sdk::Value> args) {
        if (args[0].is_null() || args[1].is_null()) return sdk::Value::null();
        if (args[0].type() != sdk::ValueType::kText || args[1].type() != sdk::ValueType::kText)
          throw sdk::Error::mismatch("has_word() takes TEXT arguments");
        return sdk::Value::boolean(has_word(args[0].as_text(), args[1].as_text()));
      },
      {}, sdk::AccessFormCall{"word", 0, 1});
  r.add_scalar("trigram_rows_read", 0, 0, QRS_LT_INTEGER,
               [](std::span<const sdk::Value>) { return sdk::Value::integer(g_rows_read.load()); });
}

}  // namespace
}  // namespace quereus::trigram

QUEREUS_PLUGIN(kTrigramManifest, quereus::trigram::register_trigram)
