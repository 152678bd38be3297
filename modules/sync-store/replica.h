// modules/sync-store/replica.h — the replication state of one sync-store database.
//
// A Replica rides on a StoreDb as its CommitObserver: every batch of row writes that
// commits carries, in the same atomic LevelDB batch, the metadata that replicates it (each
// written row's versions in the row's own entry, and the commit's change-log run), so no crash can
// separate a write from its capture. It also answers peers (changes_since) and applies
// their changes (apply), each in one atomic batch, under one writer lock.
//
// Keyspace (beside the store's 00–05, docs/sync-store.md §Layout):
//   20 "format"                  the sync metadata format ("5"); checked at open
//   20 "site"                    site id (16) + created-at ms (8, BE)
//   20 "clock"                   the HLC state: wall (8) + counter (2)
//   20 "seq"                     the next arrival sequence number (8, BE)
//   20 "floor"                   the oldest arrival sequence a delta can start from
//   04 … (the store's row)       a live row's versions ride in its sidecar (RowVersions)
//   21 <table id 8> <pk key>     a deleted row's versions: its tombstone (RowVersions)
//   22 <seq 8>                   change log: <table id 8> <pk key> written at arrival seq
//   22 <first 8> 'R' | 'C'       a run: one local commit's positions (keys::run_key, RunRefs)
//   23 <peer site 16>            a peer's cursors (received, sent)
//   24 <table id 8>              the table's schema and name (kept with the registry), and
//                                its incarnation ids (schema replication)
//   1E <table id 8> <part>       a part of the table's definition: its version (schema_sync.cc)
//   1F <incarnation 30>          a dropped incarnation: the drop's HLC, its schema and name
//
// The change log is keyed by *arrival order at this replica*, not by origin HLC: a
// straggler's old writes arrive late, take new sequence numbers and so reach every peer
// whose cursor is past their HLCs (the reference's scalar-watermark fault).
#ifndef QUEREUS_MODULES_SYNC_STORE_REPLICA_H_
#define QUEREUS_MODULES_SYNC_STORE_REPLICA_H_

#include <functional>
#include <map>
#include <tuple>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "../store/store_db.h"
#include "change_set.h"
#include "column_lists.h"
#include "hlc.h"
#include "row_versions.h"

namespace quereus::sync {

// 2: a tombstone may carry the deleted row's image (RowVersions::image).
// 3: a local commit's log positions are runs (keys::run_key) carrying the clock, and the
// commit writes no meta records. Format 1 and 2 stores are read as they are and their
// format record is raised to 3 at open (every older record is a format-3 record); a build
// that reads only an older format then refuses the store.
// 4: a live row's versions ride in its own entry (the store's row sidecar, row_codec's 02
// form); 21 keeps only deleted rows' records (tombstones). Format 1–3 stores are upgraded
// at open: the live rows' 21 records move into their rows in chunked batches, each atomic,
// the format record written with the last.
// 5: a commit's run is written compact ('C', keys::RunRefs: each reference as what it shares
// with the one before, and the rest); 'R' runs stay readable. A format-4 store opens as it
// is and its format record is raised to 5 (a format-4 build then refuses it).
// 6: a local commit's versions name their table's columns by a column list (ColumnLists,
// key 28): a fresh row's record is form 4 (the list's number where form 3 has the names),
// any other is form 5 (this site implied in its HLCs, names as list positions, a local
// deletion's image as values in the list's order, its receive time as a distance from
// the deletion's). Forms 2 and 3 stay readable, so a format-4 or -5 store opens as it is
// and its format record is raised to 6 (an older build then refuses it).
inline constexpr std::string_view kSyncFormat = "6";
// A format 1-3 store whose upgrade to 6 is under way (the live rows' records moving into
// them, in batches): this build finishes it; an older one refuses it.
inline constexpr std::string_view kSyncFormatUpgrading = "6-upgrading";

// What happens to a change for a table this replica does not have.
enum class UnknownTables {
  kQuarantine,  // held (once per fact), applied when the table appears
  kIgnore,      // dropped; counted
  kForward,     // held as by quarantine, and relayed to other peers by delta
};

struct ReplicaOptions {
  std::optional<SiteId> site;       // used only when the replica is created
  bool allow_resurrection = false;  // a write newer than a deletion revives the row
  // Local DDL replicates, and peers' DDL runs here (false: each peer manages its own
  // schema; schema facts received are skipped and counted).
  bool replicate_schema = true;
  uint64_t tombstone_horizon_ms = 30ull * 24 * 3600 * 1000;
  UnknownTables unknown_tables = UnknownTables::kQuarantine;
  uint64_t quarantine_horizon_ms = 30ull * 24 * 3600 * 1000;
  std::function<uint64_t()> clock = now_ms;  // wall time (tests inject one)
};

struct ReplicaStatus {
  SiteId site;
  Hlc clock;
  uint64_t next_seq = 0;
  uint64_t floor = 0;
  uint64_t log_entries = 0;  // log positions that still tell a current fact
  uint64_t log_positions = 0;  // all positions stored, dead ones too (sync_prune sweeps those)
  uint64_t captured_batches = 0;  // since open
  uint64_t applied_batches = 0;   // since open
  uint64_t holds = 0;             // changes held (unknown tables, rejected rows)
  uint64_t rejected_holds = 0;    // of which rejected: their row failed to write here
  uint64_t held_schema_steps = 0; // peers' schema parts whose step failed here, retried on each apply
  std::vector<std::string> write_barrier;  // peers whose snapshot is in progress here (local writes wait)
  std::vector<std::array<std::string, 3>> schema_holds;  // table, part, error (the first 100)
  uint64_t quarantined = 0, ignored = 0, forwarded = 0, drained = 0;  // since open
  std::map<std::string, uint64_t> unknown_by_table;  // "schema.table" -> changes, since open
  // Per peer site id (text): the position of theirs applied here, of ours they acknowledged.
  std::map<std::string, std::pair<uint64_t, uint64_t>> peers;
  // A sync client's placeholder peer record stands (it has not reached its hub yet): our
  // deletions wait for it.
  bool pending_hub = false;
};

// A change held for a table this replica does not have.
struct Hold {
  SiteId site;
  std::string change;  // change_to_json
  uint64_t received = 0;
  uint64_t seq = 0;    // forwardable: its arrival sequence (its change-log entry)
  bool forward = false;
  bool rejected = false;  // its row failed to write here (poison): not drained on its own
  std::string error;      // rejected: why
  std::string encode() const;
  static Hold decode(std::string_view bytes);
};

class Replica : public store::CommitObserver {
 public:
  // Opens (or creates) the replication metadata of `db` and attaches as its observer.
  // Throws sdk::Error (QRS_FORMAT) when the store holds another sync format, or a site id
  // without a format (a store written by something else).
  Replica(std::shared_ptr<store::StoreDb> db, ReplicaOptions options);
  ~Replica() override;
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  const SiteId& site() const { return site_; }
  const ReplicaOptions& options() const { return options_; }

  // The changes recorded here after arrival sequence `since` (0: from the start), the
  // facts originating at `peer` left out (it has them), whole transactions, about
  // `batch_size` facts (and, when `max_bytes` is not 0, about that many bytes) per page. A
  // transaction is never split, so one larger than the bounds makes a larger page. `only`:
  // just the facts originating at that site (what a peer pushes to a hub: its own writes).
  // `past_floor` (with `only` this replica): our own live writes from behind the newest
  // deletion of ours collected, which a delta from there no longer has (for a hub restored
  // from an older copy: the rest of what it lost).
  ChangeBatch changes_since(const std::optional<SiteId>& peer, uint64_t since, size_t batch_size = 1000,
                            const std::optional<SiteId>& only = std::nullopt, size_t max_bytes = 0,
                            bool past_floor = false);

  // A snapshot, a page at a time: every row's current facts (live columns with their values,
  // tombstones) and the forwardable holds, in key order after `after` ("" to begin). The
  // first page sets `head` (the log position it covers); pass it back on the next pages.
  // After the last page (`done`), deltas continue from `head`.
  struct SnapshotPage {
    std::vector<ChangeSet> sets;
    std::string next;  // the last key of this page: the next page's `after`
    bool done = false;
    uint64_t head = 0;
    // The first page's (empty on later pages): for each site, an HLC up to which this
    // replica holds every fact of that site (its own clock; the newest applied from the
    // others, a site with held facts left out). A receiver purges a row the snapshot does
    // not mention only when every fact of it is covered (docs/sync-store.md "Snapshot purge").
    std::vector<Hlc> frontier;
    // Every page's: a fingerprint of the tables' key definitions (a re-key between pages
    // changes the order rows come in), and whether the page carries held facts (a page
    // never carries both rows and holds).
    std::string key_epoch;
    bool holds = false;
  };
  SnapshotPage snapshot(std::string_view after, uint64_t head, size_t batch_size, size_t max_bytes = 0);

  // Applies changes from peers in one atomic batch (rows and metadata together); any
  // permutation of `sets` gives the same state. Refused before any write (QRS_RANGE,
  // QRS_FORMAT) when a fact's HLC is more than 60 s ahead of this clock, or names a site
  // other than its change set's. Direct mode: rows are written to the store itself (the
  // engine-routed path, with indexes, views and events, is docs/sync-store.md §Not yet).
  // `frontier`: the page's source frontier (ChangeBatch::frontier), when it told one.
  ApplyResult apply(const std::vector<ChangeSet>& sets, const std::vector<Hlc>* frontier = nullptr);

  // A peer's cursors: `received` is the last position of theirs we applied, `sent` the
  // last of ours they acknowledged.
  struct PeerCursors {
    uint64_t received = 0;
    uint64_t sent = 0;
    // A snapshot from this peer in progress: the last key applied and the position it
    // ends at (resumed after a reconnect or a restart).
    bool in_snapshot = false;
    uint64_t snapshot_head = 0;
    std::string snapshot_after;
  };
  struct Position {
    uint64_t next_seq = 0, floor = 0, own_floor = 0;
  };
  Position position();
  // Clears every peer's snapshot-in-progress state (lifting the write barrier); returns how many.
  uint64_t abandon_snapshots();
  PeerCursors peer(const SiteId& peer);
  void set_peer(const SiteId& peer, const PeerCursors& cursors);
  // Deletes a peer's record (its cursors stop holding our deletions back).
  void forget_peer(const SiteId& peer);

  // Deletes tombstones older than the horizon (and the change-log entries they hold),
  // raising the delta floor past them. Returns how many went.
  uint64_t prune_tombstones();

  // Engine-routed apply (SDK 1.12 replication, docs/sync-store.md): `resolve` plans an
  // apply without writing and returns the rows the host must write through the engine (as
  // JSON: schema, table, op, columns, values / key); the plan waits as pending. `arm` makes
  // the next commit batch carry the plan's metadata (rows of the plan are not captured as
  // local writes); `finish` writes the metadata alone if no batch took it and returns the
  // result; `abandon` drops the plan. One plan at a time.
  // `snapshot`: the page is a snapshot chunk (docs/sync-store.md "Snapshot purge"): rows the
  // source no longer has, between the keys its chunks covered, are deleted in the same plan.
  // `origin`: the page is a push of its origin's own writes (docs/sync-network.md "The
  // hub's record of each pusher"): refused, with nothing applied, when it starts past the
  // position this replica applied that pusher's writes up to (result `pushGap`); otherwise
  // that position moves to the page's end in the apply's own batch.
  // `frontier`: the page's source frontier (a delta page's, ChangeBatch::frontier).
  std::string resolve_for_engine(std::vector<ChangeSet> sets, const SnapshotChunk* snapshot = nullptr,
                                 const PushOrigin* origin = nullptr, const std::vector<Hlc>* frontier = nullptr);
  // Where this replica has applied `pusher`'s own writes up to, by pushes (0: none yet).
  uint64_t pushed_through(const SiteId& pusher);
  void arm(uint64_t token);
  std::string finish(uint64_t token);
  // `reject_row`: the plan row the host failed to write (its changes are held aside as
  // rejected by the next resolve, with `error`).
  void abandon(uint64_t token, std::optional<size_t> reject_row = std::nullopt, std::string error = {});

  // The basis lifecycle record (docs/sync-store.md "Lens backing"): after a logical
  // schema's deployment, each basis table of this store (and each table a record still
  // names) gets its state — directly-mapped (some logical schema maps it), unreferenced (in
  // the basis, mapped by none), detached (gone from the basis) — with the logical schemas
  // mapping it and the times it entered and left those states; changed records are written
  // in one batch. Returns how many of the snapshot's relations are tables here.
  uint32_t record_lens_deployment(const sdk::LensDeploymentSnapshot& snapshot);
  // Every lifecycle record, as a JSON array.
  std::string basis_records();

  ReplicaStatus status();
  // Applies the held changes of every table that exists now (LWW against what is here),
  // deleting every hold it considered, in one batch; the clock is not merged. Returns how
  // many holds it considered. Runs before each apply too.
  uint64_t drain();
  // Deletes holds received longer ago than the quarantine horizon. Returns how many.
  uint64_t prune_holds();
  // The dead log positions' records the last prune_tombstones swept.
  uint64_t last_swept() const { return last_swept_; }
  // Test and tool access: the versions recorded for a row of `schema.table` (nullopt: none).
  std::optional<RowVersions> versions(std::string_view schema, std::string_view table,
                                      const std::vector<sdk::Value>& pk);

  // store::CommitObserver: local capture.
  void before_commit(std::span<RowWrite> rows, store::KvBatch& out) override;
  void carry_sidecars(std::span<RowWrite> rows) override;
  void after_commit(bool landed) override;
  // A rolled-back transaction's DDL base is not continued by the next commit.
  void rolled_back() override {
    std::lock_guard lock(writer_);
    ddl_txn_base_.reset();
  }
  void table_event(TableEvent kind, uint64_t id, std::string_view schema, std::string_view name,
                   store::KvBatch& out) override;

  // A re-keying ALTER: the row versions move with their rows (and their change-log
  // entries follow), in the ALTER's own batch; so do the tombstones of deleted rows whose
  // image was kept (moved by `rekey`, the ALTER's own transformation).
  void rekeyed(const store::TableState& table, const std::vector<KeyMove>& moves, const Rekey& rekey,
               store::KvBatch& out) override;

  static bool replicated(std::string_view table_name);

  // ---- schema replication (schema_sync.cc, docs/sync-store.md "Schema replication") ----
  // Local DDL, inside the statement's schema-change scope: the host tells each table's
  // definition as parts after the statement ({"schema","table","parts":[[part,text]…],
  // "renames":[[old,new]…]}); drops come from the store's table events. At the scope's
  // commit (schema_flush, before the store writes the scope) the parts that changed get
  // versions at one tick, with change-log entries, in the scope's own batch.
  void capture_schema(std::string_view args);
  void schema_flush();
  void schema_end(bool landed);
  // Inbound: the schema facts of a page resolved against the local definitions (most
  // destructive wins per part, LWW at one level) into the DDL the host must run before the
  // page's data and after it, as JSON; the plan waits as pending. schema_phase("before" |
  // "after") marks the host's next schema-change scope as that phase's: its versions ride
  // that scope's batch and its DDL is not captured as local. schema_done returns the counts.
  std::string resolve_schema(const std::vector<ChangeSet>& sets);
  // `table` (schema, name): a phase run one table's step at a time (the "after" phase, whose
  // steps may fail on rows here; such a step is held by schema_hold and retried later).
  void schema_phase(uint64_t token, std::string_view phase,
                    std::optional<std::pair<std::string, std::string>> table = std::nullopt);
  // The "before" phase's versions staged now, inside its still-open scope, ahead of the
  // page's data that the host writes next in the same scope (one batch for the phase and the
  // rows: a row refused after the phase ran takes the phase back with it). The phase's log
  // positions come before the rows'; the clock and positions move on here at once, and back
  // if the scope rolls back.
  void schema_stage(uint64_t token);
  // Returns whether any of the parts was not held already.
  bool schema_hold(uint64_t token, const std::string& schema, const std::string& table, const std::string& error);
  uint64_t held_schema_steps();
  std::string schema_done(uint64_t token);

 private:
  struct TableName {
    std::string schema, table;
    Hlc inc;  // the incarnation shipped with its rows' facts (zero: none)
    std::map<std::string, Hlc> births;  // column (lowered) -> its birth, from the table's parts
  };
  std::optional<TableName> table_name(uint64_t id);
  // ---- schema replication state (schema_sync.cc) ----
 public:
  struct PartVersion {
    Hlc hlc;
    uint64_t seq = 0;
    bool drop = false;
    std::optional<Hlc> seen;  // the drop of this part its writer had seen
    Hlc born;                 // the HLC of the part's first version (orders columns)
    std::string text;
    std::string from;         // a renamed column: its old name
    std::string encode() const;
    static PartVersion decode(std::string_view bytes);
    // Most destructive wins: a drop beats a concurrent version of the part, a version
    // written after seeing the drop beats the drop; otherwise the higher HLC.
    bool beats(const PartVersion& o) const;
  };
  struct TableRecord {
    uint64_t id = 0;
    std::string schema, name;
    std::vector<Hlc> incs;  // the first is the one shipped
  };
 private:
  std::optional<TableRecord> table_record(uint64_t id);
  std::vector<TableRecord> table_records();
  void put_table_record(const TableRecord& r, store::KvBatch& out);
  std::map<std::string, PartVersion> parts_of(uint64_t id);
  // The live column parts that do not stand: another live column part of the same birth
  // shadows them (two peers renamed one column to two names concurrently, and one column
  // stands, under the name of the later rename: the higher HLC, the part name breaking a
  // tie), or their birth ended (an `end:<birth>` part: a peer dropped the column while
  // another renamed it — the drop wins). Every peer holds the same parts and agrees.
  static std::set<std::string> shadowed_columns(const std::map<std::string, PartVersion>& parts);
  // The schema facts a change-log entry (FE ‖ incarnation ‖ part) at `seq` tells; `records`
  // caches the table records for one walk.
  void schema_facts(std::string_view ref, uint64_t seq, std::vector<Change>& found,
                    std::optional<std::vector<TableRecord>>& records);
  // Refuses (before anything is read or written) a page whose facts name another site than
  // their change set's, lie too far ahead of this clock, or are malformed.
  static void validate(const std::vector<ChangeSet>& sets, uint64_t now);
  // Rows' facts carry their table's incarnation: the local table of each incarnation, and
  // whether one was dropped here (its rows' facts are beaten by the drop).
  std::map<Hlc, uint64_t> incarnation_tables();
  bool incarnation_dropped(const Hlc& inc);
  void snapshot_schema(uint64_t id, std::vector<Change>& found);
  struct SchemaCapture {
    std::string schema, table;
    std::vector<std::pair<std::string, std::string>> parts;
    std::map<std::string, std::string> renamed_from;  // new column part -> old column name
  };
  struct SchemaWrite {  // one part version an inbound phase writes
    std::string schema, table;  // the table, by its name once the phase's DDL ran
    Hlc inc;
    std::string part;
    PartVersion v;
  };
  struct SchemaDead {
    std::vector<Hlc> incs;
    Hlc hlc;
    std::string schema, table;
    Hlc fact_inc;  // the incarnation the drop's fact named (its hold's key)
  };
  struct SchemaPhasePlan {
    std::vector<SchemaWrite> writes;
    std::vector<std::pair<std::pair<std::string, std::string>, std::vector<Hlc>>> incs;  // table -> incs to add
    std::vector<SchemaDead> dead;
  };
  struct SchemaPlan {
    uint64_t token = 0;
    SchemaPhasePlan before, after;
    uint64_t applied = 0, skipped = 0, unknown = 0;
    std::optional<Hlc> max_hlc;
    // Held steps the page's facts (or what is here) beat: deleted with the "before" phase's
    // versions, so a page refused after the resolve keeps them.
    std::vector<std::string> stale_holds;
  };
  // Local DDL inside an open host transaction: the transaction's data, committed next with
  // no other tick between, continues the DDL's HLC base (one change set, DDL first).
  struct DdlBase {
    Hlc base;
    uint32_t next_op = 0;
    std::string clock_state;
  };
  struct SchemaScope {
    // Declared so that clang sees the type as default-constructible inside Replica (the
    // default member initializers below are not usable until the enclosing class ends).
    SchemaScope() {}
    std::vector<SchemaCapture> captures;
    std::vector<TableRecord> drops;
    std::set<uint64_t> created;
    const SchemaPhasePlan* phase = nullptr;  // an inbound phase: its writes, no capture
    std::optional<std::pair<std::string, std::string>> phase_table;  // lowered: only its writes
    std::optional<HlcClock> clock;  // staged by schema_flush
    uint64_t next_seq = 0;
    bool in_transaction = false;     // the host's DDL runs inside its open transaction
    // Column renames (lowered old -> new, in order) per table id: its rows' versions follow.
    std::map<uint64_t, std::vector<std::pair<std::string, std::string>>> column_renames;
    std::optional<DdlBase> ddl_base;  // staged by schema_flush
    bool phase_staged = false;  // schema_stage wrote the phase already: the commit's flush skips it
    // The clock and positions as they were before schema_stage moved them on: a scope that
    // rolls back puts them back (nothing it wrote reached the disk).
    std::optional<std::pair<HlcClock, uint64_t>> before_stage;
    // Applies whose rows committed inside the scope: what they tell about peers (watermarks,
    // floors) is taken in when the scope lands, and dropped with it.
    struct Landing {
      std::optional<std::map<SiteId, Hlc>> received;
      std::optional<uint64_t> floor, own_floor;
    };
    std::vector<Landing> landings;
  };
  std::optional<SchemaScope> scope_;
  void rename_version_columns(uint64_t id, const std::vector<std::pair<std::string, std::string>>& renames,
                              store::KvBatch& out);
  std::optional<DdlBase> ddl_txn_base_;
  std::optional<SchemaPlan> schema_plan_;
  // `row`: the stored row (nullptr: none).
  void record_facts(std::string_view ref, const RowVersions& m, const std::string* row, std::optional<uint64_t> seq,
                    std::map<uint64_t, std::optional<TableName>>& names, std::vector<qrs_value>& cells,
                    std::vector<Change>& found);
  // An apply resolved against local state, nothing written yet: the data rows to write,
  // and the metadata (versions, log entries, holds, clock) that must land with them.
  struct PlanRow {
    std::shared_ptr<store::TableState> table;
    std::string key;  // the row key
    bool deletion = false;
    std::string row;  // the encoded row (not a deletion)
    bool existed = false;
    // A new row: which columns have versions. The others had no fact (an ADD COLUMN's
    // default filled them at the origin): the engine fills them here the same way.
    std::vector<bool> versioned;
    // An existing row: columns (lower-case names) a snapshot found deleted at its source,
    // set to their default (NULL without one) by the host, as the row re-created there.
    std::vector<std::string> defaulted;
  };
  // Whether a snapshot's column-level purge may clear `column` (lower-case) of `table`: a
  // column that exists, is not a key column and is not NOT NULL.
  static bool clearable(const store::TableState& table, std::string_view column);
  struct Plan {
    store::KvBatch meta;
    std::vector<PlanRow> rows;
    std::set<std::string> keys;  // row keys whose versions the plan writes
    // The versions of the live rows the host writes (row key -> sidecar): they land in the
    // rows' own entries at the host's commit.
    std::map<std::string, std::string> sidecars;
    ApplyResult result;
    HlcClock clock{SiteId{}};
    uint64_t next_seq = 0;
    std::vector<std::pair<uint64_t, std::string>> vbounds;
    std::optional<std::map<SiteId, Hlc>> received;  // received_max_ once the plan lands
    // The floors once the plan lands, when it collected deletions its source had collected.
    std::optional<uint64_t> floor, own_floor;
  };
  // `frontier`: the page's source frontier (a delta page's), for the sets from `first_set`
  // on (the ones before are drained holds); a snapshot chunk's is its first chunk's.
  Plan resolve_locked(const std::vector<ChangeSet>& sets, store::KvBatch seed, bool merge_clock,
                      const SnapshotChunk* snapshot = nullptr, const std::vector<Hlc>* frontier = nullptr,
                      size_t first_set = 0);
  // This replica's frontier (see SnapshotPage::frontier); `cap_at_holds`: a site with held
  // facts is told up to just before its oldest held one, rather than left out.
  std::vector<Hlc> frontier_locked(bool cap_at_holds);
  // The lowest position of ours that every peer we push to has acknowledged (UINT64_MAX
  // with no peer): a deletion of ours past it is kept.
  uint64_t acknowledged_locked();
  // A plan's batch landed: what it says of this replica in memory.
  void plan_landed(const Plan& plan);
  // Snapshot purge (docs/sync-store.md "Snapshot purge"): the rows of the tables a chunk
  // mentions, between the keys the snapshot covered before it and its largest, that it does
  // not mention (and on the last chunk, every table's rest) are deleted in `plan` when each
  // of their facts is within the source's frontier. `mentioned`: per table here, the row
  // keys the chunk names. The snapshot's progress is kept in one record, in `b`.
  struct Mentioned {
    std::shared_ptr<store::TableState> table;
    std::set<std::string> keys;
  };
  uint64_t purge_absent(const SnapshotChunk& chunk, const std::map<uint64_t, Mentioned>& mentioned, Plan& plan,
                        store::KvBatch& b);
  // The snapshot's progress here (meta "purge"): its source, the checkpoint its last chunk
  // ended at, the source's frontier and key epoch (from the first chunk), per table the
  // largest row key its chunks covered ("": defined, none covered yet), the tables with
  // candidates; `off`: nothing is purged (a chunk came out of order, or the source re-keyed).
  struct PurgeState {
    SiteId source;
    std::string next, epoch;
    std::vector<Hlc> frontier;
    std::map<uint64_t, std::string> covered;
    std::set<uint64_t> with_candidates;
    bool off = false;
  };
  // None when there is no record (or it cannot be read: the next chunk then stops the purge).
  std::optional<PurgeState> load_purge_state();
  void save_purge_state(const PurgeState& st, store::KvBatch& b);
  // Deletes every recorded candidate (`20 "purge" 00 ‖ row key`), in `b`.
  void drop_purge_candidates(store::KvBatch& b);
  // The newest HLC applied here from each other site (its record: meta "frontier", 30-byte
  // HLCs one after another); a peer's facts reach a hub in their order (each pushes its own),
  // so every fact of a site up to it has been applied here.
  std::map<SiteId, Hlc> received_max_;
  // Rows and metadata in one batch written by the replica itself (direct mode).
  ApplyResult write_direct(Plan plan);
  // The sidecars of the plan's rows no batch wrote (`written`): onto the stored row, or, with
  // none, under 21 (never lost; each such key joins `bounds`, to be raised once the batch
  // lands, so a later local insert at the key reads the record and takes it into its row).
  void land_unwritten_sidecars(const Plan& plan, const std::set<std::string_view>& written, store::KvBatch& out,
                               std::vector<std::pair<uint64_t, std::string>>& bounds);
  // Format 3 -> 4 at open: live rows' versions move from 21 into their rows' sidecars.
  void upgrade_to_sidecars();
  ApplyResult apply_locked(const std::vector<ChangeSet>& sets, store::KvBatch b, bool merge_clock);
  uint64_t drain_locked();
  // The holds of tables that exist now, as change sets, their deletions into `b`.
  uint64_t collect_holds(std::vector<ChangeSet>& sets, store::KvBatch& b);
  static std::string hold_key(const Change& c);
  bool has_index_companions(std::string_view schema, std::string_view table);
  uint64_t quarantined_ = 0, ignored_ = 0, forwarded_ = 0, drained_ = 0;
  std::map<std::string, uint64_t> unknown_by_table_;
  // Peers whose snapshot this replica is taking (their cursors record one in progress): while
  // any is, local writes are refused (the write barrier of a bootstrap; persisted with the
  // cursors, so it holds across a crash until the snapshot completes or is abandoned).
  std::set<SiteId> bootstrapping_;
  void check_barrier(const char* what);
  void load_metadata();

  // The largest versions key of table `id` (its records' keys all sort below or at it;
  // nullopt: the table has none), found by one reverse seek and kept current: a key above
  // it has no record, so a fresh insert needs no read.
  const std::optional<std::string>& versions_bound(uint64_t id);
  void raise_versions_bound(uint64_t id, std::string_view key);
  std::map<uint64_t, std::optional<std::string>> versions_bound_;

  std::shared_ptr<store::StoreDb> db_;
  ReplicaOptions options_;
  ColumnLists lists_{*db_};  // the tables' column lists (format 6)
  SiteId site_;
  HlcClock clock_;
  uint64_t next_seq_ = 1;
  uint64_t floor_ = 0;
  // The newest position of a deletion of ours collected (meta "own_floor"; a replica from
  // before it: the floor): a read of our own writes alone answers from there.
  uint64_t own_floor_ = 0;
  uint64_t last_swept_ = 0;  // REQUIRES: writer_ (set by prune_tombstones)
  // A capture staged by before_commit, made current by after_commit(true).
  struct Staged {
    HlcClock clock;
    uint64_t next_seq;
    std::vector<std::pair<uint64_t, std::string>> bounds;  // versions keys written
    bool with_plan = false;  // the batch carries the pending engine-routed apply
  };
  std::optional<Staged> staged_;
  // Capture's scratch, reused from commit to commit (REQUIRES: writer_): a one-row
  // autocommit then allocates nothing of its own but the row's sidecar.
  struct CaptureScratch {
    std::pmr::vector<std::string_view> refs{store::commit_memory()};  // the log position of each row told
    std::string run;                     // a run record's value
    const store::TableState* names_of = nullptr;
    std::vector<std::string> names;      // names_of's column names, lowered
  };
  CaptureScratch scratch_;
  // The lowered column names of `t`, from scratch_ while they still match its schema.
  std::span<const std::string> lowered_names(const store::TableState& t);
  std::recursive_mutex writer_;  // capture, apply, prune: one at a time
  // The engine-routed apply waiting for its commit (resolve_for_engine .. finish).
  struct Pending {
    uint64_t token = 0;
    bool armed = false;
    bool written = false;
    bool stale = false;             // another commit landed between resolve and the host's
    bool finish_requested = false;  // finished while its rows wait in a deferred group commit
  };
  std::optional<Pending> pending_;
  std::optional<Plan> pending_plan_;
  uint64_t next_token_ = 1;
  bool indexes_routed_ = false;  // resolving for the engine: index companions are fine
  std::map<std::string, std::string> rejected_;  // row key -> error, until an apply finishes
  uint64_t rejected_total_ = 0;
  uint64_t captured_batches_ = 0, applied_batches_ = 0;
};

}  // namespace quereus::sync

#endif  // QUEREUS_MODULES_SYNC_STORE_REPLICA_H_
