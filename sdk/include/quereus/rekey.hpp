// quereus/rekey.hpp — the refusals and the pending-state merge of a re-key (ALTER PRIMARY
// KEY, or SET COLLATE / SET DATA TYPE / SET NOT NULL on a key member), shared by modules
// that implement those arms of Table::alter_table. Header-only.
#ifndef QUEREUS_REKEY_HPP_
#define QUEREUS_REKEY_HPP_

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "quereus/error.hpp"

namespace quereus::sdk {

// Two rows the transaction can see land on one new key: CONSTRAINT.
inline Error rekey_collision(const std::string& table) {
  return Error::constraint("UNIQUE constraint failed: " + table + " primary key collides under the new key definition");
}

// Only rows the transaction deleted (which a rollback would restore) collide: BUSY, the
// transaction stays usable and the ALTER may be retried after it ends.
inline Error rekey_busy(const std::string& table) {
  return Error::busy("Cannot re-key '" + table +
                     "': rows this transaction deleted still collide under the new key definition. "
                     "Commit/rollback and retry");
}

// One transaction's pending entries (key, row; a falsy row is a deletion), re-keyed under
// the new key, sorted by `less` and merged where they meet on one key: a live row absorbs
// the deletion keys beside it (it overwrites whatever committed row sits there); two live
// rows throw rekey_collision; two deletions cannot be told apart and throw rekey_busy.
template <class Entry, class Less>
void merge_rekeyed_pending(std::vector<Entry>& entries, Less less, const std::string& table) {
  std::stable_sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) { return less(a.first, b.first); });
  std::vector<Entry> merged;
  merged.reserve(entries.size());
  for (Entry& entry : entries) {
    if (merged.empty() || less(merged.back().first, entry.first)) {
      merged.push_back(std::move(entry));
      continue;
    }
    Entry& prev = merged.back();
    if (prev.second && entry.second) throw rekey_collision(table);
    if (!prev.second && !entry.second) throw rekey_busy(table);
    if (entry.second) prev = std::move(entry);
  }
  entries = std::move(merged);
}

}  // namespace quereus::sdk

#endif  // QUEREUS_REKEY_HPP_
