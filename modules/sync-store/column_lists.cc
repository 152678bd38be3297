// modules/sync-store/column_lists.cc — see column_lists.h.
#include "column_lists.h"

#include <algorithm>

#include "replica_keys.h"

namespace quereus::sync {

using keys::corrupt;
using keys::put_prefixed;
using keys::put_u64;
using keys::Reader;

std::string ColumnLists::key(uint64_t table, uint32_t k) {
  std::string out(1, kSpace);
  put_u64(out, table);
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>((k >> s) & 0xFF));
  return out;
}

ColumnLists::Table& ColumnLists::load(uint64_t table) {
  Table& t = tables_[table];
  if (t.loaded) return t;
  std::string lo(1, kSpace);
  put_u64(lo, table);
  auto it = db_.kv().iterate(store::KvRange{lo, store::prefix_end(lo)}, false);
  for (; it->valid(); it->next()) {
    const std::string_view k = it->key();
    if (k.size() != 13) corrupt("column list key");
    uint32_t n = 0;
    for (const char c : k.substr(9)) n = (n << 8) | uint8_t(c);
    t.lists[n] = Entry{parse(it->value()), true};
  }
  it->check();
  t.loaded = true;
  return t;
}

ColumnLists::List ColumnLists::get(uint64_t table, uint32_t k) {
  std::lock_guard lock(mu_);
  Table& t = tables_[table];
  if (auto at = t.lists.find(k); at != t.lists.end()) return at->second.names;
  // Not seen yet (or seen under a view that has moved on): one read.
  std::optional<std::string> v = db_.kv().get(key(table, k));
  if (!v) corrupt("a row names column list " + std::to_string(k) + " of table " + std::to_string(table) + ", which is not stored");
  Entry& e = t.lists[k];
  e.names = parse(*v);
  e.stored = true;
  return e.names;
}

uint32_t ColumnLists::number(uint64_t table, std::span<const std::string> names, store::KvBatch& out) {
  if (names.empty() || names.size() > 65536 || db_.in_schema_scope()) return 0;
  std::lock_guard lock(mu_);
  auto same = [&](const List& l) { return std::equal(l->begin(), l->end(), names.begin(), names.end()); };
  auto use = [&](uint32_t k, Entry& e) {
    if (!e.stored) {  // not known to have landed: its entry rides this batch too
      std::string value;
      store::put_varint(value, e.names->size());
      for (const std::string& n : *e.names) put_prefixed(value, n);
      out.put(key(table, k), value);
      unlanded_.emplace_back(table, k);
    }
    return k;
  };
  Table* t = &tables_[table];
  if (t->current)
    if (auto at = t->lists.find(t->current); at != t->lists.end() && same(at->second.names)) return use(at->first, at->second);
  // A schema change since the last: look among the table's lists in the store first (one
  // scan a change), then mint the next number.
  t->loaded = false;
  t->lists.clear();
  t = &load(table);
  for (auto& [k, e] : t->lists)
    if (same(e.names)) {
      t->current = k;
      return use(k, e);
    }
  const uint32_t k = t->lists.empty() ? 1 : t->lists.rbegin()->first + 1;
  if (k == UINT32_MAX) return 0;
  Entry& e = t->lists[k];
  e.names = std::make_shared<const std::vector<std::string>>(names.begin(), names.end());
  t->current = k;
  return use(k, e);
}

void ColumnLists::landed(bool ok) {
  std::lock_guard lock(mu_);
  for (const auto& [table, k] : unlanded_) {
    auto t = tables_.find(table);
    if (t == tables_.end()) continue;
    auto e = t->second.lists.find(k);
    if (e == t->second.lists.end()) continue;
    if (ok) {
      e->second.stored = true;
    } else if (!e->second.stored) {
      t->second.lists.erase(e);
      if (t->second.current == k) t->second.current = 0;
    }
  }
  unlanded_.clear();
}

void ColumnLists::forget(uint64_t table) {
  std::lock_guard lock(mu_);
  tables_.erase(table);
  std::erase_if(unlanded_, [&](const auto& u) { return u.first == table; });
}

void ColumnLists::drop(uint64_t table, store::KvBatch& out) {
  forget(table);
  std::string lo(1, kSpace);
  put_u64(lo, table);
  auto it = db_.kv().iterate(store::KvRange{lo, store::prefix_end(lo)}, false);
  for (; it->valid(); it->next()) out.del(it->key());
  it->check();
}

}  // namespace quereus::sync
