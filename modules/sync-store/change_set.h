// modules/sync-store/change_set.h — what replicas exchange: facts grouped by transaction.
//
// A Change is one fact: a column's new value or a row's deletion, stamped with the HLC of
// the transaction that made it (op_seq separates the facts of one transaction). Rows are
// addressed by their raw primary-key values; each replica derives its own identity
// (collation-folded key) from them. A ChangeSet carries the facts of one origin
// transaction. JSON forms: docs/sync-store.md §Wire.
#ifndef QUEREUS_MODULES_SYNC_STORE_CHANGE_SET_H_
#define QUEREUS_MODULES_SYNC_STORE_CHANGE_SET_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hlc.h"
#include "quereus/sdk.hpp"

namespace quereus::sync {

struct Change {
  // kSchema: one part of a table's definition (docs/sync-store.md "Schema replication").
  enum class Kind { kColumn, kDelete, kSchema };
  Kind kind = Kind::kColumn;
  std::string schema;
  std::string table;
  std::vector<sdk::Value> pk;  // the row's address: raw key values, in key order
  Hlc hlc;
  std::string column;          // kColumn
  sdk::Value value;            // kColumn
  // kColumn: the newest deletion of this row its writer had seen when it wrote (the write
  // re-creates the row after that deletion; see docs/sync-store.md §Tombstones).
  std::optional<Hlc> seen_delete;
  // The table's incarnation (the HLC of its creation; zero when not told — rows' facts carry
  // it through their change set's `incarnations`). kSchema: also the part ("table", "name",
  // "col:<name>", "pk", "uniq:<name>", "check:<name>", "fk:<name>", "tail", "idx:<name>"),
  // its definition text, whether it is dropped, the HLC of its first version (orders
  // columns), and for a renamed column its old name. `seen_delete` is the drop of this
  // part its writer had seen (a part re-added after a drop).
  Hlc inc;
  std::string object;
  std::string text;
  bool drop = false;
  std::optional<Hlc> born;
  std::string from;
};

struct ChangeSet {
  SiteId site;                 // the origin
  std::string transaction_id;  // Hlc::transaction_id of the base
  Hlc hlc;                     // the largest fact HLC
  std::vector<Change> changes; // in op_seq order
};

// A push's place in its pusher's log (docs/sync-network.md "The hub's record of each
// pusher"): the page holds the pusher's own facts at positions in (after, through].
struct PushOrigin {
  SiteId site;
  uint64_t after = 0, through = 0;
};

// One page of outbound changes.
struct ChangeBatch {
  std::vector<ChangeSet> sets;
  uint64_t cursor = 0;   // the position after this page (the next call's `since`)
  bool has_more = false; // more changes wait past `cursor`
  bool snapshot_required = false;  // `since` is older than the tombstone horizon kept
  std::optional<PushOrigin> origin;  // a page of our own writes: where it sits in our log
  // The source's frontier as it read the page (per site, an HLC up to which it holds every
  // fact of that site; see Replica::snapshot). A fact of the page is live at the source; if
  // the source had a deletion that blocks it here, the source collected that deletion, and
  // the receiver follows (docs/sync-store.md "Following a collected deletion").
  std::vector<Hlc> frontier;
};

struct ApplyResult {
  uint64_t applied = 0;    // facts that changed this replica
  uint64_t skipped = 0;    // echoes, duplicates, stale or blocked facts
  uint64_t conflicts = 0;  // facts that lost to a newer local one
  uint64_t transactions = 0;
  uint64_t unknown_table = 0;  // facts for tables this replica does not have
  uint64_t rejected = 0;       // facts held aside: their row failed to write here
  uint64_t purged = 0;         // rows a snapshot chunk found gone at its source, deleted here
  uint64_t followed = 0;       // deletions the page's source had collected, collected here too
  // The chunk was not applied: its source re-keyed a table since the snapshot began, so its
  // rows are addressed by a key this replica does not have yet; take the snapshot again.
  bool restart_snapshot = false;
  // The push was not applied: it starts past the position this replica has applied its
  // pusher's own writes up to (this replica was restored from an older copy). The pusher
  // pushes again from here.
  std::optional<uint64_t> push_gap;
};

// What a snapshot chunk says besides its facts (docs/sync-store.md "Snapshot purge"): whose
// snapshot it is, the checkpoint it follows (`after`, empty on the first chunk) and the one
// it ends at (`next`), whether it is the last, and on the first chunk the source's frontier.
struct SnapshotChunk {
  SiteId source;
  std::string after, next;  // raw keys (base64 on the wire)
  bool done = false;
  std::vector<Hlc> frontier;
  // The source's tables' key definitions, fingerprinted: a change between chunks (a
  // re-keying ALTER there) changes the order its rows come in, and stops the purge.
  std::string key_epoch;
  bool holds = false;    // the chunk carries held facts (not rows of the source's tables)
  size_t first_set = 0;  // not on the wire: the sets before it are not the chunk's (drained holds)
};

}  // namespace quereus::sync

#endif  // QUEREUS_MODULES_SYNC_STORE_CHANGE_SET_H_
