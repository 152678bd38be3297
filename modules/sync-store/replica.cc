// modules/sync-store/replica.cc — capture, delta, apply (docs/sync-store.md).
#include "replica.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "../store/row_codec.h"
#include "json_codec.h"
#include "replica_keys.h"
#include <nlohmann/json.hpp>

namespace quereus::sync {
namespace {

using namespace keys;

std::vector<sdk::Value> decode_values(std::string_view bytes) {
  std::vector<qrs_value> cells;
  store::decode_row(bytes, cells, "a row address");
  std::vector<sdk::Value> out;
  out.reserve(cells.size());
  for (const qrs_value& c : cells) out.push_back(sdk::Value::from_c(c));
  return out;
}

std::string encode_values(const std::vector<sdk::Value>& values) {
  std::vector<qrs_value> cells;
  cells.reserve(values.size());
  for (const sdk::Value& v : values) cells.push_back(v.to_c());
  return store::encode_row(cells);
}

// The change log's positions from `from` on, in order: single entries (22 ‖ seq -> ref)
// and the positions of runs (22 ‖ first ‖ 'R' or 'C'), a run that began before `from`
// entered part-way. A run's value is copied. The `ref` next() gives lives until the next
// call only (a compact run's reference is rebuilt in place, RunRefs).
class LogWalk {
 public:
  LogWalk(store::KvStore& kv, uint64_t from) : from_(from) {
    const std::string lo(1, kLog);
    // A run that began before `from` and reaches it: the record just before log_key(from).
    auto back = kv.iterate(KvRange{lo, log_key(from)}, true);
    if (back->valid() && is_run_key(back->key())) enter(back->key(), back->value());
    back->check();
    it_ = kv.iterate(KvRange{log_key(from), prefix_end(lo)}, false);
  }
  // The next position at or after `from`; false at the end of the log.
  bool next(uint64_t& seq, std::string_view& ref) {
    for (;;) {
      while (run_left_ > 0) {
        --run_left_;
        ref = refs_->next();
        seq = run_seq_++;
        if (seq >= from_) return true;
      }
      if (started_) it_->next();
      started_ = true;
      if (!it_->valid()) {
        it_->check();
        return false;
      }
      if (is_run_key(it_->key())) {
        enter(it_->key(), it_->value());
        continue;
      }
      seq = get_u64(it_->key().substr(1));
      ref = it_->value();
      return true;
    }
  }
 private:
  void enter(std::string_view key, std::string_view value) {
    value_.assign(value);
    Reader r{value_};
    run_seq_ = get_u64(key.substr(1));
    run_left_ = read_run_header(r).n;
    refs_.emplace(r, is_compact_run(key));
  }
  uint64_t from_;
  std::unique_ptr<store::KvIterator> it_;
  bool started_ = false;
  std::string value_;
  std::optional<RunRefs> refs_;
  uint64_t run_seq_ = 0, run_left_ = 0;
};

// The row key (04 ‖ id ‖ pk key) of a log reference (id ‖ pk key).
std::string row_key_of(std::string_view ref) {
  std::string k(1, 0x04);
  k += ref;
  return k;
}

// The versions of the row at `row_key`: in the stored row's sidecar (format 4: a live row
// and its versions are one entry), else in its 21 record (a deleted row's tombstone).
// `row` receives the stored row; `recorded`, whether a 21 record was found.
std::optional<RowVersions> load_versions(store::KvStore& kv, const SiteId& local, ColumnLists& lists,
                                         std::string_view row_key, std::optional<std::string>& row,
                                         bool* recorded = nullptr) {
  if (recorded) *recorded = false;
  const uint64_t table = get_u64(row_key.substr(1));
  row = kv.get(row_key);
  if (row)
    if (const std::string_view sidecar = store::row_sidecar(*row); !sidecar.empty())
      return RowVersions::decode(sidecar, local, &lists, table);
  std::optional<std::string> record = kv.get(versions_key(row_key));
  if (!record) return std::nullopt;
  if (recorded) *recorded = true;
  return RowVersions::decode(*record, local, &lists, table);
}

// `row` (either form) carrying `m` as its sidecar, into `out`.
void wrap_versions(std::string& out, const RowVersions& m, std::string_view row, const SiteId& local) {
  store::wrap_row(out, m.encode(local), row);
}

// Whether the log position `seq` → `ref` still tells a current fact. A part's or a hold's
// entry is deleted when it stops being current, so it is; a row's is when the row's
// versions still name the position.
bool position_current(store::KvStore& kv, const SiteId& local, ColumnLists& lists, uint64_t seq,
                      std::string_view ref) {
  if (!ref.empty() && (ref[0] == '\xFE' || ref[0] == '\xFF')) return true;
  std::optional<std::string> row;
  const std::optional<RowVersions> found = load_versions(kv, local, lists, row_key_of(ref), row);
  if (!found) return false;
  const RowVersions& m = *found;
  if (m.tombstone && m.tombstone_seq == seq) return true;
  for (const ColumnVersion& c : m.columns)
    if (c.seq == seq) return true;
  return false;
}

// A row's change-log entries that its versions no longer refer to go, in the same batch.
void drop_unreferenced_log(const std::vector<uint64_t>& before, const std::vector<uint64_t>& after, KvBatch& out) {
  for (uint64_t s : before)
    if (!std::binary_search(after.begin(), after.end(), s)) out.del(log_key(s));
}

}  // namespace

// ---- open ----

Replica::Replica(std::shared_ptr<store::StoreDb> db, ReplicaOptions options)
    : db_(std::move(db)), options_(std::move(options)), clock_(SiteId{}) {
  std::lock_guard lock(db_->mu());
  load_metadata();
  db_->set_observer(this);
}

Replica::~Replica() {
  std::lock_guard lock(db_->mu());
  if (db_->observer() == this) db_->set_observer(nullptr);
}

void Replica::load_metadata() {
  store::KvStore& kv = db_->kv();
  std::optional<std::string> format = kv.get(meta_key("format"));
  std::optional<std::string> site = kv.get(meta_key("site"));
  if (!format && site)
    throw sdk::Error(QRS_FORMAT, "sync-store at '" + db_->path() +
                                     "': the store holds a site id but no sync format version; it was not "
                                     "written by this sync-store. Clear its replication metadata and bootstrap "
                                     "it again from a peer");
  // Every format-1 and -2 record reads as format 3; format 4 moves live rows' versions into
  // the rows (once the site is known: a record of this site's is written compactly).
  const bool upgrade =
      format && (*format == "1" || *format == "2" || *format == "3" || *format == kSyncFormatUpgrading);
  if (upgrade) format = std::string(kSyncFormat);
  if (format && (*format == "4" || *format == "5")) {
    // Formats 5 and 6 only add forms (the compact run 'C'; records naming column lists and
    // form 5): an older store is read as it is; the record says that an older build must
    // no longer open it.
    KvBatch b;
    b.put(meta_key("format"), kSyncFormat);
    kv.write(b, true);
    format = std::string(kSyncFormat);
  }
  if (format && *format != kSyncFormat)
    throw sdk::Error(QRS_FORMAT, "sync-store at '" + db_->path() + "': replication metadata format " + *format +
                                     " is not the format this build reads (" + std::string(kSyncFormat) +
                                     "); open it with the build that wrote it, or bootstrap a fresh replica from a peer");
  if (!format) {
    // A store that already holds tables has rows with no versions: their deletes and
    // updates could not be told apart from never-replicated rows. Refused (convert by
    // dumping the store and replaying the script into a fresh sync-store database).
    {
      const std::string lo(1, 0x02);  // the store's table registry
      auto it = kv.iterate(KvRange{lo, prefix_end(lo)}, false);
      const bool has_tables = it->valid();
      it->check();
      if (has_tables)
        throw sdk::Error(QRS_FORMAT, "sync-store at '" + db_->path() +
                                         "': the directory is a store that already holds tables, written without "
                                         "replication metadata; sync-store cannot replicate rows it never captured. "
                                         "Dump it (.dump) and replay the script into a fresh sync-store database");
    }
    // A fresh replica: its identity, clock and counters, in one batch.
    site_ = options_.site ? *options_.site : SiteId::random();
    KvBatch b;
    b.put(meta_key("format"), kSyncFormat);
    std::string s(reinterpret_cast<const char*>(site_.bytes.data()), site_.bytes.size());
    put_u64(s, options_.clock());
    b.put(meta_key("site"), s);
    clock_ = HlcClock(site_);
    b.put(meta_key("clock"), clock_.state());
    b.put(meta_key("seq"), u64(1));
    b.put(meta_key("floor"), u64(0));
    kv.write(b, true);
    next_seq_ = 1;
    floor_ = own_floor_ = 0;
    return;
  }
  if (!site || site->size() != 24) corrupt("site record");
  std::copy_n(reinterpret_cast<const uint8_t*>(site->data()), 16, site_.bytes.begin());
  if (upgrade) upgrade_to_sidecars();
  uint64_t wall = 0;
  uint16_t counter = 0;
  std::optional<std::string> c = kv.get(meta_key("clock"));
  if (!c || !HlcClock::parse_state(*c, &wall, &counter)) corrupt("clock record");
  clock_ = HlcClock(site_, wall, counter);
  std::optional<std::string> seq = kv.get(meta_key("seq"));
  if (!seq || seq->size() != 8) corrupt("sequence record");
  next_seq_ = get_u64(*seq);
  {
    // Local commits keep their clock and next position in their log run, not in the meta
    // records: the newest log record, when a run, may be ahead of both.
    const std::string lo(1, kLog);
    auto last = kv.iterate(KvRange{lo, prefix_end(lo)}, true);
    if (last->valid()) {
      const uint64_t first = get_u64(last->key().substr(1));
      if (is_run_key(last->key())) {
        Reader r{last->value()};
        const RunHeader run = read_run_header(r);
        uint64_t run_wall = 0;
        uint16_t run_counter = 0;
        if (!HlcClock::parse_state(run.clock, &run_wall, &run_counter)) corrupt("log run clock");
        clock_.advance_to(run_wall, run_counter);
        next_seq_ = std::max(next_seq_, first + run.n);
      } else {
        next_seq_ = std::max(next_seq_, first + 1);
      }
    }
    last->check();
  }
  std::optional<std::string> floor = kv.get(meta_key("floor"));
  floor_ = floor && floor->size() == 8 ? get_u64(*floor) : 0;
  std::optional<std::string> own_floor = kv.get(meta_key("own_floor"));
  own_floor_ = own_floor && own_floor->size() == 8 ? get_u64(*own_floor) : floor_;
  if (std::optional<std::string> f = kv.get(meta_key("frontier")))
    for (size_t i = 0; i + kHlcBytes <= f->size(); i += kHlcBytes)
      if (std::optional<Hlc> h = Hlc::from_bytes(std::string_view(*f).substr(i, kHlcBytes))) received_max_[h->site] = *h;
  // A snapshot in progress when the process stopped keeps its write barrier.
  const std::string peers(1, kPeers);
  auto it = kv.iterate(KvRange{peers, prefix_end(peers)}, false);
  for (; it->valid(); it->next())
    if (it->key().size() == 17 && it->value().size() >= 24) {
      SiteId id;
      std::memcpy(id.bytes.data(), it->key().data() + 1, 16);
      bootstrapping_.insert(id);
    }
  it->check();
}

void Replica::upgrade_to_sidecars() {
  store::KvStore& kv = db_->kv();
  const std::string lo(1, kRows);
  std::string from = lo, wrapped;
  for (;;) {
    // A chunk of live rows per batch: each batch moves its records whole (a record gone from
    // 21 is in its row), so a crash between batches leaves a store the next open goes on
    // upgrading from where it stopped.
    KvBatch b;
    size_t n = 0;
    bool more = false;
    auto it = kv.iterate(KvRange{from, prefix_end(lo)}, false);
    for (; it->valid(); it->next()) {
      const std::string row_key = row_key_of(it->key().substr(1));
      std::optional<std::string> row = kv.get(row_key);
      if (!row) continue;  // a deleted row: its tombstone stays under 21
      RowVersions m = RowVersions::decode(it->value(), site_, &lists_, get_u64(it->key().substr(1)));
      // A tombstone without live versions beside a stored row (re-created uncaptured) stays
      // under 21: moved into the row, it would vanish with the row's next deletion, which
      // capture does not tell (no live version), and with it the deletion it records.
      if (m.columns.empty()) continue;
      m.image.clear();
      wrap_versions(wrapped, m, *row, site_);
      b.put(row_key, wrapped);
      b.del(it->key());
      if (++n == 4096) {
        from = std::string(it->key()) + '\0';
        more = true;
        break;
      }
    }
    it->check();
    // Midway, the format record says an upgrade is under way: the rows moved so far are in
    // this build's forms, so an older build must refuse the store rather than finish it.
    b.put(meta_key("format"), more ? std::string(kSyncFormatUpgrading) : std::string(kSyncFormat));
    kv.write(b, true);
    if (!more) return;
  }
}

void Replica::carry_sidecars(std::span<RowWrite> rows) {
  std::lock_guard lock(writer_);
  for (RowWrite& w : rows) {
    if (w.row.data() == nullptr || !replicated(w.table->schema.table_name)) continue;
    if (db_->above_committed(*w.table, w.key)) continue;
    if (std::optional<std::string> old = db_->kv().get(w.key))
      w.sidecar.assign(store::row_sidecar(*old, w.table->schema.table_name));
  }
}

void Replica::land_unwritten_sidecars(const Plan& plan, const std::set<std::string_view>& written, KvBatch& out,
                                      std::vector<std::pair<uint64_t, std::string>>& bounds) {
  std::string wrapped;
  for (const auto& [key, sidecar] : plan.sidecars) {
    if (written.count(key)) continue;
    if (std::optional<std::string> row = db_->kv().get(key)) {
      store::wrap_row(wrapped, sidecar, *row);
      out.put(key, wrapped);
    } else {
      std::string vkey = versions_key(key);
      out.put(vkey, sidecar);
      bounds.emplace_back(get_u64(std::string_view(key).substr(1)), std::move(vkey));  // 04 ‖ table id ‖ pk
    }
  }
}

void Replica::check_barrier(const char* what) {
  if (bootstrapping_.empty()) return;
  throw sdk::Error(QRS_BUSY, std::string("sync-store: ") + what + " refused: this replica is taking a snapshot from peer " +
                                 bootstrapping_.begin()->text() +
                                 " (the write barrier of a bootstrap); local writes resume when the snapshot completes "
                                 "(the sync client resumes it after a restart; sync_status shows writeBarrier; "
                                 "sync_abandon_snapshot(db) gives it up)");
}

void Replica::rekeyed(const store::TableState& table, const std::vector<KeyMove>& moves, const Rekey& rekey,
                      KvBatch& out) {
  std::lock_guard lock(writer_);
  if (!replicated(table.schema.table_name)) return;
  // A moved row carries its versions in its sidecar (the store moved it whole). Each moved
  // row takes a new arrival position (its facts keep their HLCs): a snapshot in progress
  // elsewhere, whose checkpoint the new keys may fall behind, gets the row again by delta;
  // a peer that has it skips it as a duplicate. The row is written again, over the store's
  // put in the same batch, with its positions renewed.
  uint64_t seq = next_seq_;
  std::string wrapped;
  for (const KeyMove& mv : moves) {
    const std::string_view sidecar = store::row_sidecar(mv.row, table.schema.table_name);
    if (sidecar.empty()) continue;  // a row without versions (never captured)
    RowVersions m = RowVersions::decode(sidecar, site_, &lists_, table.id);
    for (uint64_t old : m.seqs()) out.del(log_key(old));
    const uint64_t s = seq++;
    for (ColumnVersion& c : m.columns) c.seq = s;
    if (m.tombstone) m.tombstone_seq = s;
    wrap_versions(wrapped, m, mv.row, site_);
    out.put(mv.new_key, wrapped);
    out.put(log_key(s), std::string_view(mv.new_key).substr(1));
  }
  // A deleted row's tombstone is addressed by its old key's values. When the row's image was
  // kept (deleted here, or deleted by a peer while it was stored here), the ALTER's own
  // transformation gives the key the row would have now, and the tombstone moves there with
  // a new arrival position — so a peer that has not yet taken the deletion, and re-keys the
  // row itself, still deletes it. A tombstone without an image, or whose new key a live row
  // holds, goes with its log entry (that peer keeps the row; docs/sync-store.md).
  {
    std::set<std::string> moved;  // old and new versions keys of the rows that moved
    for (const KeyMove& mv : moves) {
      moved.insert(versions_key(mv.old_key));
      moved.insert(versions_key(mv.new_key));
    }
    std::map<std::string, RowVersions> follow;  // new versions key -> the tombstone moving there
    std::string lo(1, kRows);
    put_u64(lo, table.id);
    auto it = db_->kv().iterate(KvRange{lo, prefix_end(lo)}, false);
    for (; it->valid(); it->next()) {
      RowVersions m = RowVersions::decode(it->value(), site_, &lists_, table.id);
      if (!m.columns.empty()) continue;  // (a live row's versions ride in the row)
      for (uint64_t old : m.seqs()) out.del(log_key(old));
      out.del(it->key());
      if (m.image.empty() || !m.tombstone) continue;
      std::optional<MovedKey> to = rekey(m.named_image());
      if (!to) continue;
      const std::string vkey = versions_key(to->key);
      if (vkey == it->key()) {  // the key did not change (the ALTER left this row's key as it was)
        follow[vkey] = std::move(m);
        continue;
      }
      if (moved.count(vkey) || db_->kv().get(to->key)) continue;  // a live row holds the key
      m.address = std::move(to->address);
      auto [at, fresh] = follow.try_emplace(vkey, m);
      if (!fresh && *at->second.tombstone < *m.tombstone) at->second = std::move(m);  // the newer deletion
    }
    it->check();
    for (auto& [vkey, m] : follow) {
      const uint64_t s = seq++;
      m.tombstone_seq = s;
      out.put(vkey, m.encode(site_));
      out.put(log_key(s), std::string_view(vkey).substr(1));
    }
  }
  if (seq != next_seq_) {
    // Single entries above the newest run: the clock a run would have carried goes to the
    // meta record too (load_metadata reads a run's clock only when it is the newest record).
    out.put(meta_key("seq"), u64(seq));
    out.put(meta_key("clock"), clock_.state());
    next_seq_ = seq;  // a batch that fails to land leaves a gap, never a reused position
  }
  versions_bound_.erase(table.id);  // found again by a seek when next asked
}

// A column renamed here (by local DDL or a peer's): every row's versions of it take the
// new name in the same batch as the DDL, so its values keep their history and reach peers.
// A version still under the new name is a dropped column's, which the rename replaces.
void Replica::rename_version_columns(uint64_t id, const std::vector<std::pair<std::string, std::string>>& renames,
                                     KvBatch& out) {
  auto rename = [&](RowVersions& m) {
    bool changed = false;
    for (const auto& [from, to] : renames) {
      if (from == to) continue;
      changed = std::erase_if(m.columns, [&](const ColumnVersion& c) { return c.name == to; }) > 0 || changed;
      if (ColumnVersion* c = m.column(from)) {
        c->name = to;
        changed = true;
      }
    }
    if (!m.image.empty()) {  // a deleted row's image follows the rename too
      store::CommitObserver::NamedRow image = m.named_image();
      bool renamed = false;
      for (const auto& [from, to] : renames) {
        if (from == to) continue;
        std::erase_if(image, [&](const auto& cell) { return cell.first == to; });
        for (auto& cell : image)
          if (cell.first == from) cell.first = to, renamed = true;
      }
      if (renamed) {
        m.image = RowVersions::image_of(image);
        changed = true;
      }
    }
    return changed;
  };
  // Deleted rows' records, then live rows' sidecars (the row rewritten with them).
  std::string lo(1, kRows);
  put_u64(lo, id);
  auto it = db_->kv().iterate(KvRange{lo, prefix_end(lo)}, false);
  for (; it->valid(); it->next()) {
    RowVersions m = RowVersions::decode(it->value(), site_, &lists_, id);
    const std::vector<uint64_t> before = m.seqs();
    if (!rename(m)) continue;
    drop_unreferenced_log(before, m.seqs(), out);
    out.put(it->key(), m.encode(site_));
  }
  it->check();
  const std::string rows = store::StoreDb::table_prefix(id);
  auto r = db_->kv().iterate(KvRange{rows, prefix_end(rows)}, false);
  std::string wrapped;
  for (; r->valid(); r->next()) {
    const std::string_view sidecar = store::row_sidecar(r->value());
    if (sidecar.empty()) continue;
    RowVersions m = RowVersions::decode(sidecar, site_, &lists_, id);
    const std::vector<uint64_t> before = m.seqs();
    if (!rename(m)) continue;
    drop_unreferenced_log(before, m.seqs(), out);
    wrap_versions(wrapped, m, r->value(), site_);
    out.put(r->key(), wrapped);
  }
  r->check();
}

bool Replica::replicated(std::string_view table_name) {
  // Index companions (`<table>$idx$<index>`) are derived on every peer by its engine.
  return table_name.find("$idx$") == std::string_view::npos;
}

void Replica::table_event(TableEvent kind, uint64_t id, std::string_view schema, std::string_view name,
                          KvBatch& out) {
  const bool companion = !replicated(name);  // an index companion: no schema of its own
  if (kind == TableEvent::kDropped) {
    if (!companion) {
      if (!scope_) scope_.emplace();
      if (std::optional<TableRecord> r = table_record(id)) scope_->drops.push_back(std::move(*r));
    }
    out.del(table_key(id));
    versions_bound_.erase(id);
    lists_.drop(id, out);  // its column lists
    // The incarnation's versions go with it (a re-created table is a new incarnation and
    // inherits no tombstone); its change-log entries resolve to nothing from now on. Its
    // definition's parts go too (the drop's record, 1F, is written when the scope commits).
    for (char space : {kRows, kParts}) {
      std::string lo(1, space);
      put_u64(lo, id);
      auto it = db_->kv().iterate(KvRange{lo, prefix_end(lo)}, false);
      for (; it->valid(); it->next()) {
        out.del(it->key());
        if (space == kParts) out.del(log_key(PartVersion::decode(it->value()).seq));
      }
      it->check();
    }
    return;
  }
  if (companion) {
    out.put(table_key(id), std::string(schema) + '\0' + std::string(name));
    return;
  }
  if (!scope_) scope_.emplace();
  TableRecord r;
  if (std::optional<TableRecord> prior = table_record(id)) r = std::move(*prior);
  else scope_->created.insert(id);
  r.id = id;
  r.schema = std::string(schema);
  r.name = std::string(name);
  put_table_record(r, out);
}

std::optional<Replica::TableName> Replica::table_name(uint64_t id) {
  std::optional<TableRecord> r = table_record(id);
  if (!r) return std::nullopt;
  return TableName{r->schema, r->name, r->incs.empty() ? Hlc{} : r->incs.front(), {}};
}

// ---- local capture ----

const std::optional<std::string>& Replica::versions_bound(uint64_t id) {
  auto it = versions_bound_.find(id);
  if (it != versions_bound_.end()) return it->second;
  std::string lo(1, kRows);
  put_u64(lo, id);
  std::optional<std::string> bound;
  auto walk = db_->kv().iterate(KvRange{lo, prefix_end(lo)}, true);
  if (walk->valid()) bound = std::string(walk->key());
  walk->check();
  return versions_bound_.emplace(id, std::move(bound)).first->second;
}

void Replica::raise_versions_bound(uint64_t id, std::string_view key) {
  auto it = versions_bound_.find(id);
  if (it == versions_bound_.end()) return;  // found by a seek when next asked
  if (!it->second || key > std::string_view(*it->second)) it->second = std::string(key);
}

std::span<const std::string> Replica::lowered_names(const store::TableState& t) {
  auto same = [](std::string_view lowered, std::string_view name) {
    if (lowered.size() != name.size()) return false;
    for (size_t i = 0; i < name.size(); ++i)
      if (lowered[i] != (name[i] >= 'A' && name[i] <= 'Z' ? static_cast<char>(name[i] + 32) : name[i])) return false;
    return true;
  };
  const auto& cols = t.schema.columns;
  std::vector<std::string>& names = scratch_.names;
  bool current = scratch_.names_of == &t && names.size() == cols.size();
  for (size_t i = 0; current && i < cols.size(); ++i) current = same(names[i], cols[i].name);
  if (!current) {
    names.clear();
    names.reserve(cols.size());
    for (const auto& c : cols) names.push_back(lower(c.name));
    scratch_.names_of = &t;
  }
  return names;
}

void Replica::before_commit(std::span<RowWrite> rows, KvBatch& out) {
  std::lock_guard lock(writer_);
  lists_.landed(false);  // a column-list entry of a batch abandoned before it was written
  store::KvStore& kv = db_->kv();
  HlcClock clock = clock_;
  uint64_t seq = next_seq_;
  // An armed engine-routed apply: its metadata rides this batch, its rows are not local
  // writes, and local capture continues after its sequence numbers and merged clock.
  const Plan* plan = pending_ && pending_->armed && !pending_->written && pending_plan_ ? &*pending_plan_ : nullptr;
  if (plan) {
    // Only the host's own commit carries the plan: a batch that holds none of its rows is
    // another connection's (a plan with no rows is finished alone, never attached).
    bool ours = false;
    for (const RowWrite& w : rows) ours = ours || plan->keys.count(std::string(w.key)) > 0;
    if (!ours || plan->rows.empty()) plan = nullptr;
  }
  if (pending_ && !pending_->written && !plan) {
    // A commit between resolve and the host's commit: the plan was resolved against a state
    // that is gone (and its sequence numbers are taken). The host's commit will refuse it.
    pending_->stale = true;
  } else if (plan && pending_->stale) {
    throw sdk::Error(QRS_BUSY, "sync-store: another connection committed while a sync apply was being written; "
                                   "nothing of the apply landed: apply the page again");
  }
  if (plan) {
    // A row the plan rewrites in its metadata (its values as stored, its versions new) that
    // the host's batch writes too (a trigger): the batch's row takes those versions, and a
    // row the batch deletes is not brought back (the two puts' order is not fixed).
    std::map<std::string_view, RowWrite*> batch_rows;
    for (RowWrite& w : rows)
      if (plan->keys.count(std::string(w.key))) batch_rows[w.key] = &w;
    plan->meta.for_each(
        [&](std::string_view k, std::string_view v) {
          if (auto f = batch_rows.find(k); f != batch_rows.end()) {
            if (f->second->row.data() != nullptr) f->second->sidecar.assign(store::row_sidecar(v));
            return;
          }
          out.put(k, v);
        },
        [&](std::string_view k) { out.del(k); });
    clock = plan->clock;
    seq = plan->next_seq;
  }
  const uint64_t first_seq = seq;
  std::pmr::vector<std::string_view>& refs = scratch_.refs;  // the log position of each row told, from first_seq
  refs.clear();
  refs.reserve(rows.size());
  std::optional<Hlc> base;  // ticked once, on the first fact
  uint32_t op = 0;
  if (!plan && ddl_txn_base_ && clock.state() == ddl_txn_base_->clock_state) {
    base = ddl_txn_base_->base;  // the same transaction's DDL came first (sync.p06)
    op = ddl_txn_base_->next_op;
  }
  const uint64_t now = options_.clock();
  std::vector<qrs_value> cells, old_cells;
  std::vector<std::pair<uint64_t, std::string>> bounds;  // per table: the largest versions key written
  auto raise_bound = [&bounds](uint64_t id, std::string_view key) {
    for (auto& [tid, top] : bounds)
      if (tid == id) {
        if (key > std::string_view(top)) top.assign(key);
        return;
      }
    bounds.emplace_back(id, std::string(key));
  };
  // The log runs (and a deleted row's tombstone record): one allocation, not a doubling.
  if (rows.size() > 8) {
    size_t key_bytes = 0;
    for (const RowWrite& w : rows) key_bytes += w.key.size();
    out.reserve(rows.size() / kRunMax + 2, key_bytes + 64);
  }
  std::string vkey;
  std::optional<std::string> old_read;  // a committed row read here
  auto next_hlc = [&]() {
    if (!base) base = clock.tick(now);
    if (op == UINT32_MAX) throw sdk::Error(QRS_RANGE, "sync-store: a transaction of more than 2^32 facts");
    Hlc h = *base;
    h.op_seq = op++;
    return h;
  };
  std::set<std::string_view> plan_written;  // the plan's rows this batch writes
  // The column list the records of `list_table`'s rows name (ColumnLists), per table met.
  const store::TableState* list_table = nullptr;
  RowVersions::ListRef list;
  auto list_of = [&](const store::TableState& t) -> const RowVersions::ListRef* {
    // The names are taken again each time: they are a view of the capture's scratch, which
    // another table's rows in between may have refilled (found by review).
    list.names = lowered_names(t);
    if (list_table != &t) {
      list.k = lists_.number(t.id, list.names, out);
      list_table = &t;
    }
    return &list;
  };
  for (RowWrite& w : rows) {
    store::TableState& t = *w.table;
    if (!replicated(t.schema.table_name)) continue;
    if (plan && plan->keys.count(std::string(w.key))) {  // the plan's own row: its versions
      if (auto sc = plan->sidecars.find(std::string(w.key)); sc != plan->sidecars.end()) {
        // A row the host's batch deletes (a trigger, a cascade) is not brought back by its
        // sidecar landing on the committed row below: its versions go with it.
        if (w.row.data() != nullptr) w.sidecar.assign(sc->second);
        plan_written.insert(sc->first);
      }
      continue;
    }
    // (A write the plan's rows caused — a cascade — is the apply's, not a local one.)
    if (!plan) check_barrier("a local write");
    // The committed row and its versions (its sidecar); a key above every committed row of
    // the table has none (the common append: no read). A deleted row's versions (its
    // tombstone) are in its 21 record, read only when a record may exist at that key.
    // The statement that wrote the row read it just before (an UPDATE, a DELETE): the store
    // kept what it read while nothing was written since, so it is not read again.
    std::optional<std::string_view> old_row;
    if (!db_->above_committed(t, w.key)) {
      if (w.committed && w.committed->generation == kv.generation()) {
        if (w.committed->found) old_row = w.committed->row;
      } else if ((old_read = kv.get(w.key))) {
        old_row = *old_read;
      }
    }
    const std::string_view old_sidecar = old_row ? store::row_sidecar(*old_row, t.schema.table_name) : std::string_view();
    vkey.assign(1, kRows);
    vkey.append(w.key.substr(1));
    std::optional<std::string> stored;
    if (old_sidecar.empty()) {
      const std::optional<std::string>& bound = versions_bound(t.id);
      if (bound && std::string_view(vkey) <= std::string_view(*bound)) stored = kv.get(vkey);
    }
    const bool recorded = stored.has_value();  // versions under 21, to delete when the row lives
    if (old_sidecar.empty() && !stored && w.row.data() != nullptr) {
      // A row new to the replica: every column is a fresh version of this transaction's
      // base, none had seen a deletion. Encoded straight into RowVersions' record form.
      const std::span<const std::string> names = lowered_names(t);
      const size_t n = std::min(names.size(), store::row_cell_count(w.row, t.schema.table_name));
      if (n == 0) continue;
      const Hlc first = next_hlc();  // the first column's; the others follow it
      if (uint64_t(first.op_seq) + n > UINT32_MAX)
        throw sdk::Error(QRS_RANGE, "sync-store: a transaction of more than 2^32 facts");
      op = static_cast<uint32_t>(first.op_seq + n);
      RowVersions::append_fresh(w.sidecar.open(), first, seq, names.first(n), site_, list_of(t)->k);
      w.sidecar.close();
      refs.push_back(w.key.substr(1));
      ++seq;
      continue;
    }
    RowVersions m = !old_sidecar.empty() ? RowVersions::decode(old_sidecar, site_, &lists_, t.id)
                    : stored            ? RowVersions::decode(*stored, site_, &lists_, t.id)
                                        : RowVersions{};
    bool changed = false;
    if (w.row.data() == nullptr) {
      // A deletion. A key with no live version was never a row here (written and deleted
      // inside this transaction): nothing to tell.
      if (m.columns.empty()) continue;
      if (old_row) {
        store::decode_row(*old_row, old_cells, t.schema.table_name);
        std::vector<qrs_value> pk;
        pk.reserve(t.schema.primary_key.size());
        for (const auto& k : t.schema.primary_key) pk.push_back(old_cells.at(k.column));
        m.address = store::encode_row(pk);
        m.image = RowVersions::image_of(old_cells, lowered_names(t));  // a re-key moves the tombstone
      }
      m.tombstone = next_hlc();
      m.tombstone_seq = seq;
      m.tombstone_created = now;
      m.columns.clear();
      // The row's entry goes: its versions (now its tombstone) live under 21.
      out.put(vkey, m.encode(site_, list_of(t)));
      raise_bound(t.id, vkey);
      refs.push_back(w.key.substr(1));
      ++seq;
      continue;
    }
    store::decode_row(w.row, cells, t.schema.table_name);
    // The committed row, to leave unchanged columns out (only when the row has versions:
    // a fresh key has no row either).
    if (old_row && !m.columns.empty()) store::decode_row(*old_row, old_cells, t.schema.table_name); else old_cells.clear();
    const auto& cols = t.schema.columns;
    // What this writer has seen: the row's tombstone and every deletion its current
    // versions had seen (so a local write outranks them, as it is newer causally).
    std::optional<Hlc> seen = m.tombstone;
    for (const ColumnVersion& c : m.columns)
      if (c.seen_delete && (!seen || *c.seen_delete > *seen)) seen = c.seen_delete;
    const std::span<const std::string> names = lowered_names(t);
    for (size_t i = 0; i < cols.size() && i < cells.size(); ++i) {
      const std::string& name = names[i];
      ColumnVersion* c = m.column(name);
      if (c && i < old_cells.size() && m.valid(*c, options_.allow_resurrection) &&
          sdk::identical(cells[i], old_cells[i]))
        continue;  // unchanged (same type and bytes: a blob compares by content)
      ColumnVersion fresh{name, next_hlc(), seq, seen};
      if (c) *c = std::move(fresh); else m.columns.push_back(std::move(fresh));
      changed = true;
    }
    if (recorded) out.del(vkey);  // the live row carries its versions from now on
    if (!changed) {
      // Rewritten with every value as it was: the versions stay as they were, with the row.
      if (!old_sidecar.empty()) w.sidecar.assign(old_sidecar); else if (!m.columns.empty()) w.sidecar.assign(m.encode(site_, list_of(t)));
      continue;
    }
    // The positions the row's old versions held stay in the log, dead (a delta resolves a
    // position by its seq and finds nothing); sync_prune sweeps them.
    m.image.clear();  // a deleted row's image: the row itself is stored now
    w.sidecar.assign(m.encode(site_, list_of(t)));
    refs.push_back(w.key.substr(1));
    ++seq;
  }
  if (plan) land_unwritten_sidecars(*plan, plan_written, out, bounds);
  if (plan)
    for (const auto& b : plan->vbounds) bounds.push_back(b);
  if (!refs.empty()) {
    // The commit's positions as runs, each carrying the clock: the newest run is where
    // load_metadata finds the clock and the next position, so no meta record is written.
    std::string& value = scratch_.run;
    for (size_t at = 0; at < refs.size(); at += kRunMax) {
      const size_t n = std::min(kRunMax, refs.size() - at);
      size_t bound = 10 + 1 + 10;  // n, the clock state (wall 8 + counter 2) and its length
      for (size_t i = at; i < at + n; ++i) bound += 20 + refs[i].size();
      value.resize(bound);
      char* p = value.data();
      p = raw_varint(p, n);
      *p++ = 10;
      p = raw_be(p, clock.wall(), 8);
      p = raw_be(p, clock.counter(), 2);
      // The references prefix-compressed (RunRefs): each as what it shares with the one
      // before (the first, with eight zero bytes) and the rest.
      static constexpr char kZeros[8] = {};
      std::string_view prev(kZeros, sizeof kZeros);
      for (size_t i = at; i < at + n; ++i) {
        const std::string_view ref = refs[i];
        size_t shared = 0;
        while (shared < prev.size() && shared < ref.size() && prev[shared] == ref[shared]) ++shared;
        p = raw_varint(p, shared);
        p = raw_prefixed(p, ref.substr(shared));
        prev = ref;
      }
      value.resize(static_cast<size_t>(p - value.data()));
      char key[10];  // a compact run's key: 22 ‖ first ‖ 'C'
      key[0] = kLog;
      raw_be(key + 1, first_seq + at, 8);
      key[9] = kCompactRunMark;
      out.put(std::string_view(key, sizeof key), value);
    }
    refs.clear();  // views of this batch's keys
    if (value.capacity() > 4096) std::string().swap(value);  // a big transaction's: not kept
    if (refs.capacity() > 4096) refs.shrink_to_fit();
  } else if (base) {  // the transaction's DDL base taken, no row told: its clock and seq
    out.put(meta_key("clock"), clock.state());
    out.put(meta_key("seq"), u64(seq));
  }
  if (base || plan) staged_ = Staged{clock, seq, std::move(bounds), plan != nullptr};
}

void Replica::after_commit(bool landed) {
  std::lock_guard lock(writer_);
  lists_.landed(landed);
  if (landed) ddl_txn_base_.reset();
  if (landed && staged_) {
    clock_ = staged_->clock;
    next_seq_ = std::max(next_seq_, staged_->next_seq);  // positions only ever grow
    for (const auto& [id, key] : staged_->bounds) raise_versions_bound(id, key);
    ++captured_batches_;
    if (staged_->with_plan && pending_) {
      pending_->written = true;
      if (pending_plan_) plan_landed(*pending_plan_);
      ++applied_batches_;
      if (pending_->finish_requested) {  // a deferred apply's rows landed with its metadata
        pending_.reset();
        pending_plan_.reset();
      }
    }
  } else if (!landed && staged_ && staged_->with_plan && pending_ && pending_->finish_requested) {
    // A deferred apply whose group commit failed: nothing of it landed and no one will
    // abandon it (its sync_apply returned already); the page comes again. Left pending, it
    // would refuse every later apply and hold off the prune (found by review).
    pending_.reset();
    pending_plan_.reset();
  }
  staged_.reset();
}

// ---- outbound ----

// Adds a fact to the page's change set of its transaction; returns about what it costs on
// the wire (its value, its address, its names and HLC).
static size_t page_add(std::map<std::string, ChangeSet>& sets, Change c) {
  std::string tx = c.hlc.transaction_id();
  ChangeSet& set = sets[tx];
  if (set.changes.empty()) {
    set.site = c.hlc.site;
    set.transaction_id = std::move(tx);
    set.hlc = c.hlc;
  }
  if (c.hlc > set.hlc) set.hlc = c.hlc;
  size_t bytes = 160 + c.table.size() + c.column.size() + c.value.bytes().size();
  for (const sdk::Value& k : c.pk) bytes += 8 + k.bytes().size();
  set.changes.push_back(std::move(c));
  return bytes;
}

// The page's change sets: facts in op_seq order, sets in HLC order.
static std::vector<ChangeSet> page_sets(std::map<std::string, ChangeSet>& sets) {
  std::vector<ChangeSet> out;
  for (auto& [tx, set] : sets) {
    std::sort(set.changes.begin(), set.changes.end(),
              [](const Change& a, const Change& b) { return a.hlc.op_seq < b.hlc.op_seq; });
    out.push_back(std::move(set));
  }
  std::sort(out.begin(), out.end(), [](const ChangeSet& a, const ChangeSet& b) {
    Hlc x = a.hlc, y = b.hlc;
    x.op_seq = y.op_seq = 0;
    return x < y;
  });
  return out;
}

// The facts a row's versions record tells, into `found`: its tombstone and its columns
// (values from the stored row) — only those written at arrival `seq` when given, else all
// of them. A record without a row or an address tells nothing.
void Replica::record_facts(std::string_view ref, const RowVersions& m, const std::string* row, std::optional<uint64_t> seq,
                           std::map<uint64_t, std::optional<TableName>>& names, std::vector<qrs_value>& cells,
                           std::vector<Change>& found) {
  const uint64_t id = get_u64(ref.substr(0, 8));
  auto n = names.find(id);
  if (n == names.end()) {
    n = names.emplace(id, table_name(id)).first;
    if (n->second)
      for (const auto& [part, v] : parts_of(id))
        if (part.starts_with("col:") && !v.drop) n->second->births.emplace(part.substr(4), v.born);
  }
  bool wanted = !seq || (m.tombstone && m.tombstone_seq == *seq);
  for (const ColumnVersion& v : m.columns) wanted = wanted || v.seq == *seq;
  if (!wanted) return;
  std::shared_ptr<store::TableState> st = db_->live_state(id);
  if (!st) return;
  if (!n->second) n->second = TableName{st->schema.schema_name, st->schema.table_name, Hlc{}, {}};
  // The address, and each column's value, from the stored row (a deleted row: the address
  // its tombstone kept).
  std::vector<sdk::Value> pk;
  if (m.columns.empty()) row = nullptr;
  if (row) {
    store::decode_row(*row, cells, st->schema.table_name);
    for (const auto& k : st->schema.primary_key)
      if (k.column < cells.size()) pk.push_back(sdk::Value::from_c(cells[k.column]));
  } else if (!m.address.empty()) {
    pk = decode_values(m.address);
    cells.clear();
  } else {
    return;  // versions without a row or an address: nothing to tell
  }
  const size_t first = found.size();
  if (m.tombstone && (!seq || m.tombstone_seq == *seq)) {
    Change c;
    c.kind = Change::Kind::kDelete;
    c.hlc = *m.tombstone;
    found.push_back(std::move(c));
  }
  for (const ColumnVersion& v : m.columns) {
    if ((seq && v.seq != *seq) || !row) continue;
    if (!seq && !m.valid(v, options_.allow_resurrection)) continue;  // a snapshot: blocked by the tombstone
    const auto& cols = st->schema.columns;
    size_t i = 0;
    while (i < cols.size() && lower(cols[i].name) != v.name) ++i;
    if (i >= cols.size() || i >= cells.size()) continue;  // a column dropped since
    Change c;
    c.column = v.name;
    c.value = sdk::Value::from_c(cells[i]);
    c.hlc = v.hlc;
    c.seen_delete = v.seen_delete;
    if (auto b = n->second->births.find(v.name); b != n->second->births.end()) c.born = b->second;
    found.push_back(std::move(c));
  }
  for (size_t i = first; i < found.size(); ++i) {
    found[i].schema = n->second->schema;
    found[i].table = n->second->table;
    found[i].inc = n->second->inc;
    found[i].pk = pk;
  }
}

ChangeBatch Replica::changes_since(const std::optional<SiteId>& peer, uint64_t since, size_t batch_size,
                                   const std::optional<SiteId>& only, size_t max_bytes, bool past_floor) {
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  ChangeBatch batch;
  batch.cursor = since;
  // Our own writes alone (what a peer pushes) answer from the newest deletion of ours
  // collected, not from the floor (which others' collected deletions raise too): a push
  // reaches every write of ours not yet acknowledged (prune_tombstones keeps those).
  const bool own = only && *only == site_;
  const uint64_t floor = own ? (past_floor ? 0 : own_floor_) : floor_;
  if (since < floor || since >= next_seq_) {
    // Behind the tombstone floor, or ahead of this replica (restored from a backup older
    // than what the peer saw): a delta cannot be trusted.
    batch.snapshot_required = true;
    return batch;
  }
  store::KvStore& kv = db_->kv();
  std::map<std::string, ChangeSet> sets;  // transaction id -> set
  std::map<uint64_t, std::optional<TableName>> names;
  size_t facts = 0, bytes = 0;
  std::vector<qrs_value> cells;
  std::set<std::string> in_page;  // transaction ids already in this page
  std::optional<std::vector<TableRecord>> records;
  LogWalk walk(kv, since + 1);
  uint64_t s = 0;
  std::string_view ref;  // id ‖ pk key (or a part's or a hold's reference)
  while (walk.next(s, ref)) {
    std::vector<Change> found;
    if (!ref.empty() && ref[0] == '\xFE') {
      schema_facts(ref, s, found, records);  // a part of a table's definition
    } else if (!ref.empty() && ref[0] == '\xFF') {
      // A forwardable hold (store-and-forward): relayed with its original HLC and site.
      if (std::optional<std::string> hv = kv.get(std::string(1, kHolds) + std::string(ref.substr(1)))) {
        Hold h = Hold::decode(*hv);
        if (h.forward && h.seq == s) found.push_back(change_from_json(h.change));
      }
    } else if (ref.size() >= 8) {
      std::optional<std::string> row;
      if (std::optional<RowVersions> m = load_versions(kv, site_, lists_, row_key_of(ref), row))
        record_facts(ref, *m, row ? &*row : nullptr, s, names, cells, found);
    }
    std::erase_if(found, [&](const Change& c) { return (peer && c.hlc.site == *peer) || (only && c.hlc.site != *only); });
    if (facts >= batch_size || (max_bytes && bytes >= max_bytes)) {
      // Past the page's size: go on only while the entry continues a transaction already
      // in the page (a transaction is never split when its facts are contiguous).
      bool continues = !found.empty();
      for (const Change& c : found) continues = continues && in_page.count(c.hlc.transaction_id());
      if (!continues && !found.empty()) {
        batch.has_more = true;
        break;
      }
    }
    for (Change& c : found) {
      in_page.insert(c.hlc.transaction_id());
      bytes += page_add(sets, std::move(c));
      ++facts;
    }
    batch.cursor = s;
  }
  batch.sets = page_sets(sets);
  // What the receiver needs to follow a deletion we collected (docs/sync-store.md
  // "Following a collected deletion").
  if (!batch.sets.empty()) batch.frontier = frontier_locked(/*cap_at_holds=*/true);
  return batch;
}

std::vector<Hlc> Replica::frontier_locked(bool cap_at_holds) {
  // The frontier (docs/sync-store.md "Snapshot purge"): every fact of ours up to the clock,
  // of another site up to the newest applied here. A site with facts held here (quarantined,
  // forwarded or rejected) is left out, as those rows are not in our tables; or, with
  // `cap_at_holds`, told up to just before its oldest held fact (every fact of it before
  // that one was applied here, or collected).
  std::map<SiteId, Hlc> oldest_held;
  const std::string holds(1, kHolds);
  auto it = db_->kv().iterate(KvRange{holds, prefix_end(holds)}, false);
  for (; it->valid(); it->next()) {
    const std::string_view key = it->key();  // … ‖ HLC (30) ‖ kind (1)
    std::optional<Hlc> h = key.size() >= 1 + kHlcBytes + 1 ? Hlc::from_bytes(key.substr(key.size() - 1 - kHlcBytes, kHlcBytes))
                                                           : std::nullopt;
    if (!h) h = Hlc{0, 0, Hold::decode(it->value()).site, 0};  // (unreadable: the whole site is held)
    if (auto [o, fresh] = oldest_held.try_emplace(h->site, *h); !fresh && *h < o->second) o->second = *h;
  }
  it->check();
  std::vector<Hlc> out;
  out.reserve(received_max_.size() + 1);
  out.push_back(Hlc{clock_.wall(), clock_.counter(), site_, UINT32_MAX});
  for (const auto& [site, h] : received_max_) {
    if (site == site_) continue;
    auto o = oldest_held.find(site);
    if (o == oldest_held.end()) {
      out.push_back(h);
    } else if (cap_at_holds) {
      // Just before the oldest held fact.
      Hlc cap = o->second;
      if (cap.op_seq > 0) {
        --cap.op_seq;
      } else if (cap.counter > 0) {
        --cap.counter;
        cap.op_seq = UINT32_MAX;
      } else if (cap.wall > 0) {
        --cap.wall;
        cap.counter = UINT16_MAX;
        cap.op_seq = UINT32_MAX;
      } else {
        continue;
      }
      out.push_back(std::min(h, cap));
    }
  }
  return out;
}

// A frontier is a claim, not a fact: an entry too far ahead of this clock (its source's clock
// runs fast) is lowered to the furthest a fact may be ahead — a claim that follows from it,
// and above every fact this replica accepts — rather than refusing the page (a peer slower
// than its hub would refuse every page) or leaving the site out (which would count what the
// source has of that site as unseen: found by review).
static Hlc clamp_claim(const Hlc& h, uint64_t now) {
  if (h.wall <= now || h.wall - now <= kMaxDriftMs) return h;
  return Hlc{now + kMaxDriftMs, UINT16_MAX, h.site, UINT32_MAX};
}


uint64_t Replica::acknowledged_locked() {
  uint64_t acked = UINT64_MAX;
  const std::string peers(1, kPeers);
  auto p = db_->kv().iterate(KvRange{peers, prefix_end(peers)}, false);
  for (; p->valid(); p->next())
    if (p->key().size() == 17 && p->value().size() >= 16) acked = std::min(acked, get_u64(p->value().substr(8, 8)));
  p->check();
  return acked;
}

Replica::SnapshotPage Replica::snapshot(std::string_view after, uint64_t head, size_t batch_size, size_t max_bytes) {
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  SnapshotPage page;
  batch_size = std::max<size_t>(batch_size, 1);  // a page always takes at least one record
  if (!after.empty() && head >= next_seq_)
    throw sdk::Error(QRS_RANGE, "sync-store: the snapshot checkpoint names log position " + std::to_string(head) +
                                    ", past this replica's (" + std::to_string(next_seq_ - 1) +
                                    "): it was restored from an older copy; start the snapshot again");
  // A snapshot pages through the rows' versions (spelled 21 ‖ id ‖ key), then the forwardable
  // holds (25 ‖ …), in key order; `after` is the last key of the previous page. Its first
  // page fixes `head`: what the log held when it began; after the last page the receiver
  // goes on by delta from there (writes made meanwhile come again, idempotently).
  page.head = after.empty() ? next_seq_ - 1 : head;
  store::KvStore& kv = db_->kv();
  if (after.empty()) page.frontier = frontier_locked(/*cap_at_holds=*/false);
  for (const TableRecord& r : table_records())
    if (std::shared_ptr<store::TableState> t = db_->live_state(r.id); t && replicated(t->schema.table_name)) {
      // The key epoch: per table (`id=hash;`), its key members (name, order, collation, type).
      std::string keys;
      for (const sdk::KeyColumn& k : t->schema.primary_key) {
        const sdk::ColumnDef& c = t->schema.columns.at(k.column);
        keys += lower(c.name) + (k.desc ? "-" : "+") + k.collation.name() + ":" +
                std::to_string(static_cast<int>(c.logical_type)) + ";";
      }
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016zx", std::hash<std::string>{}(keys));
      page.key_epoch += std::to_string(r.id) + "=" + hex + ";";
    }
  std::map<std::string, ChangeSet> sets;
  std::map<uint64_t, std::optional<TableName>> names;
  std::vector<qrs_value> cells;
  size_t facts = 0, bytes = 0;
  bool full = false;
  // The tables' definitions come first (a receiver makes each table before its rows), each
  // table's parts in one page; then the dropped incarnations.
  for (char space : {kParts, kDead, kRows, kHolds}) {
    const std::string lo(1, space);
    if (!after.empty() && after.substr(0, 1) > lo) continue;
    std::string from = after.empty() || after.substr(0, 1) < lo ? lo : std::string(after) + '\0';
    if (space == kParts && from.size() > 1) {
      // Past the table the previous page ended in.
      std::string id_prefix = from.substr(0, 9);
      from = prefix_end(id_prefix);
    }
    if (space == kRows) {
      // The rows: live rows' versions in their sidecars (04 ‖ id ‖ key) and deleted rows'
      // records (21 ‖ id ‖ key), merged in key order; a page ends at a row's key spelled
      // as its 21 key.
      const std::string rows_lo(1, 0x04);
      auto live = kv.iterate(KvRange{rows_lo + from.substr(1), prefix_end(rows_lo)}, false);
      auto dead = kv.iterate(KvRange{from, prefix_end(lo)}, false);
      std::string row;
      while (live->valid() || dead->valid()) {
        const bool take_live =
            live->valid() && (!dead->valid() || live->key().substr(1) <= dead->key().substr(1));
        const std::string_view ref = take_live ? live->key().substr(1) : dead->key().substr(1);
        std::optional<RowVersions> m;
        if (take_live) {
          const std::string_view sidecar = store::row_sidecar(live->value());
          if (sidecar.empty()) {  // a row without versions (an index companion's, …): its
            live->next();         // 21 record, if any, is its versions (as load_versions reads)
            continue;
          }
          if (dead->valid() && dead->key().substr(1) == ref) dead->next();  // (the row's own, stale)
          m = RowVersions::decode(sidecar, site_, &lists_, get_u64(ref));
        } else {
          m = RowVersions::decode(dead->value(), site_, &lists_, get_u64(ref));
        }
        if (facts >= batch_size || (max_bytes && bytes >= max_bytes)) {
          full = true;
          break;
        }
        std::vector<Change> found;
        if (take_live) row.assign(live->value());
        record_facts(ref, *m, take_live ? &row : nullptr, std::nullopt, names, cells, found);
        for (Change& c : found) {
          bytes += page_add(sets, std::move(c));
          ++facts;
        }
        page.next = std::string(lo) + std::string(ref);
        if (take_live) live->next(); else dead->next();
      }
      live->check();
      dead->check();
      if (full) break;
      continue;
    }
    auto it = kv.iterate(KvRange{from, prefix_end(lo)}, false);
    if (space == kHolds && it->valid() && facts > 0) {
      full = true;  // held facts come in pages of their own (a receiver counts no row of theirs covered)
      break;
    }
    std::optional<uint64_t> table;
    std::optional<std::vector<TableRecord>> records;  // the dropped incarnations' lookups share it
    for (; it->valid(); it->next()) {
      if (space == kParts && table && get_u64(it->key().substr(1)) == *table) {
        page.next = std::string(it->key());
        continue;  // sent with its table's first part
      }
      if (facts >= batch_size || (max_bytes && bytes >= max_bytes)) {
        full = true;
        break;
      }
      std::vector<Change> found;
      if (space == kParts) {
        table = get_u64(it->key().substr(1));
        snapshot_schema(*table, found);
      } else if (space == kDead) {
        const std::optional<Hlc> inc = Hlc::from_bytes(it->key().substr(1));
        if (inc) {
          // A dropped incarnation's record: told as its drop.
          std::string ref(1, '\xFE');
          inc->append_to(ref);
          ref += "table";
          Reader r{it->value()};
          (void)r.hlc();
          schema_facts(ref, r.varint(), found, records);
        }
      } else {
        Hold h = Hold::decode(it->value());
        if (h.forward) {
          found.push_back(change_from_json(h.change));
          page.holds = true;
        }
      }
      for (Change& c : found) {
        bytes += page_add(sets, std::move(c));
        ++facts;
      }
      page.next = std::string(it->key());
    }
    it->check();
    if (full) break;
  }
  page.done = !full;
  page.sets = page_sets(sets);
  return page;
}

// ---- inbound ----

ApplyResult Replica::apply(const std::vector<ChangeSet>& sets, const std::vector<Hlc>* frontier) {
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  drain_locked();  // holds whose table is here now, as their own unit first
  if (!frontier) return apply_locked(sets, KvBatch{}, true);
  return write_direct(resolve_locked(sets, KvBatch{}, true, nullptr, frontier));
}

ApplyResult Replica::apply_locked(const std::vector<ChangeSet>& sets, KvBatch b, bool merge_clock) {
  return write_direct(resolve_locked(sets, std::move(b), merge_clock));
}

void Replica::validate(const std::vector<ChangeSet>& sets, uint64_t now) {
  // Every fact's site is its set's, and no fact is too far ahead of this clock (not only
  // the envelope).
  for (const ChangeSet& set : sets) {
    for (const Change& c : set.changes) {
      if (c.hlc.site != set.site)
        throw sdk::Error(QRS_FORMAT, "sync-store: a change of transaction " + set.transaction_id + " names site " +
                                         c.hlc.site.text() + " but its change set comes from site " + set.site.text() +
                                         ": refused, nothing applied");
      HlcClock::check_drift(c.hlc, now);
      if (c.seen_delete && !(*c.seen_delete < c.hlc))
        throw sdk::Error(QRS_FORMAT, "sync-store: a change of transaction " + set.transaction_id +
                                         " claims to have seen a deletion at or after its own time: refused, nothing "
                                         "applied");
      if (c.kind == Change::Kind::kColumn && c.column.empty())
        throw sdk::Error(QRS_FORMAT, "sync-store: a column change of transaction " + set.transaction_id +
                                         " names no column: refused, nothing applied");
      if (c.kind == Change::Kind::kSchema) {
        HlcClock::check_drift(c.inc, now);
        if (c.born) HlcClock::check_drift(*c.born, now);
      }
    }
  }
}

Replica::Plan Replica::resolve_locked(const std::vector<ChangeSet>& sets, KvBatch b, bool merge_clock,
                                      const SnapshotChunk* snapshot, const std::vector<Hlc>* frontier,
                                      size_t first_set) {
  const uint64_t now = options_.clock();
  Plan plan;
  ApplyResult result;
  result.transactions = sets.size();
  // 1. Validation, before anything is read or written.
  validate(sets, now);
  std::optional<Hlc> max_hlc;
  std::optional<std::map<SiteId, Hlc>> received;  // received_max_, raised by this page
  auto receive = [&](const Hlc& h) {
    if (h.site == site_) return;
    auto known = received ? received->find(h.site) : received_max_.find(h.site);
    if (known != (received ? received->end() : received_max_.end()) && known->second >= h) return;
    if (!received) received = received_max_;
    (*received)[h.site] = h;
  };
  for (size_t i = 0; i < sets.size(); ++i)
    for (const Change& c : sets[i].changes) {
      if (c.kind != Change::Kind::kSchema && (!max_hlc || c.hlc > *max_hlc)) max_hlc = c.hlc;
      // A snapshot chunk's facts come in key order, not in their sites' order: they do not
      // say that everything of a site up to them is here (the frontier this replica tells
      // its peers) until the snapshot is complete (below).
      if (snapshot && i >= snapshot->first_set) continue;
      receive(c.hlc);
    }
  std::map<uint64_t, Mentioned> mentioned;  // a snapshot chunk's rows and tables, per table here
  store::KvStore& kv = db_->kv();
  // 2. Resolution, per row, with no write.
  struct RowWork {
    std::shared_ptr<store::TableState> table;
    std::string row_key;
    std::vector<const Change*> incoming;
    const std::vector<sdk::Value>* pk = nullptr;  // the row's key values (a fact's)
    // A row a snapshot chunk names: the HLCs of the chunk's column facts for it (ours too).
    bool snapshot_row = false;
    std::vector<Hlc> named;
  };
  std::map<std::string, RowWork> rows;  // by row key
  std::vector<std::pair<const Change*, const ChangeSet*>> held;  // for unknown tables
  std::set<std::pair<std::string, std::string>> checked_indexes;
  std::vector<std::tuple<const Change*, const ChangeSet*, const std::string*>> poisoned;  // with the error
  std::map<std::pair<std::string, std::string>, std::shared_ptr<store::TableState>> tables;
  std::optional<std::map<Hlc, uint64_t>> incs;  // incarnation -> table id, read once
  std::map<Hlc, bool> dropped_incs;
  for (const ChangeSet& set : sets) {
    for (const Change& c : set.changes) {
      // Our own change, relayed back: skipped (a snapshot chunk's still says its row is there).
      const bool own = c.hlc.site == site_;
      if (c.kind == Change::Kind::kSchema) {  // the schema phases' (resolve_schema)
        if (snapshot) {
          // A table the snapshot defines: on its last chunk, the rows past what it covered
          // are gone at the source.
          std::optional<uint64_t> id;
          if (c.inc != Hlc{}) {  // by its incarnation, else by name (as a row's table is found)
            if (!incs) incs = incarnation_tables();
            if (auto it = incs->find(c.inc); it != incs->end()) id = it->second;
          }
          if (!id && !c.table.empty()) id = db_->table_id(lower(c.schema.empty() ? "main" : c.schema), lower(c.table));
          if (id && !c.drop && !mentioned.count(*id))
            if (std::shared_ptr<store::TableState> st = db_->live_state(*id); st && replicated(st->schema.table_name))
              mentioned[*id].table = std::move(st);
        }
        continue;
      }
      if (own && !snapshot) {
        ++result.skipped;
        continue;
      }
      auto tk = std::make_pair(lower(c.schema.empty() ? "main" : c.schema), lower(c.table));
      if (c.inc != Hlc{}) {
        // The row's table by its incarnation, whatever it is called here (a concurrent
        // rename), and never another incarnation of the name (a drop and re-create).
        if (!incs) incs = incarnation_tables();
        auto known = dropped_incs.find(c.inc);
        if (known == dropped_incs.end()) known = dropped_incs.emplace(c.inc, incarnation_dropped(c.inc)).first;
        if (known->second) {
          ++result.skipped;  // its table was dropped here: the drop beats it
          continue;
        }
        if (auto it = incs->find(c.inc); it != incs->end())
          if (std::shared_ptr<store::TableState> st = db_->live_state(it->second)) {
            tk = std::make_pair(lower(st->schema.schema_name), lower(st->schema.table_name));
            tables.emplace(tk, st);
          }
      }
      auto t = tables.find(tk);
      if (t == tables.end()) {
        std::shared_ptr<store::TableState> state;
        if (replicated(tk.second))
          if (std::optional<uint64_t> id = db_->table_id(tk.first, tk.second)) state = db_->live_state(*id);
        t = tables.emplace(tk, std::move(state)).first;
      }
      if (!t->second && own) {
        ++result.skipped;
        continue;
      }
      if (!t->second) {
        // A table this replica does not have (yet): held per the disposition, never in the
        // row versions or the change log of rows.
        ++result.unknown_table;
        ++unknown_by_table_[tk.first + "." + tk.second];
        if (options_.unknown_tables == UnknownTables::kIgnore) ++ignored_;
        else held.emplace_back(&c, &set);
        continue;
      }
      const store::TableState& st = *t->second;
      if (!indexes_routed_ && checked_indexes.insert(tk).second && has_index_companions(tk.first, tk.second))
        throw sdk::Error(QRS_UNSUPPORTED,
                         "sync-store: table " + tk.first + "." + st.schema.table_name +
                             " has a secondary index or UNIQUE constraint, which the engine keeps in companion "
                             "tables; the direct apply (sync_apply()) would bypass them: apply through the engine "
                             "instead (Database::sync_apply, the shell's .sync apply; docs/sync-store.md): "
                             "refused, nothing applied");
      if (c.pk.size() != st.codec.size())
        throw sdk::Error(QRS_FORMAT, "sync-store: a change for " + st.schema.table_name + " carries " +
                                         std::to_string(c.pk.size()) + " key values; its primary key has " +
                                         std::to_string(st.codec.size()) + ": refused, nothing applied");
      std::vector<qrs_value> key;
      for (size_t k = 0; k < c.pk.size(); ++k) {
        // A key value of another type than its column would be coerced by the engine onto
        // another row: refused.
        const sdk::Value& v = c.pk[k];
        const qrs_logical_type lt = st.schema.columns[st.schema.primary_key[k].column].logical_type;
        const bool fits = v.is_null() || lt == QRS_LT_ANY ||
                          (lt == QRS_LT_INTEGER && v.type() == sdk::ValueType::kInteger) ||
                          (lt == QRS_LT_REAL && (v.type() == sdk::ValueType::kReal || v.type() == sdk::ValueType::kInteger)) ||
                          (lt == QRS_LT_TEXT && v.type() == sdk::ValueType::kText) ||
                          (lt == QRS_LT_BLOB && v.type() == sdk::ValueType::kBlob) ||
                          (lt == QRS_LT_BOOLEAN && v.type() == sdk::ValueType::kBoolean) ||
                          (lt != QRS_LT_INTEGER && lt != QRS_LT_REAL && lt != QRS_LT_TEXT && lt != QRS_LT_BLOB &&
                           lt != QRS_LT_BOOLEAN);
        if (!fits)
          throw sdk::Error(QRS_FORMAT, "sync-store: a change for " + st.schema.table_name + " carries key value " +
                                           v.debug_string() + " for column " +
                                           st.schema.columns[st.schema.primary_key[k].column].name +
                                           " of another type: refused, nothing applied");
        key.push_back(v.to_c());
      }
      std::string row_key = st.prefix;
      st.codec.encode_key(row_key, key);
      if (snapshot && !snapshot->holds && static_cast<size_t>(&set - sets.data()) >= snapshot->first_set) {
        Mentioned& m = mentioned[st.id];
        if (!m.table) m.table = t->second;
        m.keys.insert(row_key);
        if (!rejected_.count(row_key)) {
          RowWork& w = rows[row_key];
          if (!w.table) {
            w.table = t->second;
            w.row_key = row_key;
          }
          w.pk = &c.pk;
          w.snapshot_row = true;
          if (c.kind == Change::Kind::kColumn) w.named.push_back(c.hlc);
        }
      }
      if (own) {
        ++result.skipped;
        continue;
      }
      if (auto r = rejected_.find(row_key); r != rejected_.end()) {
        poisoned.emplace_back(&c, &set, &r->second);  // its row failed locally: held, reported
        continue;
      }
      RowWork& w = rows[row_key];
      if (!w.table) {
        w.table = t->second;
        w.row_key = row_key;
      }
      w.pk = &c.pk;
      w.incoming.push_back(&c);
    }
  }
  // 3. Each row's new versions and data, into one batch.
  uint64_t seq = next_seq_;
  for (const auto& [c, set] : held) {
    const std::string key = hold_key(*c);
    std::optional<std::string> prior = kv.get(key);
    Hold h;
    if (prior) h = Hold::decode(*prior);
    const bool forward = options_.unknown_tables == UnknownTables::kForward;
    if (!prior && forward) {
      h.seq = seq++;  // a forwardable hold is relayed by delta, in arrival order
      std::string ref(1, '\xFF');
      ref += std::string_view(key).substr(1);
      b.put(log_key(h.seq), ref);
    }
    h.site = set->site;
    h.change = change_to_json(*c);
    h.received = now;
    h.forward = forward || (prior && h.forward);
    b.put(key, h.encode());
    if (forward) ++forwarded_; else ++quarantined_;
  }
  for (const auto& [c, set, error] : poisoned) {
    // A change whose row this replica could not write (a local constraint refused it): held
    // aside with the error, never drained on its own, so the rest of the stream goes on.
    Hold h;
    h.site = set->site;
    h.change = change_to_json(*c);
    h.received = now;
    h.rejected = true;
    h.error = *error;
    b.put(hold_key(*c), h.encode());
    ++plan.result.rejected;
  }
  std::vector<std::pair<uint64_t, std::string>> vbounds;
  std::vector<qrs_value> cells;
  // For a snapshot chunk: whether the source had seen a version of ours — within its
  // frontier (the first chunk's), and a fact of ours at a position it acknowledged. Unset
  // when the snapshot's purge is off (out of order, re-keyed) or it is not a snapshot.
  std::function<bool(const ColumnVersion&)> stale_seen;
  std::map<SiteId, Hlc> snap_frontier;
  uint64_t snap_acked = 0;
  std::optional<PurgeState> ps;
  if (snapshot && !snapshot->holds) {
    if (snapshot->after.empty()) {
      ps.emplace();
      ps->source = snapshot->source;
      for (const Hlc& h : snapshot->frontier)
        ps->frontier.push_back(clamp_claim(h, now));  // (a claim: lowered when far ahead)
    } else {
      ps = load_purge_state();
      if (ps && (ps->source != snapshot->source || ps->off || ps->next != snapshot->after)) ps.reset();
    }
    if (ps && !ps->frontier.empty()) {
      for (const Hlc& h : ps->frontier) snap_frontier[h.site] = h;
      if (std::optional<std::string> v = kv.get(peer_key(snapshot->source)); v && v->size() >= 16)
        snap_acked = get_u64(std::string_view(*v).substr(8, 8));
      stale_seen = [&](const ColumnVersion& c) {
        auto f = snap_frontier.find(c.hlc.site);
        return f != snap_frontier.end() && c.hlc <= f->second && (c.hlc.site != site_ || c.seq <= snap_acked);
      };
    }
  }
  // The last chunk of a snapshot taken in order: everything its source held as it began is
  // here now (or was collected there) — its frontier is ours.
  if (snapshot && snapshot->done && ps && !ps->off)
    for (const Hlc& h : ps->frontier) receive(h);
  if (received) {
    std::string f;
    for (const auto& [site, h] : *received) h.append_to(f);
    b.put(meta_key("frontier"), f);
    plan.received = std::move(received);
  }
  // The page's source frontier (a delta page's, or a snapshot's first chunk's), for
  // following a deletion the source collected (below).
  std::map<SiteId, Hlc> source_frontier;
  if (frontier) {
    for (const Hlc& f : *frontier) {
      const Hlc h = clamp_claim(f, now);
      if (auto [it, fresh] = source_frontier.try_emplace(h.site, h); !fresh && h > it->second) it->second = h;
    }
  } else if (stale_seen) {
    source_frontier = snap_frontier;
  }
  const size_t page_first = snapshot ? snapshot->first_set : first_set;
  auto from_page = [&](const Change* c) {
    for (size_t i = page_first; i < sets.size(); ++i) {
      const std::vector<Change>& v = sets[i].changes;
      if (!v.empty() && c >= v.data() && c < v.data() + v.size()) return true;
    }
    return false;
  };
  std::optional<uint64_t> acked;  // read when first needed
  uint64_t new_floor = floor_, new_own_floor = own_floor_;
  // The column (lower-case, as here) a column fact is about, if this replica has it. A
  // column is known by its birth: a fact written under a name it had before a rename (here
  // or there) is a fact about it under its name here.
  std::map<uint64_t, std::map<Hlc, std::string>> column_births;  // per table: birth -> column
  auto column_here = [&](const RowWork& w, const Change* c) -> std::optional<std::string> {
    std::string name = lower(c->column);
    if (c->born) {
      auto births = column_births.find(w.table->id);
      if (births == column_births.end()) {
        births = column_births.emplace(w.table->id, std::map<Hlc, std::string>{}).first;
        const std::map<std::string, PartVersion> parts = parts_of(w.table->id);
        const std::set<std::string> shadowed = shadowed_columns(parts);
        for (const auto& [part, v] : parts)
          if (part.starts_with("col:") && !v.drop && !shadowed.count(part)) births->second.emplace(v.born, part.substr(4));
      }
      if (auto b = births->second.find(*c->born); b != births->second.end()) name = b->second;
    }
    for (const std::string& n : lowered_names(*w.table))
      if (n == name) return name;
    return std::nullopt;
  };
  for (auto& [row_key, w] : rows) {
    std::sort(w.incoming.begin(), w.incoming.end(), [](const Change* a, const Change* b) { return a->hlc < b->hlc; });
    const std::string vkey = versions_key(row_key);
    std::optional<std::string> current;  // the stored row
    bool recorded = false;               // versions under 21 (a deleted row's)
    std::optional<RowVersions> found = load_versions(kv, site_, lists_, row_key, current, &recorded);
    RowVersions m = found ? std::move(*found) : RowVersions{};
    const std::optional<Hlc> prior = m.tombstone;  // the deletion held here before the page
    const std::vector<uint64_t> before = m.seqs();
    bool changed = false;
    std::map<std::string, const sdk::Value*> touched;  // columns this batch won, and their values
    // Deletions first: the newest one is the row's tombstone.
    for (const Change* c : w.incoming) {
      if (c->kind != Change::Kind::kDelete) continue;
      if (m.tombstone && *m.tombstone >= c->hlc) {
        ++result.skipped;
        continue;
      }
      m.tombstone = c->hlc;
      m.tombstone_seq = seq;
      m.tombstone_created = now;
      ++result.applied;
      changed = true;
    }
    // Versions the tombstone now covers leave the row.
    const size_t had = m.columns.size();
    std::erase_if(m.columns, [&](const ColumnVersion& c) { return !m.valid(c, options_.allow_resurrection); });
    bool lost_columns = m.columns.size() != had;
    changed = changed || lost_columns;
    // A deletion held here that blocks a fact of the page, though the page's source had that
    // deletion (its frontier covers it) and has the fact live: the source collected the
    // deletion before the fact reached it (a write delayed past its horizon), or re-created
    // the row after collecting it (its write then names no deletion seen). Kept, it would
    // block the fact here for good while the source and all it feeds have the row (found by
    // chaos with short horizons): this replica collects it too, as the source did — the
    // floor moves as in prune_tombstones, and a deletion of ours goes only once every peer
    // we push to has acknowledged it (docs/sync-store.md "Following a collected deletion").
    if (m.tombstone && m.tombstone == prior && !source_frontier.empty()) {
      auto f = source_frontier.find(m.tombstone->site);
      bool follow = f != source_frontier.end() && *m.tombstone <= f->second;
      if (follow && m.tombstone->site == site_) {
        if (!acked) acked = acknowledged_locked();
        follow = m.tombstone_seq <= *acked;
      }
      if (follow) {
        // A fact of the page the deletion blocks, of a column this replica has. Not one older
        // than a deletion of its own site: that site deleted the row after writing it, so the
        // fact can be live at the source only if the deletion was lost there (a replica
        // restored from an older copy), not collected (found by review).
        follow = false;
        for (const Change* c : w.incoming)
          if (c->kind == Change::Kind::kColumn &&
              !m.valid(ColumnVersion{"", c->hlc, 0, c->seen_delete}, options_.allow_resurrection) &&
              !(c->hlc.site == m.tombstone->site && c->hlc < *m.tombstone) && from_page(c) && column_here(w, c))
            follow = true;
      }
      if (follow) {
        new_floor = std::max(new_floor, m.tombstone_seq);
        if (m.tombstone->site == site_) new_own_floor = std::max(new_own_floor, m.tombstone_seq);
        m.tombstone.reset();
        m.tombstone_seq = 0;
        m.tombstone_created = 0;
        m.address.clear();
        m.image.clear();
        changed = true;
        ++result.followed;
      }
    }
    const auto& schema_cols = w.table->schema.columns;
    // A row a snapshot chunk names without the fact of one of our columns that the source
    // had seen: the source deleted the row after that fact (its tombstone collected since)
    // and the row came back there without it. The column goes here too, before the chunk's
    // facts merge (one of them, older than ours, may be the column's value there): it takes
    // the column's default, as the row re-created there did (`PlanRow::defaulted`), with no
    // version; otherwise the two keep different values for good (found by chaos with short
    // horizons). Key columns stay. A NOT NULL column keeps its value in the row the plan
    // writes: the host gives it its default, or keeps the value when it has none (such a
    // column could not have come back there without a fact, so the chunk holds one).
    std::set<std::string> cleared;
    if (w.snapshot_row && stale_seen) {
      std::erase_if(m.columns, [&](const ColumnVersion& c) {
        if (!stale_seen(c) || std::find(w.named.begin(), w.named.end(), c.hlc) != w.named.end()) return false;
        if (!clearable(*w.table, c.name)) return false;
        cleared.insert(c.name);
        return true;
      });
      if (!cleared.empty()) {
        changed = true;
        lost_columns = true;
      }
    }
    for (const Change* c : w.incoming) {
      if (c->kind != Change::Kind::kColumn) continue;
      const std::optional<std::string> here = column_here(w, c);
      if (!here) {
        ++result.skipped;  // a column this replica does not have (dropped here, or newer)
        continue;
      }
      const std::string& name = *here;
      ColumnVersion fresh{name, c->hlc, seq, c->seen_delete};
      if (!m.valid(fresh, options_.allow_resurrection)) {
        ++result.skipped;  // blocked by the deletion
        continue;
      }
      ColumnVersion* cur = m.column(name);
      if (cur && cur->hlc == c->hlc) {
        ++result.skipped;  // a duplicate
        continue;
      }
      if (cur && !fresh.outranks(*cur, options_.allow_resurrection)) {
        ++result.conflicts;  // the local version wins
        continue;
      }
      if (cur) *cur = std::move(fresh); else m.columns.push_back(std::move(fresh));
      touched[name] = &c->value;
      ++result.applied;
      changed = true;
    }
    if (!changed) continue;
    if (m.tombstone) m.address = encode_values(*w.pk);
    // The data: the row as its versions say, over what is stored. A row this batch deleted
    // (or whose columns a deletion took) restarts from its key and NULLs.
    if (m.tombstone && m.tombstone_seq == seq && m.columns.empty() && current) {
      // The row as it was here, for a re-keying ALTER to move the tombstone with it.
      std::vector<qrs_value> was;
      store::decode_row(*current, was, w.table->schema.table_name);
      m.image = RowVersions::image_of(was, schema_cols);
    }
    std::string row;
    if (!m.columns.empty()) {
      const bool reset = lost_columns || (m.tombstone && m.tombstone_seq == seq);
      std::vector<sdk::Value> values(schema_cols.size());
      if (current) store::decode_row(*current, cells, w.table->schema.table_name); else cells.clear();
      const std::vector<sdk::Value>& pk = *w.pk;
      std::vector<bool> is_key(schema_cols.size(), false);
      std::vector<size_t> member_of(schema_cols.size(), 0);
      for (size_t k = 0; k < w.table->schema.primary_key.size() && k < pk.size(); ++k) {
        values[w.table->schema.primary_key[k].column] = pk[k];
        is_key[w.table->schema.primary_key[k].column] = true;
        member_of[w.table->schema.primary_key[k].column] = k;
      }
      auto same_identity = [&](size_t column, const sdk::Value& v) {
        const store::KeyMember& km = w.table->codec.member(member_of[column]);
        std::string x, y;
        store::encode_component(x, v.to_c(), km.normalizer, km.desc);
        store::encode_component(y, pk[member_of[column]].to_c(), km.normalizer, km.desc);
        return x == y;
      };
      for (size_t i = 0; i < schema_cols.size(); ++i) {
        const std::string name = lower(schema_cols[i].name);
        if (auto t = touched.find(name); t != touched.end()) {
          // A key column's fact may change its spelling (NOCASE 'abc' -> 'ABC'), never the
          // row it addresses: a value of another identity is ignored.
          if (!is_key[i] || same_identity(i, *t->second)) values[i] = *t->second;
        } else if (i < cells.size() && cleared.count(name)) {
          if (schema_cols[i].not_null) values[i] = sdk::Value::from_c(cells[i]);  // the host's to default
        } else if (i < cells.size() && (!reset || m.column(name) || !options_.allow_resurrection)) {
          // (When deletions win, a re-created row's every column has a fact from the
          // re-insert but one an ADD COLUMN backfilled since, which keeps its backfill here.)
          values[i] = sdk::Value::from_c(cells[i]);
        }
      }
      row = encode_values(values);
    }
    bool host_writes = false;  // the plan writes the row (it lands with its sidecar)
    if (!m.columns.empty()) {
      if (!current || store::row_body(*current) != row) {
        host_writes = true;
        plan.rows.push_back({w.table, row_key, false, std::move(row), current.has_value(), {}, {}});
        for (const std::string& name : cleared)
          if (!touched.count(name)) plan.rows.back().defaulted.push_back(name);
        // A new row: its columns without a fact were filled by an ADD COLUMN's default at the
        // origin, and are left to the engine's default here. So is a row re-created after a
        // deletion when deletions win (its valid versions were all written after seeing the
        // deletion: a re-insert versions every column, so a fact-less one is a backfill);
        // with resurrection a row revived by an update starts from its key and NULLs.
        if (!current && (!m.tombstone || !options_.allow_resurrection)) {
          std::vector<bool>& v = plan.rows.back().versioned;
          v.resize(schema_cols.size());
          for (size_t i = 0; i < schema_cols.size(); ++i) v[i] = m.column(lower(schema_cols[i].name)) != nullptr;
          for (const auto& k : w.table->schema.primary_key) v[k.column] = true;  // the row's address
        }
      }
    } else if (current) {
      plan.rows.push_back({w.table, row_key, true, {}, true, {}, {}});
    }
    plan.keys.insert(row_key);
    const std::vector<uint64_t> after = m.seqs();
    drop_unreferenced_log(before, after, b);
    if (!m.columns.empty()) {
      // A live row: its versions ride in its entry, written by the plan's row or, when the
      // row's values are as stored, rewritten here with them.
      m.image.clear();
      if (host_writes) {
        plan.sidecars[row_key] = m.encode(site_);
      } else {
        std::string wrapped;
        wrap_versions(wrapped, m, *current, site_);
        b.put(row_key, wrapped);
      }
      if (recorded) b.del(vkey);
    } else if (!m.tombstone) {
      if (recorded) b.del(vkey);  // nothing left of the row (a followed deletion, no fact won)
    } else {
      b.put(vkey, m.encode(site_));
      vbounds.emplace_back(w.table->id, vkey);
    }
    if (std::binary_search(after.begin(), after.end(), seq)) b.put(log_key(seq), std::string_view(row_key).substr(1));
    ++seq;
  }
  if (snapshot) result.purged = purge_absent(*snapshot, mentioned, plan, b);
  if (result.followed) {
    plan.floor = new_floor;
    plan.own_floor = new_own_floor;
    b.put(meta_key("floor"), u64(new_floor));
    b.put(meta_key("own_floor"), u64(new_own_floor));
  }
  plan.clock = clock_;
  if (max_hlc && merge_clock) plan.clock.receive(*max_hlc, now);
  plan.next_seq = seq;
  plan.vbounds = std::move(vbounds);
  if (!b.empty() || plan.clock.wall() != clock_.wall() || plan.clock.counter() != clock_.counter()) {
    b.put(meta_key("clock"), plan.clock.state());
    b.put(meta_key("seq"), u64(seq));
  }
  plan.meta = std::move(b);
  result.rejected = plan.result.rejected;
  plan.result = result;
  return plan;
}

// Whether a table's key definition changed between two key epochs of a source (a table
// made meanwhile is no change).
static bool rekeyed_since(std::string_view first, std::string_view now) {
  auto entries = [](std::string_view e) {
    std::map<std::string_view, std::string_view> m;
    for (size_t at = 0; at < e.size();) {
      const size_t end = std::min(e.find(';', at), e.size()), eq = e.find('=', at);
      if (eq < end) m.emplace(e.substr(at, eq - at), e.substr(eq + 1, end - eq - 1));
      at = end + 1;
    }
    return m;
  };
  const auto a = entries(first), b = entries(now);
  for (const auto& [table, hash] : b)
    if (auto f = a.find(table); f != a.end() && f->second != hash) return true;
  return false;
}

uint64_t Replica::purge_absent(const SnapshotChunk& chunk, const std::map<uint64_t, Mentioned>& mentioned, Plan& plan,
                               KvBatch& b) {
  // The snapshot's progress is one record (PurgeState). A candidate (a row in a covered
  // range the chunk did not name) is recorded under `20 "purge" 00 ‖ row key` and judged
  // only on the last chunk, once every row the snapshot sends has landed: a purge earlier
  // would cascade into rows a later chunk brings.
  const std::string skey = meta_key("purge");
  const std::string cprefix = skey + '\0';
  store::KvStore& kv = db_->kv();
  std::optional<PurgeState> st = load_purge_state();
  auto drop_candidates = [&]() { drop_purge_candidates(b); };
  if (chunk.after.empty()) {
    drop_candidates();  // a snapshot begins (again): whatever an earlier one left goes
    st.emplace();
    st->source = chunk.source;
    const uint64_t now = options_.clock();
    for (const Hlc& h : chunk.frontier) st->frontier.push_back(clamp_claim(h, now));  // (as resolve_locked)
    st->epoch = chunk.key_epoch;
  } else if (!st || st->source != chunk.source) {
    if (st) drop_candidates();
    st.emplace();
    st->source = chunk.source;
    st->off = true;
  } else if (st->next != chunk.after) {
    if (st->next == chunk.next && !chunk.done) return 0;  // this chunk again (its checkpoint was not saved): done already
    st->off = true;
  }
  if (rekeyed_since(st->epoch, chunk.key_epoch)) st->off = true;
  uint64_t purged = 0;
  if (!st->off) {
    // The rows of `t` in (lo, hi] (lo empty: from the first; hi absent: to the last) that
    // the chunk does not name: `out` (the last chunk's, judged now) or recorded candidates.
    std::vector<std::pair<std::shared_ptr<store::TableState>, std::string>> judge;
    auto absent = [&](const std::shared_ptr<store::TableState>& t, const std::string& lo, const std::string* hi,
                      const std::set<std::string>* named) {
      const std::string from = lo.empty() ? t->prefix : lo + '\0';
      const std::string to = hi ? *hi + '\0' : prefix_end(t->prefix);
      if (from >= to) return;
      auto it = kv.iterate(KvRange{from, to}, false);
      for (; it->valid(); it->next()) {
        std::string key(it->key());
        if ((named && named->count(key)) || plan.keys.count(key)) continue;
        if (chunk.done) {
          judge.emplace_back(t, std::move(key));
        } else {
          b.put(cprefix + key, "");
          st->with_candidates.insert(t->id);
        }
      }
      it->check();
    };
    for (const auto& [id, m] : mentioned) {
      std::string& covered = st->covered[id];
      // A candidate a later chunk names after all (a row moved by a key change) is not one
      // (candidates lie at or below what was covered).
      if (st->with_candidates.count(id))
        for (const std::string& k : m.keys) {
          if (k > covered) break;
          b.del(cprefix + k);
        }
      if (m.keys.empty()) continue;  // defined by the chunk, no rows yet
      const std::string& hi = *m.keys.rbegin();
      if (!covered.empty() && hi <= covered) continue;
      absent(m.table, covered, &hi, &m.keys);
      covered = hi;
    }
    if (chunk.done) {
      // The last chunk: each table the snapshot defined or sent rows of has nothing past
      // what it covered; then every candidate is judged.
      for (const auto& [id, covered] : st->covered) {
        std::shared_ptr<store::TableState> t = db_->live_state(id);
        if (!t || !replicated(t->schema.table_name)) continue;
        auto m = mentioned.find(id);
        absent(t, covered, nullptr, m == mentioned.end() ? nullptr : &m->second.keys);
      }
      std::vector<std::pair<std::string, std::shared_ptr<store::TableState>>> tables;  // by row prefix
      for (const auto& [id, covered] : st->covered)
        if (std::shared_ptr<store::TableState> t = db_->live_state(id); t && replicated(t->schema.table_name))
          tables.emplace_back(t->prefix, std::move(t));
      // (A snapshot in one chunk has no candidates: any stored are an earlier one's, going.)
      auto it = kv.iterate(KvRange{cprefix, chunk.after.empty() ? cprefix : prefix_end(cprefix)}, false);
      for (; it->valid(); it->next()) {
        std::string key(it->key().substr(cprefix.size()));
        b.del(it->key());
        if (plan.keys.count(key)) continue;
        bool named = false;
        for (const auto& [id, m] : mentioned) named = named || m.keys.count(key);
        if (named) continue;
        for (const auto& [prefix, t] : tables)
          if (key.starts_with(prefix)) judge.emplace_back(t, key);
      }
      it->check();
      // Each fact must be within the source's frontier, and a fact of ours also at a log
      // position the source acknowledged (a write pushed since, or never, stays).
      std::map<SiteId, Hlc> frontier;
      for (const Hlc& h : st->frontier) frontier[h.site] = h;
      uint64_t acked = 0;
      if (std::optional<std::string> v = kv.get(peer_key(chunk.source)); v && v->size() >= 16)
        acked = get_u64(std::string_view(*v).substr(8, 8));
      auto within = [&](const Hlc& h) {
        auto f = frontier.find(h.site);
        return f != frontier.end() && h <= f->second;
      };
      // Children before parents, as far as table order tells (a child table is usually made
      // after its parent): a parent whose child the source deleted too is not refused.
      std::stable_sort(judge.begin(), judge.end(), [](const auto& x, const auto& y) { return x.first->id > y.first->id; });
      std::set<std::string> judged;
      for (auto& [t, key] : judge) {
        if (!judged.insert(key).second || rejected_.count(key)) continue;  // (a purge this database refused stays)
        std::optional<std::string> row;
        bool recorded = false;
        const std::optional<RowVersions> m = load_versions(kv, site_, lists_, key, row, &recorded);
        // A row without versions here is never the snapshot's to judge.
        if (!row || !m || m->columns.empty()) continue;
        auto seen = [&](const ColumnVersion& c) { return within(c.hlc) && (c.hlc.site != site_ || c.seq <= acked); };
        bool known = !m->tombstone || within(*m->tombstone);
        for (const ColumnVersion& c : m->columns) known = known && seen(c);
        if (!known) {
          // The row stays (a fact of it the source does not have yet: when that arrives
          // there, the row comes back with it). But the source has seen its other columns'
          // facts and has no row: it deleted the row after them, and the row it gets back has
          // none of them. Those columns go here too (NULL, no version), or the two would keep
          // different values for good (found by chaos: an update of one column, made while
          // offline past the horizon, kept the deleted row's other values here only). The key
          // columns stay: they are the row's address. (A row kept only for its tombstone, every
          // column seen, keeps its columns: no fact of it brings the row back there. Found by
          // review.)
          bool kept_for_a_column = false;
          for (const ColumnVersion& c : m->columns) kept_for_a_column = kept_for_a_column || !seen(c);
          if (!kept_for_a_column) continue;
          const std::span<const std::string> names = lowered_names(*t);
          RowVersions kept = *m;
          std::vector<qrs_value> cells;
          store::decode_row(store::row_body(*row), cells, t->schema.table_name);
          std::vector<std::string> defaulted;
          for (size_t i = 0; i < names.size() && i < cells.size(); ++i) {
            const ColumnVersion* c = kept.column(names[i]);
            if (!c || !seen(*c) || !clearable(*t, names[i])) continue;
            std::erase_if(kept.columns, [&](const ColumnVersion& x) { return x.name == names[i]; });
            if (!t->schema.columns[i].not_null) {  // a NOT NULL one: the host's to default (above)
              cells[i] = qrs_value{};
              cells[i].type = QRS_TYPE_NULL;
            }
            defaulted.push_back(names[i]);
          }
          if (defaulted.empty()) continue;
          kept.tombstone.reset();
          kept.image.clear();
          plan.rows.push_back({t, key, false, store::encode_row(cells), true, {}, std::move(defaulted)});
          plan.keys.insert(key);
          plan.sidecars[key] = kept.encode(site_);
          drop_unreferenced_log(m->seqs(), kept.seqs(), b);
          if (recorded) b.del(versions_key(key));
          continue;
        }
        plan.rows.push_back({t, key, true, {}, true, {}, {}});
        plan.keys.insert(key);
        drop_unreferenced_log(m->seqs(), {}, b);
        if (recorded) b.del(versions_key(key));
        ++purged;
      }
    }
  }
  if (chunk.done) {
    if (st->off) drop_candidates();
    b.del(skey);
    return purged;
  }
  st->next = chunk.next;
  save_purge_state(*st, b);
  return purged;
}

bool Replica::clearable(const store::TableState& table, std::string_view column) {
  const auto& cols = table.schema.columns;
  for (size_t i = 0; i < cols.size(); ++i) {
    if (lower(cols[i].name) != column) continue;
    for (const auto& k : table.schema.primary_key)
      if (k.column == i) return false;
    return true;
  }
  return false;
}

std::optional<Replica::PurgeState> Replica::load_purge_state() {
  std::optional<std::string> rec = db_->kv().get(meta_key("purge"));
  if (!rec) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(*rec, nullptr, false);
  std::optional<SiteId> source = j.is_object() ? SiteId::parse(j.value("source", std::string())) : std::nullopt;
  std::optional<std::string> next = j.is_object() ? base64_decode(j.value("next", std::string())) : std::nullopt;
  if (!source || !next) return std::nullopt;
  PurgeState st;
  st.source = *source;
  st.next = std::move(*next);
  st.epoch = j.value("epoch", std::string());
  st.off = j.value("off", true);
  for (const auto& h : j.value("frontier", nlohmann::json::array()))
    if (auto x = h.is_string() ? Hlc::parse(h.get<std::string>()) : std::nullopt) st.frontier.push_back(*x);
  for (const auto& c : j.value("covered", nlohmann::json::array()))
    if (c.is_array() && c.size() == 2 && c[0].is_number_unsigned() && c[1].is_string())
      if (auto k = base64_decode(c[1].get<std::string>())) st.covered[c[0].get<uint64_t>()] = std::move(*k);
  for (const auto& id : j.value("candidates", nlohmann::json::array()))
    if (id.is_number_unsigned()) st.with_candidates.insert(id.get<uint64_t>());
  return st;
}

void Replica::save_purge_state(const PurgeState& st, KvBatch& b) {
  nlohmann::json j{{"source", st.source.text()}, {"next", base64(st.next)}, {"off", st.off}, {"epoch", st.epoch}};
  nlohmann::json f = nlohmann::json::array(), c = nlohmann::json::array();
  for (const Hlc& h : st.frontier) f.push_back(h.text());
  for (const auto& [id, key] : st.covered) c.push_back(nlohmann::json::array({id, base64(key)}));
  j["frontier"] = std::move(f);
  j["covered"] = std::move(c);
  j["candidates"] = st.with_candidates;
  b.put(meta_key("purge"), j.dump());
}

void Replica::drop_purge_candidates(KvBatch& b) {
  const std::string cprefix = meta_key("purge") + '\0';
  auto it = db_->kv().iterate(KvRange{cprefix, prefix_end(cprefix)}, false);
  for (; it->valid(); it->next()) b.del(it->key());
  it->check();
}

void Replica::plan_landed(const Plan& plan) {
  if (db_->in_schema_scope()) {
    // Rows committed inside a schema-change scope (a page's "before" phase and its data, one
    // batch): on disk only once the scope lands; until then the watermarks stay where the
    // disk has them, or a rolled-back scope would leave this replica believing it holds
    // what it never wrote (and never asking for it again).
    if (!scope_) scope_.emplace();
    scope_->landings.push_back({plan.received, plan.floor, plan.own_floor});
    return;
  }
  if (plan.floor) floor_ = std::max(floor_, *plan.floor);
  if (plan.own_floor) own_floor_ = std::max(own_floor_, *plan.own_floor);
  if (plan.received)
    for (const auto& [site, h] : *plan.received)
      if (auto [it, fresh] = received_max_.try_emplace(site, h); !fresh && h > it->second) it->second = h;
}

ApplyResult Replica::write_direct(Plan plan) {
  if (plan.meta.empty()) return plan.result;
  KvBatch b;
  std::map<store::TableState*, int64_t> deltas;
  std::set<std::string_view> written;
  std::string wrapped;
  for (const PlanRow& r : plan.rows) {
    if (r.deletion) {
      b.del(r.key);
      --deltas[r.table.get()];
    } else {
      auto sc = plan.sidecars.find(r.key);
      if (sc != plan.sidecars.end()) {
        store::wrap_row(wrapped, sc->second, r.row);
        b.put(r.key, wrapped);
        written.insert(sc->first);
      } else {
        b.put(r.key, r.row);
      }
      if (!r.existed) ++deltas[r.table.get()];
    }
  }
  land_unwritten_sidecars(plan, written, b, plan.vbounds);
  for (const auto& [t, d] : deltas) {
    if (d == 0) continue;
    std::string v;
    store::put_varint(v, static_cast<uint64_t>(std::max<int64_t>(t->row_count + d, 0)));
    b.put(store::StoreDb::stats_key(t->id), v);
  }
  plan.meta.for_each([&](std::string_view k, std::string_view v) { b.put(k, v); },
                     [&](std::string_view k) { b.del(k); });
  for (const PlanRow& r : plan.rows) db_->touch(r.table);  // inside a schema scope: restored if it rolls back
  db_->write_batch(b);
  for (const auto& [t, d] : deltas) t->row_count = std::max<int64_t>(t->row_count + d, 0);
  for (const PlanRow& r : plan.rows)
    if (!r.deletion) r.table->raise_bound(r.key);
  for (const auto& [id, key] : plan.vbounds) raise_versions_bound(id, key);
  // Never backwards: a local commit or DDL since the plan was resolved may have moved on.
  clock_.advance_to(plan.clock.wall(), plan.clock.counter());
  next_seq_ = std::max(next_seq_, plan.next_seq);
  plan_landed(plan);
  ++applied_batches_;
  return plan.result;
}

static std::string pushed_key(const SiteId& pusher) { return meta_key("pushed") + '\0' + pusher.text(); }

uint64_t Replica::pushed_through(const SiteId& pusher) {
  std::optional<std::string> v = db_->kv().get(pushed_key(pusher));
  return v && v->size() == 8 ? get_u64(*v) : 0;
}

std::string Replica::resolve_for_engine(std::vector<ChangeSet> sets, const SnapshotChunk* snapshot,
                                        const PushOrigin* origin, const std::vector<Hlc>* frontier) {
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  if (pending_)
    throw sdk::Error::misuse("sync-store: an engine-routed apply is already pending (token " +
                             std::to_string(pending_->token) + "); finish or abandon it first");
  // A result with nothing applied (the host finishes it like any other).
  auto refuse = [&](const ApplyResult& r) {
    const uint64_t token = next_token_++;
    nlohmann::json reply{{"token", token}, {"rows", nlohmann::json::array()}, {"result", nlohmann::json::parse(result_to_json(r))}};
    pending_ = Pending{token, false, false};
    pending_plan_ = Plan{};
    pending_plan_->result = r;
    return reply.dump();
  };
  // The holds of tables that exist now drain in the same unit, through the engine too.
  std::vector<ChangeSet> all;
  KvBatch seed;
  if (origin) {
    // A push holds its pusher's own writes only; one that starts past what we have of the
    // pusher (we were restored from an older copy since it last pushed) would leave a gap
    // for good, and a frontier claiming the writes in it: refused, the pusher goes back.
    for (const ChangeSet& s : sets)
      if (s.site != origin->site)
        throw sdk::Error(QRS_FORMAT, "sync-store: a push from site " + origin->site.text() +
                                         " holds a change set of site " + s.site.text() + "; nothing applied");
    const uint64_t have = pushed_through(origin->site);
    if (origin->after > have) {
      ApplyResult r;
      r.push_gap = have;
      return refuse(r);
    }
    if (origin->through > have) seed.put(pushed_key(origin->site), u64(origin->through));
  }
  if (snapshot && !snapshot->after.empty()) {
    // A source that re-keyed a table since its snapshot began now addresses that table's
    // rows by a key this replica does not have yet (the key change comes by delta, after
    // the snapshot): nothing of the chunk is applied, the snapshot is taken again (its
    // first chunks carry the new definition).
    std::optional<PurgeState> st = load_purge_state();
    if (st && st->source == snapshot->source && rekeyed_since(st->epoch, snapshot->key_epoch)) {
      KvBatch b;
      b.del(meta_key("purge"));
      drop_purge_candidates(b);
      db_->write_batch(b);
      ApplyResult r;
      r.restart_snapshot = true;
      return refuse(r);
    }
  }
  const uint64_t drained = collect_holds(all, seed);
  std::optional<SnapshotChunk> chunk;  // its mentions are the page's own sets, not the drained holds
  if (snapshot) {
    chunk = *snapshot;
    chunk->first_set = all.size();
  }
  const size_t first_set = all.size();
  if (all.empty()) all = std::move(sets);  // (the page's sets are moved, not copied)
  else all.insert(all.end(), std::make_move_iterator(sets.begin()), std::make_move_iterator(sets.end()));
  indexes_routed_ = true;  // the engine maintains companions: no refusal
  Plan plan;
  try {
    plan = resolve_locked(all, std::move(seed), true, chunk ? &*chunk : nullptr, frontier, first_set);
    drained_ += drained;
  } catch (...) {
    indexes_routed_ = false;
    throw;
  }
  indexes_routed_ = false;
  // The plan is written as text directly (no document: for a big page, building one and
  // dumping it cost as much as the resolve). The form is the one the host reads.
  std::string reply = "{\"rows\":[";
  reply.reserve(64 + plan.rows.size() * 96);
  std::vector<qrs_value> cells;
  bool first_row = true;
  auto names = [&](const char* member, auto&& each) {
    reply += ",\"";
    reply += member;
    reply += "\":[";
    bool first = true;
    each([&](const std::string& name) {
      if (!first) reply.push_back(',');
      first = false;
      append_json_string(reply, name);
    });
    reply.push_back(']');
  };
  auto values = [&](const char* member, auto&& each) {
    reply += ",\"";
    reply += member;
    reply += "\":[";
    bool first = true;
    each([&](const qrs_value& v) {
      if (!first) reply.push_back(',');
      first = false;
      append_value_json(reply, v);
    });
    reply.push_back(']');
  };
  for (const PlanRow& r : plan.rows) {
    const sdk::TableSchema& ts = r.table->schema;
    std::optional<std::string> current;
    if (r.deletion || r.existed) {
      // The key as stored now (its values in the row being deleted or updated).
      current = db_->kv().get(r.key);
      if (!current) continue;
    }
    reply += first_row ? "{\"schema\":" : ",{\"schema\":";
    first_row = false;
    append_json_string(reply, ts.schema_name);
    reply += ",\"table\":";
    append_json_string(reply, ts.table_name);
    reply += r.deletion ? ",\"op\":\"delete\"" : ",\"op\":\"upsert\"";
    auto key_names = [&](auto&& put) {
      for (const auto& k : ts.primary_key) put(ts.columns[k.column].name);
    };
    auto key_values = [&](auto&& put) {
      for (const auto& k : ts.primary_key) put(cells.at(k.column));
    };
    if (r.deletion) {
      store::decode_row(*current, cells, ts.table_name);
      names("key", key_names);
      values("values", key_values);
    } else {
      // An existing row is updated in place by its stored key (a REPLACE would delete it
      // first and run its children's ON DELETE actions); a new one is inserted.
      reply += r.existed ? ",\"existed\":true" : ",\"existed\":false";
      if (r.existed) {
        store::decode_row(*current, cells, ts.table_name);
        names("key", key_names);
        values("keyValues", key_values);
        if (!r.defaulted.empty())
          names("defaulted", [&](auto&& put) {
            for (const std::string& name : r.defaulted)
              for (const auto& c : ts.columns)
                if (lower(c.name) == name) put(c.name);
          });
      }
      store::decode_row(r.row, cells, ts.table_name);
      auto written = [&](size_t i) { return r.existed || i >= r.versioned.size() || r.versioned[i]; };  // else the engine's default
      names("columns", [&](auto&& put) {
        for (size_t i = 0; i < ts.columns.size() && i < cells.size(); ++i)
          if (written(i)) put(ts.columns[i].name);
      });
      values("values", [&](auto&& put) {
        for (size_t i = 0; i < ts.columns.size() && i < cells.size(); ++i)
          if (written(i)) put(cells[i]);
      });
    }
    reply.push_back('}');
  }
  const uint64_t token = next_token_++;
  reply += "],\"token\":" + std::to_string(token) + ",\"result\":" + result_to_json(plan.result) + "}";
  pending_ = Pending{token, false, false};
  pending_plan_ = std::move(plan);
  return reply;
}

void Replica::arm(uint64_t token) {
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  if (!pending_ || pending_->token != token)
    throw sdk::Error::misuse("sync-store: no pending engine-routed apply with token " + std::to_string(token));
  pending_->armed = true;
}

std::string Replica::finish(uint64_t token) {
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  if (!pending_ || pending_->token != token)
    throw sdk::Error::misuse("sync-store: no pending engine-routed apply with token " + std::to_string(token));
  ApplyResult result = pending_plan_->result;
  if (pending_->stale) {
    pending_.reset();
    pending_plan_.reset();
    throw sdk::Error(QRS_BUSY, "sync-store: another connection committed while a sync apply was being written; "
                               "apply the page again");
  }
  if (!pending_->written && !pending_plan_->rows.empty()) {
    // The host's rows wait in a group commit another connection's open transaction holds
    // back: the plan stays armed and lands with them.
    pending_->finish_requested = true;
    nlohmann::json r = nlohmann::json::parse(result_to_json(result));
    r["deferred"] = true;
    return r.dump();
  }
  if (!pending_->written) {
    // No commit batch took the plan: the host wrote no row (every one was value-identical,
    // or the plan had only metadata); its metadata lands alone.
    Plan plan = std::move(*pending_plan_);
    plan.rows.clear();
    write_direct(std::move(plan));
  }
  pending_.reset();
  pending_plan_.reset();
  rejected_.clear();
  rejected_total_ += result.rejected;
  return result_to_json(result);
}

void Replica::abandon(uint64_t token, std::optional<size_t> reject_row, std::string error) {
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  if (pending_ && pending_->token == token) {
    if (pending_->written) {  // its batch landed: nothing to drop, the plan is done
      pending_.reset();
      pending_plan_.reset();
      return;
    }
    // The host could not write row `reject_row` of the plan: the next resolve holds that
    // row's incoming changes aside (poison isolation) until an apply finishes.
    if (reject_row && *reject_row < pending_plan_->rows.size())
      rejected_[pending_plan_->rows[*reject_row].key] = std::move(error);
    pending_.reset();
    pending_plan_.reset();
  }
}

bool Replica::has_index_companions(std::string_view schema, std::string_view table) {
  // Companions are registered as `<table>$idx$<index>` beside their table.
  const std::string lo = store::StoreDb::registry_key(schema, std::string(table) + "$idx$");
  auto it = db_->kv().iterate(KvRange{lo, prefix_end(lo)}, false);
  const bool any = it->valid();
  it->check();
  return any;
}

// ---- holds (unknown tables) ----

std::string Hold::encode() const {
  std::string out(reinterpret_cast<const char*>(site.bytes.data()), site.bytes.size());
  store::put_varint(out, received);
  store::put_varint(out, seq);
  out.push_back(static_cast<char>((forward ? 1 : 0) | (rejected ? 2 : 0)));
  if (rejected) put_prefixed(out, error);
  out += change;
  return out;
}

Hold Hold::decode(std::string_view bytes) {
  Reader r{bytes};
  Hold h;
  std::string_view site = r.bytes(16);
  std::copy_n(reinterpret_cast<const uint8_t*>(site.data()), 16, h.site.bytes.begin());
  h.received = r.varint();
  h.seq = r.varint();
  const uint8_t flags = r.byte();
  h.forward = flags & 1;
  h.rejected = flags & 2;
  if (h.rejected) h.error = std::string(r.prefixed());
  h.change = std::string(r.in);
  return h;
}

std::string Replica::hold_key(const Change& c) {
  std::string k(1, kHolds);
  k += lower(c.schema.empty() ? "main" : c.schema);
  k.push_back('\0');
  k += lower(c.table);
  k.push_back('\0');
  c.hlc.append_to(k);
  k.push_back(c.kind == Change::Kind::kDelete ? 2 : 1);
  return k;
}

uint64_t Replica::drain() {
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  return drain_locked();
}

uint64_t Replica::drain_locked() {
  std::vector<ChangeSet> sets;
  KvBatch b;
  const uint64_t considered = collect_holds(sets, b);
  if (considered == 0) return 0;
  apply_locked(sets, std::move(b), false);
  drained_ += considered;
  return considered;
}

uint64_t Replica::collect_holds(std::vector<ChangeSet>& sets, KvBatch& b) {
  store::KvStore& kv = db_->kv();
  std::string lo(1, kHolds);
  std::map<std::pair<std::string, std::string>, bool> present;
  uint64_t considered = 0;
  auto it = kv.iterate(KvRange{lo, prefix_end(lo)}, false);
  for (; it->valid(); it->next()) {
    std::string_view key = it->key().substr(1);
    size_t z1 = key.find('\0');
    size_t z2 = z1 == std::string_view::npos ? z1 : key.find('\0', z1 + 1);
    if (z2 == std::string_view::npos) corrupt("hold key");
    auto tk = std::make_pair(std::string(key.substr(0, z1)), std::string(key.substr(z1 + 1, z2 - z1 - 1)));
    auto p = present.find(tk);
    if (p == present.end()) {
      std::optional<uint64_t> id = db_->table_id(tk.first, tk.second);
      p = present.emplace(tk, id && db_->live_state(*id)).first;
    }
    if (!p->second) continue;
    Hold h = Hold::decode(it->value());
    if (h.rejected) continue;  // waits for an operator (sync_status lists it)
    Change c = change_from_json(h.change);
    ChangeSet set;
    set.site = h.site;
    set.transaction_id = c.hlc.transaction_id();
    set.hlc = c.hlc;
    set.changes.push_back(std::move(c));
    sets.push_back(std::move(set));
    b.del(it->key());
    if (h.seq) b.del(log_key(h.seq));
    ++considered;
  }
  it->check();
  return considered;
}

uint64_t Replica::prune_holds() {
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  const uint64_t now = options_.clock();
  KvBatch b;
  uint64_t pruned = 0;
  std::string lo(1, kHolds);
  auto it = db_->kv().iterate(KvRange{lo, prefix_end(lo)}, false);
  for (; it->valid(); it->next()) {
    Hold h = Hold::decode(it->value());
    if (now - std::min(now, h.received) <= options_.quarantine_horizon_ms) continue;
    b.del(it->key());
    if (h.seq) b.del(log_key(h.seq));
    ++pruned;
  }
  it->check();
  if (pruned) db_->write_batch(b);
  return pruned;
}

// ---- lens backing: the basis lifecycle record ----

uint32_t Replica::record_lens_deployment(const sdk::LensDeploymentSnapshot& snap) {
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  store::KvStore& kv = db_->kv();
  const std::string basis = lower(snap.basis_schema.empty() ? "main" : snap.basis_schema);
  const uint64_t now = options_.clock();
  auto record_key = [&](const std::string& table) {
    std::string k(1, kBasis);
    k += basis;
    k.push_back('\0');
    k += table;
    return k;
  };
  // The universe: the basis tables here, the tables this deployment maps, the records kept.
  std::set<std::string> universe, mapped, in_basis;
  {
    const std::string lo = store::StoreDb::registry_key(basis, "");
    auto it = kv.iterate(KvRange{lo, prefix_end(lo)}, false);
    for (; it->valid(); it->next()) {
      std::string name(it->key().substr(lo.size()));
      if (!replicated(name)) continue;
      universe.insert(name);
      in_basis.insert(name);
    }
    it->check();
  }
  uint32_t backed = 0;
  for (const sdk::LensTableSnapshot& t : snap.tables)
    for (const sdk::LensRelationBacking& r : t.relations) {
      if (lower(r.schema_name) != basis) continue;
      mapped.insert(lower(r.table_name));
      universe.insert(lower(r.table_name));
      if (in_basis.count(lower(r.table_name))) ++backed;
    }
  {
    const std::string lo = record_key("");
    auto it = kv.iterate(KvRange{lo, prefix_end(lo)}, false);
    for (; it->valid(); it->next()) universe.insert(std::string(it->key().substr(lo.size())));
    it->check();
  }
  const std::string logical = lower(snap.logical_schema);
  KvBatch b;
  for (const std::string& table : universe) {
    const std::string key = record_key(table);
    std::optional<std::string> stored = kv.get(key);
    nlohmann::json rec = stored ? nlohmann::json::parse(*stored, nullptr, false) : nlohmann::json::object();
    if (rec.is_discarded() || !rec.is_object()) rec = nlohmann::json::object();
    const nlohmann::json before = rec;
    std::set<std::string> by;
    if (rec.contains("mappedBy") && rec["mappedBy"].is_array())
      for (const auto& m : rec["mappedBy"])
        if (m.is_string()) by.insert(m.get<std::string>());
    const std::string old_state = rec.value("state", std::string());
    if (mapped.count(table)) by.insert(logical); else by.erase(logical);
    const bool present = in_basis.count(table) > 0;
    const std::string state = !by.empty() ? "directly-mapped" : present ? "unreferenced" : "detached";
    rec["schema"] = basis;
    rec["table"] = table;
    rec["mappedBy"] = by;
    rec["inBasis"] = present;
    rec["state"] = state;
    if (state == "directly-mapped" && old_state != state) {
      rec["mappedSince"] = now;
      rec.erase("unmappedSince");
    } else if (old_state == "directly-mapped" && state != old_state) {
      rec["unmappedSince"] = now;
    }
    if (state == "detached" && old_state != state) rec["detachedAt"] = now;
    else if (state != "detached") rec.erase("detachedAt");
    if (!stored || rec != before) b.put(key, rec.dump());
  }
  if (!b.empty()) db_->write_batch(b);
  return backed;
}

std::string Replica::basis_records() {
  std::lock_guard db_lock(db_->mu());
  nlohmann::json out = nlohmann::json::array();
  const std::string lo(1, kBasis);
  auto it = db_->kv().iterate(KvRange{lo, prefix_end(lo)}, false);
  for (; it->valid(); it->next()) {
    nlohmann::json rec = nlohmann::json::parse(it->value(), nullptr, false);
    if (!rec.is_discarded()) out.push_back(std::move(rec));
  }
  it->check();
  return out.dump();
}

// ---- peers, GC, status ----

Replica::Position Replica::position() {
  std::lock_guard lock(writer_);
  return {next_seq_, floor_, own_floor_};
}

uint64_t Replica::abandon_snapshots() {
  std::vector<SiteId> peers;
  {
    std::lock_guard lock(writer_);
    peers.assign(bootstrapping_.begin(), bootstrapping_.end());
  }
  for (const SiteId& p : peers) {
    PeerCursors c = peer(p);
    c.in_snapshot = false;
    c.snapshot_head = 0;
    c.snapshot_after.clear();
    set_peer(p, c);
  }
  return peers.size();
}

Replica::PeerCursors Replica::peer(const SiteId& p) {
  std::lock_guard db_lock(db_->mu());
  std::optional<std::string> v = db_->kv().get(peer_key(p));
  PeerCursors c;
  if (v && v->size() >= 16) {
    c.received = get_u64(std::string_view(*v).substr(0, 8));
    c.sent = get_u64(std::string_view(*v).substr(8, 8));
    if (v->size() >= 24) {
      c.in_snapshot = true;
      c.snapshot_head = get_u64(std::string_view(*v).substr(16, 8));
      c.snapshot_after = v->substr(24);
    }
  }
  return c;
}

void Replica::set_peer(const SiteId& p, const PeerCursors& c) {
  std::lock_guard db_lock(db_->mu());
  std::string v;
  put_u64(v, c.received);
  put_u64(v, c.sent);
  if (c.in_snapshot) {
    put_u64(v, c.snapshot_head);
    v += c.snapshot_after;
  }
  KvBatch b;
  b.put(peer_key(p), v);
  db_->write_batch(b);
  std::lock_guard lock(writer_);
  if (c.in_snapshot) bootstrapping_.insert(p); else bootstrapping_.erase(p);
}

void Replica::forget_peer(const SiteId& p) {
  std::lock_guard db_lock(db_->mu());
  KvBatch b;
  b.del(peer_key(p));
  db_->write_batch(b);
  std::lock_guard lock(writer_);
  bootstrapping_.erase(p);
}

uint64_t Replica::prune_tombstones() {
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  // An engine-routed apply between its resolve and its commit: its plan may set the floor
  // (following a collected deletion) and rewrite rows from what it read; a floor or a
  // collection written here meanwhile would be undone by it. The next sweep collects (found
  // by review). (The hub and the network client run applies and sweeps on one thread: they
  // never meet there.)
  if (pending_ && !pending_->written) return 0;
  const uint64_t now = options_.clock();
  KvBatch b;
  uint64_t pruned = 0, swept = 0, new_floor = floor_, new_own_floor = own_floor_;
  std::set<uint64_t> gone;  // the positions of the tombstones pruned here
  // A deletion of ours that a peer we push to has not acknowledged (its record's `sent` is
  // below the tombstone's position) stays whatever its age: collected, it would never
  // reach that peer (a peer offline past the horizon still deletes on reconnect).
  const uint64_t acked = acknowledged_locked();
  // Takes `m`'s tombstone when past the horizon (its log entry goes; the floor moves: a
  // delta that started before the entry could miss the deletion and must take a snapshot).
  auto collect = [&](RowVersions& m) {
    if (!m.tombstone || now - std::min(now, m.tombstone_created) <= options_.tombstone_horizon_ms) return false;
    if (m.tombstone->site == site_ && m.tombstone_seq > acked) return false;
    new_floor = std::max(new_floor, m.tombstone_seq);
    if (m.tombstone->site == site_) new_own_floor = std::max(new_own_floor, m.tombstone_seq);
    gone.insert(m.tombstone_seq);
    b.del(log_key(m.tombstone_seq));
    m.tombstone.reset();
    m.tombstone_seq = 0;
    return true;
  };
  std::string lo(1, kRows);
  auto it = db_->kv().iterate(KvRange{lo, prefix_end(lo)}, false);
  for (; it->valid(); it->next()) {
    RowVersions m = RowVersions::decode(it->value(), site_, &lists_, get_u64(it->key().substr(1)));
    if (!collect(m)) continue;
    if (m.columns.empty()) b.del(it->key()); else b.put(it->key(), m.encode(site_));
    ++pruned;
  }
  it->check();
  {
    // A row re-created after its deletion keeps the tombstone in its sidecar (format 4):
    // collected past the horizon like one under 21, the row rewritten with the rest of its
    // versions. Only a record whose tombstone flag is set is decoded.
    const std::string rows_lo(1, 0x04);  // the store's rows
    std::string wrapped;
    auto r = db_->kv().iterate(KvRange{rows_lo, prefix_end(rows_lo)}, false);
    for (; r->valid(); r->next()) {
      const std::string_view sidecar = store::row_sidecar(r->value());
      if (!RowVersions::has_tombstone(sidecar)) continue;
      RowVersions m = RowVersions::decode(sidecar, site_, &lists_, get_u64(r->key().substr(1)));
      if (!collect(m)) continue;
      m.tombstone_created = 0;
      m.address.clear();
      m.image.clear();
      const std::string_view body = store::row_body(r->value());
      if (m.columns.empty()) {
        b.put(r->key(), body);
      } else {
        wrap_versions(wrapped, m, body, site_);
        b.put(r->key(), wrapped);
      }
      ++pruned;
    }
    r->check();
  }
  // The log's dead positions: a row's single entry or a whole run none of whose positions
  // tells a current fact goes (the newest record stays: a run there holds the clock and
  // the next position load_metadata reads).
  {
    store::KvStore& kv = db_->kv();
    const std::string lo(1, kLog);
    std::string newest;
    {
      auto last = kv.iterate(KvRange{lo, prefix_end(lo)}, true);
      if (last->valid()) newest = std::string(last->key());
      last->check();
    }
    auto live = [&](uint64_t seq, std::string_view ref) { return !gone.count(seq) && position_current(kv, site_, lists_, seq, ref); };
    auto log = kv.iterate(KvRange{lo, prefix_end(lo)}, false);
    for (; log->valid(); log->next()) {
      if (log->key() == newest) continue;
      const uint64_t first = get_u64(log->key().substr(1));
      bool dead = true;
      if (is_run_key(log->key())) {
        Reader r{log->value()};
        const uint64_t n = read_run_header(r).n;
        RunRefs refs(r, is_compact_run(log->key()));
        for (uint64_t i = 0; i < n && dead; ++i) dead = !live(first + i, refs.next());
      } else {
        std::string_view ref = log->value();
        dead = !ref.empty() && ref[0] != '\xFE' && ref[0] != '\xFF' && !live(first, ref);
      }
      if (dead) {
        b.del(log->key());
        ++swept;
      }
    }
    log->check();
  }
  last_swept_ = swept;
  if (pruned == 0 && swept == 0) return 0;
  if (pruned) {
    b.put(meta_key("floor"), u64(new_floor));
    b.put(meta_key("own_floor"), u64(new_own_floor));
  }
  // The sweep may take the run that held the newest clock: the meta records keep it.
  b.put(meta_key("clock"), clock_.state());
  b.put(meta_key("seq"), u64(next_seq_));
  db_->write_batch(b);
  floor_ = new_floor;
  if (pruned) own_floor_ = new_own_floor;
  return pruned;
}

ReplicaStatus Replica::status() {
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  ReplicaStatus s;
  s.site = site_;
  s.clock = Hlc{clock_.wall(), clock_.counter(), site_, 0};
  s.next_seq = next_seq_;
  s.floor = floor_;
  {
    // The positions that still tell a fact (a run keeps the dead ones until sync_prune).
    LogWalk walk(db_->kv(), 0);
    uint64_t seq = 0;
    std::string_view ref;
    while (walk.next(seq, ref)) {
      ++s.log_positions;
      if (position_current(db_->kv(), site_, lists_, seq, ref)) ++s.log_entries;
    }
  }
  s.captured_batches = captured_batches_;
  s.applied_batches = applied_batches_;
  std::string holds(1, kHolds);
  auto h = db_->kv().iterate(KvRange{holds, prefix_end(holds)}, false);
  for (; h->valid(); h->next()) {
    ++s.holds;
    if (Hold::decode(h->value()).rejected) ++s.rejected_holds;
  }
  h->check();
  for (const SiteId& p : bootstrapping_) s.write_barrier.push_back(p.text());
  std::string schema_holds(1, kSchemaHolds);
  auto sh = db_->kv().iterate(KvRange{schema_holds, prefix_end(schema_holds)}, false);
  for (; sh->valid(); sh->next()) {
    if (++s.held_schema_steps > 100) continue;
    Hold h = Hold::decode(sh->value());
    Change c = change_from_json(h.change);
    s.schema_holds.push_back({c.schema + "." + c.table, c.object, h.error});
  }
  sh->check();
  s.quarantined = quarantined_;
  s.ignored = ignored_;
  s.forwarded = forwarded_;
  s.drained = drained_;
  s.unknown_by_table = unknown_by_table_;
  std::string peers(1, kPeers);
  auto pi = db_->kv().iterate(KvRange{peers, prefix_end(peers)}, false);
  for (; pi->valid(); pi->next()) {
    std::string_view k = pi->key(), v = pi->value();
    if (k.size() != 17 || v.size() < 16) continue;
    SiteId id;
    std::memcpy(id.bytes.data(), k.data() + 1, 16);
    if (id.is_zero()) {  // the sync client's placeholder until its hub's record exists
      s.pending_hub = true;
      continue;
    }
    s.peers[id.text()] = {get_u64(v.substr(0, 8)), get_u64(v.substr(8, 8))};
  }
  pi->check();
  return s;
}

std::optional<RowVersions> Replica::versions(std::string_view schema, std::string_view table,
                                             const std::vector<sdk::Value>& pk) {
  std::lock_guard db_lock(db_->mu());
  std::optional<uint64_t> id = db_->table_id(schema, table);
  if (!id) return std::nullopt;
  std::shared_ptr<store::TableState> st = db_->live_state(*id);
  if (!st) return std::nullopt;
  std::vector<qrs_value> key;
  for (const sdk::Value& v : pk) key.push_back(v.to_c());
  std::string row_key = st->prefix;
  st->codec.encode_key(row_key, key);
  std::optional<std::string> row;
  return load_versions(db_->kv(), site_, lists_, row_key, row);
}

}  // namespace quereus::sync
