// modules/sync-store/schema_sync.cc — schema replication (docs/sync-store.md "Schema
// replication").
//
// A table's definition is a set of parts — its existence ("table"), its name, each column,
// the primary key, each constraint, the tail (module, options, tags) and each index — each
// with its own version, as a row's columns have theirs. Local DDL gives the parts that
// changed a version at one tick, written in the DDL's own schema-change batch with a
// change-log entry; peers merge part by part: a drop beats a concurrent version of the same
// part (most destructive wins), a version written after seeing the drop beats the drop, and
// otherwise the higher HLC wins. A table's identity is its incarnation (the HLC of its
// creation), so a renamed table keeps its history and a dropped-and-recreated one starts
// afresh. The host turns the merged definition into DDL (the declarative differ) and runs
// loosening steps before a page's data and tightening ones after it.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "json_codec.h"
#include "replica.h"
#include "replica_keys.h"

namespace quereus::sync {
namespace {

using namespace keys;

// A column's end: the part `end:<birth>` says the column born then was dropped (not
// renamed away), so it ends under every name a concurrent rename gave it. A fact that only
// ever appears (its versions are all live), merged like any part.
constexpr std::string_view kColumnEnd = "end:";

std::string part_key(uint64_t id, std::string_view part) {
  std::string k(1, kParts);
  put_u64(k, id);
  k += part;
  return k;
}
std::string dead_key(const Hlc& inc) {
  std::string k(1, kDead);
  inc.append_to(k);
  return k;
}
// A change-log entry naming a part: FE ‖ incarnation ‖ part.
std::string part_ref(const Hlc& inc, std::string_view part) {
  std::string r(1, '\xFE');
  inc.append_to(r);
  r += part;
  return r;
}

// A table created before schema replication has no incarnation of its own: one derived
// from its name, so every peer that has it agrees.
Hlc legacy_inc(std::string_view schema, std::string_view name) {
  Hlc h;
  uint64_t a = 1469598103934665603ull, b = 1099511628211ull * 31;
  std::string key = lower(schema) + "." + lower(name);
  for (unsigned char c : key) {
    a = (a ^ c) * 1099511628211ull;
    b = (b ^ c) * 14029467366897019727ull;
  }
  for (int i = 0; i < 8; ++i) {
    h.site.bytes[i] = static_cast<uint8_t>(a >> (56 - 8 * i));
    h.site.bytes[8 + i] = static_cast<uint8_t>(b >> (56 - 8 * i));
  }
  return h;
}

std::string quote(std::string_view id) {
  std::string s = "\"";
  for (char c : id) {
    if (c == '"') s += '"';
    s += c;
  }
  return s + "\"";
}

struct Dead {
  Hlc hlc;
  uint64_t seq = 0;
  std::string schema, name;
  std::string encode() const {
    std::string out;
    hlc.append_to(out);
    store::put_varint(out, seq);
    put_prefixed(out, schema);
    put_prefixed(out, name);
    return out;
  }
  static Dead decode(std::string_view bytes) {
    Reader r{bytes};
    Dead d;
    d.hlc = r.hlc();
    d.seq = r.varint();
    d.schema = std::string(r.prefixed());
    d.name = std::string(r.prefixed());
    return d;
  }
};

// The end of a column part's name: past a quoted identifier, or up to the first space.
size_t after_name(const std::string& t) {
  if (t.empty() || t[0] != '"') return std::min(t.find(' '), t.size());
  for (size_t i = 1; i < t.size(); ++i)
    if (t[i] == '"') {
      if (i + 1 < t.size() && t[i + 1] == '"') ++i;
      else return i + 1;
    }
  return t.size();
}

// The name a column part's text gives its column (unquoted).
std::string column_name(const std::string& t) {
  const size_t end = after_name(t);
  if (t.empty() || t[0] != '"') return t.substr(0, end);
  std::string out;
  for (size_t i = 1; i + 1 < end; ++i) {
    out += t[i];
    if (t[i] == '"') ++i;
  }
  return out;
}

// Does a column's new definition narrow what it accepts (NOT NULL added, another type)?
bool tightens_column(const std::string& before, const std::string& after) {
  auto not_null = [](const std::string& t) { return t.find(" not null", after_name(t)) != std::string::npos; };
  auto type = [](const std::string& t) {
    size_t i = after_name(t), j = t.find(" not null", i);
    if (j == std::string::npos) j = t.find(" null", i);
    return t.substr(i, j == std::string::npos ? std::string::npos : j - i);
  };
  return (!not_null(before) && not_null(after)) || type(before) != type(after);
}

// The CREATE TABLE of a definition's live parts: columns in the order they were first
// made, the key, the constraints; the tail (after the module clause, which is the
// receiver's own) into `tail_out`; the indexes' CREATE INDEX into `indexes`.
std::string assemble(const std::string& schema, const std::string& name,
                     const std::map<std::string, Replica::PartVersion>& parts, nlohmann::json* indexes,
                     std::string* tail_out = nullptr) {
  std::vector<std::pair<Hlc, std::string>> cols, cons;
  std::string pk, tail;
  for (const auto& [part, v] : parts) {
    if (v.drop) continue;
    if (part.starts_with("col:")) cols.emplace_back(v.born, v.text);
    else if (part.starts_with("uniq:") || part.starts_with("check:") || part.starts_with("fk:"))
      cons.emplace_back(v.born, v.text);
    else if (part == "pk") pk = v.text;
    else if (part == "tail") tail = v.text;
    else if (part.starts_with("idx:") && indexes) (*indexes)[part.substr(4)] = v.text;
  }
  if (cols.empty())
    throw sdk::Error(QRS_FORMAT, "sync-store: the definition received for table " + schema + "." + name +
                                     " has no column: refused, nothing applied");
  std::sort(cols.begin(), cols.end());
  std::sort(cons.begin(), cons.end());
  std::string s = "create table " + quote(schema) + "." + quote(name) + " (";
  bool first = true;
  auto add = [&](const std::string& t) {
    if (t.empty()) return;
    s += (first ? "" : ", ") + t;
    first = false;
  };
  for (auto& c : cols) add(c.second);
  add(pk);
  for (auto& c : cons) add(c.second);
  if (tail_out) *tail_out = tail;
  else s += ")" + tail;
  return tail_out ? s + ")" : s;
}

// A DDL step for the host: `op` on `table` (its name here now), reaching the definition of
// `parts` (named `name`): its CREATE TABLE without the module clause, its tail, its indexes.
nlohmann::json definition_step(const char* op, const std::string& schema, const std::string& table,
                               const std::string& name, const std::map<std::string, Replica::PartVersion>& parts) {
  nlohmann::json idx = nlohmann::json::object();
  std::string tail;
  const std::string ddl = assemble(schema, name, parts, &idx, &tail);
  return {{"op", op}, {"schema", schema}, {"table", table}, {"ddl", ddl}, {"tail", tail}, {"indexes", idx}};
}

}  // namespace

// ---- records ----

std::string Replica::PartVersion::encode() const {
  std::string out;
  hlc.append_to(out);
  store::put_varint(out, seq);
  out.push_back(static_cast<char>((drop ? 1 : 0) | (seen ? 2 : 0)));
  if (seen) seen->append_to(out);
  born.append_to(out);
  put_prefixed(out, text);
  put_prefixed(out, from);
  return out;
}

Replica::PartVersion Replica::PartVersion::decode(std::string_view bytes) {
  Reader r{bytes};
  PartVersion v;
  v.hlc = r.hlc();
  v.seq = r.varint();
  const uint8_t flags = r.byte();
  v.drop = flags & 1;
  if (flags & 2) v.seen = r.hlc();
  v.born = r.hlc();
  v.text = std::string(r.prefixed());
  v.from = std::string(r.prefixed());
  return v;
}

bool Replica::PartVersion::beats(const PartVersion& o) const {
  // A total order, so every peer picks the same winner whatever the order of arrival: first
  // the drop a version stands after (a drop its own HLC, any other version the drop its
  // writer had seen), a version beating the drop it saw; then the higher HLC. So a drop
  // beats every concurrent version that had not seen it, a re-add after it beats it, and a
  // later drop beats that re-add.
  auto rank = [](const PartVersion& v) { return std::make_tuple(v.drop ? v.hlc : v.seen.value_or(Hlc{}), !v.drop, v.hlc); };
  return hlc != o.hlc && rank(*this) > rank(o);
}

std::optional<Replica::TableRecord> Replica::table_record(uint64_t id) {
  std::optional<std::string> v = db_->kv().get(table_key(id));
  if (!v) return std::nullopt;
  TableRecord r;
  r.id = id;
  const size_t z1 = v->find('\0');
  if (z1 == std::string::npos) corrupt("table record");
  const size_t z2 = v->find('\0', z1 + 1);
  r.schema = v->substr(0, z1);
  r.name = v->substr(z1 + 1, z2 == std::string::npos ? std::string::npos : z2 - z1 - 1);
  if (z2 != std::string::npos) {
    std::string_view rest = std::string_view(*v).substr(z2 + 1);
    if (rest.size() % kHlcBytes) corrupt("table record incarnations");
    for (size_t i = 0; i < rest.size(); i += kHlcBytes) r.incs.push_back(*Hlc::from_bytes(rest.substr(i, kHlcBytes)));
  }
  if (r.incs.empty() && replicated(r.name)) r.incs.push_back(legacy_inc(r.schema, r.name));
  return r;
}

std::vector<Replica::TableRecord> Replica::table_records() {
  std::vector<TableRecord> out;
  const std::string lo(1, kTables);
  std::vector<uint64_t> ids;
  auto it = db_->kv().iterate(KvRange{lo, prefix_end(lo)}, false);
  for (; it->valid(); it->next()) ids.push_back(get_u64(it->key().substr(1)));
  it->check();
  for (uint64_t id : ids)
    if (std::optional<TableRecord> r = table_record(id); r && replicated(r->name)) out.push_back(std::move(*r));
  return out;
}

void Replica::put_table_record(const TableRecord& r, KvBatch& out) {
  std::string v = r.schema;
  v.push_back('\0');
  v += r.name;
  if (!r.incs.empty()) {
    v.push_back('\0');
    for (const Hlc& h : r.incs) h.append_to(v);
  }
  out.put(table_key(r.id), v);
}

std::map<std::string, Replica::PartVersion> Replica::parts_of(uint64_t id) {
  std::map<std::string, PartVersion> out;
  const std::string lo = part_key(id, "");
  auto it = db_->kv().iterate(KvRange{lo, prefix_end(lo)}, false);
  for (; it->valid(); it->next()) out.emplace(std::string(it->key().substr(lo.size())), PartVersion::decode(it->value()));
  it->check();
  return out;
}

std::set<std::string> Replica::shadowed_columns(const std::map<std::string, PartVersion>& parts) {
  std::map<Hlc, const std::pair<const std::string, PartVersion>*> standing;  // birth -> its winner
  std::set<Hlc> dead;  // births a column drop (not a rename's) ended
  for (const auto& e : parts)
    if (e.first.starts_with(kColumnEnd) && !e.second.drop) dead.insert(e.second.born);
  std::set<std::string> out;
  for (const auto& e : parts) {
    if (!e.first.starts_with("col:") || e.second.drop) continue;
    if (dead.count(e.second.born)) {
      out.insert(e.first);
      continue;
    }
    auto [it, fresh] = standing.emplace(e.second.born, &e);
    if (fresh) continue;
    const auto* w = it->second;
    const bool later = w->second.hlc < e.second.hlc || (w->second.hlc == e.second.hlc && w->first < e.first);
    out.insert(later ? w->first : e.first);
    if (later) it->second = &e;
  }
  return out;
}

std::map<Hlc, uint64_t> Replica::incarnation_tables() {
  std::map<Hlc, uint64_t> out;
  for (const TableRecord& r : table_records())
    for (const Hlc& h : r.incs) out[h] = r.id;
  return out;
}

bool Replica::incarnation_dropped(const Hlc& inc) { return db_->kv().get(dead_key(inc)).has_value(); }

// ---- local capture ----

void Replica::capture_schema(std::string_view args) {
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  const nlohmann::json a = nlohmann::json::parse(args);
  if (!scope_) scope_.emplace();
  if (a.contains("renames") && !a["renames"].empty()) {
    // Whoever's DDL it is, the rows' versions follow a column's rename.
    if (std::optional<uint64_t> id = db_->table_id(a.at("schema").get<std::string>(), a.at("table").get<std::string>())) {
      auto& list = scope_->column_renames[*id];
      for (const auto& r : a["renames"]) list.emplace_back(lower(r.at(0).get<std::string>()), lower(r.at(1).get<std::string>()));
    }
  }
  if (scope_->phase) return;  // an inbound phase's DDL: its versions are the peer's
  check_barrier("local DDL");
  if (!options_.replicate_schema) return;
  SchemaCapture c;
  scope_->in_transaction = scope_->in_transaction || a.value("inTransaction", false);
  c.schema = a.at("schema").get<std::string>();
  c.table = a.at("table").get<std::string>();
  for (const auto& p : a.at("parts")) c.parts.emplace_back(p.at(0).get<std::string>(), p.at(1).get<std::string>());
  if (a.contains("renames"))
    for (const auto& r : a["renames"])
      c.renamed_from["col:" + lower(r.at(1).get<std::string>())] = r.at(0).get<std::string>();
  scope_->captures.push_back(std::move(c));
}

void Replica::schema_flush() {
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  if (!scope_) return;
  SchemaScope& sc = *scope_;
  const uint64_t now = options_.clock();
  store::KvStore& kv = db_->kv();
  HlcClock clock = clock_;
  uint64_t seq = next_seq_;
  KvBatch b;
  std::optional<Hlc> base;
  uint32_t op = 0;
  auto stamp = [&] {
    if (!base) base = clock.tick(now);
    Hlc h = *base;
    h.op_seq = op++;
    return h;
  };
  auto put_version = [&](uint64_t id, const Hlc& inc, const std::string& part, PartVersion v, const PartVersion* old) {
    if (old) b.del(log_key(old->seq));
    v.seq = seq++;
    b.put(part_key(id, part), v.encode());
    b.put(log_key(v.seq), part_ref(inc, part));
  };
  auto put_dead = [&](const std::vector<Hlc>& incs, const Hlc& hlc, const std::string& schema, const std::string& name) {
    if (incs.empty()) return;
    Dead d{hlc, seq++, schema, name};
    for (const Hlc& inc : incs) b.put(dead_key(inc), d.encode());
    b.put(log_key(d.seq), part_ref(incs.front(), "table"));
  };
  if (sc.phase && sc.phase_staged) {
    // schema_stage wrote the phase already (its data followed in the scope).
  } else if (sc.phase) {
    // An inbound phase: the winning versions of the peer's parts, with fresh positions here
    // (so they relay on), the incarnations a create or a merge brought, the drops.
    const SchemaPhasePlan& ph = *sc.phase;
    if (schema_plan_ && sc.phase == &schema_plan_->before)
      for (const std::string& key : schema_plan_->stale_holds) b.del(key);  // beaten held steps
    // A phase run a table at a time writes only that table's versions.
    auto ours = [&](const std::string& schema, const std::string& table) {
      return !sc.phase_table || (lower(schema) == sc.phase_table->first && lower(table) == sc.phase_table->second);
    };
    for (const SchemaDead& d : ph.dead)
      if (ours(d.schema, d.table)) {
        put_dead(d.incs, d.hlc, d.schema, d.table);
        b.del(schema_hold_key(d.fact_inc, "table"));  // a held drop that ran at last
      }
    std::map<uint64_t, TableRecord> recs;
    auto record_of = [&](const std::string& schema, const std::string& table) -> TableRecord* {
      std::optional<uint64_t> id = db_->table_id(schema, table);
      if (!id) return nullptr;
      auto it = recs.find(*id);
      if (it == recs.end()) {
        std::optional<TableRecord> r = table_record(*id);
        if (!r) return nullptr;
        it = recs.emplace(*id, std::move(*r)).first;
      }
      return &it->second;
    };
    for (const auto& [tk, incs] : ph.incs) {
      if (!ours(tk.first, tk.second)) continue;
      TableRecord* r = record_of(tk.first, tk.second);
      if (!r)
        throw sdk::Error(QRS_CORRUPT, "sync-store: table " + tk.first + "." + tk.second +
                                          ", which the inbound schema change should have made, is not here");
      if (sc.created.count(r->id)) r->incs.clear();  // made by this phase: the peer's identity only
      for (const Hlc& h : incs)
        if (std::find(r->incs.begin(), r->incs.end(), h) == r->incs.end()) r->incs.push_back(h);
      std::sort(r->incs.begin(), r->incs.end());  // the oldest is the one shipped: peers agree
      put_table_record(*r, b);
    }
    for (const SchemaWrite& w : ph.writes) {
      if (!ours(w.schema, w.table)) continue;
      b.del(schema_hold_key(w.inc, w.part));  // a held step that ran at last
      TableRecord* r = record_of(w.schema, w.table);
      if (!r) continue;  // gone again within the phase
      std::optional<std::string> prior = kv.get(part_key(r->id, w.part));
      std::optional<PartVersion> old;
      if (prior) old = PartVersion::decode(*prior);
      if (old && !w.v.beats(*old)) continue;
      put_version(r->id, r->incs.front(), w.part, w.v, old ? &*old : nullptr);
    }
    if (schema_plan_ && schema_plan_->max_hlc) clock.receive(*schema_plan_->max_hlc, now);
  } else {
    if (!options_.replicate_schema) {
      sc.drops.clear();
      sc.captures.clear();
    }
    for (const TableRecord& d : sc.drops) put_dead(d.incs, stamp(), d.schema, d.name);
    // The last capture of each table (a statement may persist a table more than once).
    std::map<uint64_t, SchemaCapture> last;
    for (SchemaCapture& c : sc.captures) {
      std::optional<uint64_t> id = db_->table_id(c.schema, c.table);
      if (!id) continue;  // dropped later in the scope
      auto [it, fresh] = last.try_emplace(*id);
      std::map<std::string, std::string> renamed = std::move(it->second.renamed_from);
      it->second = std::move(c);
      it->second.renamed_from.merge(renamed);
    }
    for (auto& [id, cap] : last) {
      std::optional<TableRecord> rec = table_record(id);
      if (!rec) continue;
      std::map<std::string, PartVersion> stored = parts_of(id);
      if (sc.created.count(id) || stored.empty()) {
        // A new incarnation (or a table from before schema replication, first altered now).
        if (sc.created.count(id)) rec->incs = {stamp()};
        put_table_record(*rec, b);
        PartVersion t;
        t.hlc = sc.created.count(id) ? rec->incs.front() : stamp();
        t.born = t.hlc;
        put_version(id, rec->incs.front(), "table", t, nullptr);
      }
      const Hlc inc = rec->incs.front();
      // In the table's order: a new table's columns are born in their declared order.
      std::vector<std::pair<std::string, std::string>> ordered = cap.parts;
      ordered.emplace_back("name", cap.table);
      const std::map<std::string, std::string> now_parts(ordered.begin(), ordered.end());
      for (const auto& [part, text] : ordered) {
        auto it = stored.find(part);
        const PartVersion* old = it == stored.end() ? nullptr : &it->second;
        if (old && !old->drop && old->text == text) continue;
        PartVersion v;
        v.hlc = stamp();
        v.text = text;
        v.seen = old ? (old->drop ? std::optional<Hlc>(old->hlc) : old->seen) : std::nullopt;
        v.born = old && !old->drop ? old->born : v.hlc;
        if (auto r = cap.renamed_from.find(part); r != cap.renamed_from.end()) {
          v.from = r->second;
          if (auto o = stored.find("col:" + lower(r->second)); o != stored.end() && !o->second.drop) v.born = o->second.born;
        }
        put_version(id, inc, part, v, old);
      }
      const std::set<std::string> shadowed = shadowed_columns(stored);
      std::set<std::string> renamed_away;  // the old parts of this scope's column renames
      for (const auto& [to, from] : cap.renamed_from) renamed_away.insert("col:" + lower(from));
      for (const auto& [part, old] : stored) {
        if (part == "table" || part.starts_with(kColumnEnd) || old.drop || now_parts.count(part) || shadowed.count(part))
          continue;
        PartVersion v;
        v.hlc = stamp();
        v.drop = true;
        v.seen = old.seen;
        v.born = old.born;
        put_version(id, inc, part, v, &old);
        if (part.starts_with("col:") && !renamed_away.count(part)) {
          // A column dropped, not renamed away: the column itself ends, under any name.
          const std::string end = std::string(kColumnEnd) + old.born.text();
          if (!stored.count(end)) {
            PartVersion e;
            e.hlc = stamp();
            e.born = old.born;
            e.text = part.substr(4);
            put_version(id, inc, end, e, nullptr);
          }
        }
      }
    }
  }
  for (const auto& [id, renames] : sc.column_renames) rename_version_columns(id, renames, b);
  sc.column_renames.clear();  // a scope may flush more than once
  if (base && !sc.phase && sc.in_transaction) sc.ddl_base = DdlBase{*base, op, clock.state()};
  if (!b.empty()) {
    b.put(meta_key("clock"), clock.state());
    b.put(meta_key("seq"), u64(seq));
    kv.write(b, false);  // into the scope's staged overlay: lands with the DDL or not at all
  }
  sc.clock = clock;
  sc.next_seq = seq;
}

void Replica::schema_stage(uint64_t token) {
  {
    std::lock_guard lock(writer_);
    if (!schema_plan_ || schema_plan_->token != token || !scope_ || !scope_->phase || scope_->phase_table ||
        scope_->phase_staged)
      throw sdk::Error(QRS_MISUSE, "sync-store: schema_stage needs the open scope of inbound schema change " +
                                       std::to_string(token) + "'s \"before\" phase");
  }
  schema_flush();  // the phase's versions into the scope's overlay, positions from next_seq_
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  SchemaScope& sc = *scope_;
  sc.phase_staged = true;
  // The rows written next in this scope continue after the phase (their plan is resolved
  // from these): ahead of the disk until the scope lands, put back if it does not.
  sc.before_stage.emplace(clock_, next_seq_);
  if (sc.clock) clock_.advance_to(sc.clock->wall(), sc.clock->counter());
  next_seq_ = std::max(next_seq_, sc.next_seq);
}

void Replica::schema_end(bool landed) {
  std::lock_guard lock(writer_);
  if (landed && scope_ && scope_->clock) {
    clock_ = *scope_->clock;
    next_seq_ = std::max(next_seq_, scope_->next_seq);
    ddl_txn_base_ = scope_->ddl_base;
  }
  if (!landed && scope_ && scope_->before_stage) {
    clock_ = scope_->before_stage->first;
    next_seq_ = scope_->before_stage->second;
  }
  if (landed && scope_) {
    for (const SchemaScope::Landing& l : scope_->landings) {
      Plan p;
      p.received = l.received;
      p.floor = l.floor;
      p.own_floor = l.own_floor;
      plan_landed(p);  // the scope is closed: taken in now
    }
  }
  scope_.reset();
}

// ---- outbound ----

namespace {
Change part_change(const Replica::TableRecord& rec, const std::string& part, Replica::PartVersion v) {
  Change c;
  c.kind = Change::Kind::kSchema;
  c.schema = rec.schema;
  c.table = rec.name;
  c.inc = rec.incs.front();
  c.object = part;
  c.hlc = v.hlc;
  c.text = std::move(v.text);
  c.drop = v.drop;
  c.born = v.born;
  c.seen_delete = v.seen;
  c.from = std::move(v.from);
  return c;
}
}  // namespace

void Replica::snapshot_schema(uint64_t id, std::vector<Change>& found) {
  std::optional<TableRecord> rec = table_record(id);
  if (!rec || rec->incs.empty()) return;
  for (auto& [part, v] : parts_of(id)) found.push_back(part_change(*rec, part, std::move(v)));
}

void Replica::schema_facts(std::string_view ref, uint64_t seq, std::vector<Change>& found,
                           std::optional<std::vector<TableRecord>>& records) {
  if (ref.size() <= 1 + kHlcBytes) return;
  const Hlc inc = *Hlc::from_bytes(ref.substr(1, kHlcBytes));
  const std::string part(ref.substr(1 + kHlcBytes));
  if (!records) records = table_records();
  const TableRecord* rec = nullptr;
  for (const TableRecord& r : *records)
    if (std::find(r.incs.begin(), r.incs.end(), inc) != r.incs.end()) rec = &r;
  if (rec) {
    std::optional<std::string> v = db_->kv().get(part_key(rec->id, part));
    if (!v) return;
    PartVersion pv = PartVersion::decode(*v);
    if (pv.seq != seq) return;  // superseded: a later entry tells it
    if (part == "table") {
      // A creation travels with the whole current definition, so a receiver never makes a
      // table from part of it (later entries repeat a part: the receiver skips duplicates).
      snapshot_schema(rec->id, found);
      return;
    }
    found.push_back(part_change(*rec, part, std::move(pv)));
    return;
  }
  std::optional<std::string> dv = db_->kv().get(dead_key(inc));
  if (!dv || part != "table") return;
  Dead d = Dead::decode(*dv);
  if (d.seq != seq) return;
  Change c;
  c.kind = Change::Kind::kSchema;
  c.schema = d.schema;
  c.table = d.name;
  c.inc = inc;
  c.object = "table";
  c.hlc = d.hlc;
  c.drop = true;
  found.push_back(std::move(c));
}

// ---- inbound ----

std::string Replica::resolve_schema(const std::vector<ChangeSet>& sets) {
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  const uint64_t now = options_.clock();
  validate(sets, now);
  SchemaPlan plan;
  std::map<Hlc, std::vector<const Change*>> groups;  // by incarnation
  // Steps that failed here before (held) are resolved again with the page: still winning,
  // they run again; beaten since, they go.
  std::vector<Change> held;
  std::vector<std::string> held_keys;
  {
    const std::string lo(1, kSchemaHolds);
    auto it = db_->kv().iterate(KvRange{lo, prefix_end(lo)}, false);
    for (; it->valid(); it->next()) {
      held.push_back(change_from_json(Hold::decode(it->value()).change));
      held_keys.emplace_back(it->key());
    }
    it->check();
  }
  for (const Change& c : held) {
    groups[c.inc].push_back(&c);
    if (!plan.max_hlc || c.hlc > *plan.max_hlc) plan.max_hlc = c.hlc;
  }
  for (const ChangeSet& set : sets)
    for (const Change& c : set.changes) {
      if (c.kind != Change::Kind::kSchema) continue;
      if (c.hlc.site == site_ || !options_.replicate_schema) {
        ++plan.skipped;  // our own, relayed back; or schema is managed by each peer
        continue;
      }
      groups[c.inc].push_back(&c);
      if (!plan.max_hlc || c.hlc > *plan.max_hlc) plan.max_hlc = c.hlc;
    }
  if (groups.empty()) {
    schema_plan_.reset();
    nlohmann::json out{{"token", 0}, {"skipped", plan.skipped}};
    return out.dump();
  }
  plan.token = next_token_++;
  std::vector<TableRecord> records = table_records();
  auto by_inc = [&](const Hlc& inc) -> TableRecord* {
    for (TableRecord& r : records)
      if (std::find(r.incs.begin(), r.incs.end(), inc) != r.incs.end()) return &r;
    return nullptr;
  };
  auto by_name = [&](const std::string& schema, const std::string& name) -> TableRecord* {
    for (TableRecord& r : records)
      if (lower(r.schema) == lower(schema) && lower(r.name) == lower(name)) return &r;
    return nullptr;
  };
  struct Group {
    Hlc inc;
    std::vector<const Change*> facts;
    TableRecord* rec = nullptr;
    bool create = false;
    const Change* table_fact = nullptr;  // the newest "table" fact (a drop if there is one)
    std::string schema, name;            // the table's name as the peer last named it
  };
  std::vector<Group> work;
  for (auto& [inc, facts] : groups) {
    std::sort(facts.begin(), facts.end(), [](const Change* a, const Change* b) { return a->hlc < b->hlc; });
    if (db_->kv().get(dead_key(inc))) {
      plan.skipped += facts.size();  // a dropped incarnation: its drop beat these
      continue;
    }
    Group g;
    g.inc = inc;
    g.facts = facts;
    g.schema = lower(facts.front()->schema.empty() ? "main" : facts.front()->schema);
    g.name = facts.back()->table;
    const Change* name_fact = nullptr;
    for (const Change* c : facts) {
      if (c->object == "table" && (!g.table_fact || c->drop || !g.table_fact->drop)) g.table_fact = c;
      if (c->object == "name" && !c->drop) name_fact = c;
    }
    if (name_fact) g.name = name_fact->text;
    work.push_back(std::move(g));
  }
  std::set<std::pair<std::string, std::string>> created_names;
  // Tables this page drops or renames: their current names are free for its creates, and a
  // name a rename takes frees it from a table the page drops (run first).
  std::set<uint64_t> moving;
  for (Group& g : work) {
    g.rec = by_inc(g.inc);
    if (!g.rec) continue;
    if (g.table_fact && g.table_fact->drop) moving.insert(g.rec->id);
    else if (lower(g.name) != lower(g.rec->name)) {
      moving.insert(g.rec->id);
      created_names.emplace(lower(g.rec->schema), lower(g.name));
    }
  }
  // Renames that take a name another table of the page moves away from (a swap, a chain):
  // then every renamed table steps aside under a name of its own first, so the order in
  // which the renames run does not matter.
  bool renames_collide = false;
  for (Group& g : work) {
    if (!g.rec || (g.table_fact && g.table_fact->drop) || lower(g.name) == lower(g.rec->name)) continue;
    if (TableRecord* there = by_name(g.rec->schema, g.name); there && there->id != g.rec->id && moving.count(there->id))
      renames_collide = true;
  }
  for (Group& g : work) {
    if (g.rec) continue;
    if (g.table_fact && g.table_fact->drop) continue;  // a drop of a table never seen here
    g.rec = by_name(g.schema, g.name);
    if (g.rec && moving.count(g.rec->id)) g.rec = nullptr;
    if (!g.rec && g.table_fact) {
      g.create = true;
      created_names.emplace(g.schema, lower(g.name));
    }
  }
  nlohmann::json before = nlohmann::json::array(), after = nlohmann::json::array();
  nlohmann::json drops_before = nlohmann::json::array(), creates = nlohmann::json::array();
  nlohmann::json set_aside = nlohmann::json::array();
  for (Group& g : work) {
    if (!g.rec && !g.create) {
      if (g.table_fact && g.table_fact->drop) {
        // Dropped before it reached us: remember the drop, so a late change of it is beaten.
        plan.before.dead.push_back({{g.inc}, g.table_fact->hlc, g.schema, g.name, g.inc});
        ++plan.applied;
        plan.skipped += g.facts.size() - 1;
      } else {
        plan.unknown += g.facts.size();  // changes of a table this replica never had
      }
      continue;
    }
    std::map<std::string, PartVersion> stored = g.rec ? parts_of(g.rec->id) : std::map<std::string, PartVersion>{};
    std::map<std::string, PartVersion> current = stored, winners;
    for (const Change* c : g.facts) {
      PartVersion v;
      v.hlc = c->hlc;
      v.drop = c->drop;
      v.seen = c->seen_delete;
      v.born = c->born ? *c->born : c->hlc;
      v.text = c->text;
      v.from = c->from;
      auto it = current.find(c->object);
      if (it != current.end() && !v.beats(it->second)) {
        ++plan.skipped;  // a duplicate, or beaten by what is here
        continue;
      }
      current[c->object] = v;
      winners[c->object] = v;
    }
    if (g.rec && !g.rec->incs.empty() && std::find(g.rec->incs.begin(), g.rec->incs.end(), g.inc) == g.rec->incs.end()) {
      // The same table made on two peers (or one from before schema replication): one table
      // when their definitions agree, an error naming both otherwise.
      if (g.table_fact && !g.table_fact->drop) {
        auto defining = [](const std::map<std::string, PartVersion>& parts) {
          std::map<std::string, std::string> out;
          for (const auto& [p, v] : parts)
            if (!v.drop && p != "table" && p != "name" && !p.starts_with("idx:")) out[p] = v.text;
          return out;
        };
        std::map<std::string, PartVersion> incoming;
        for (const Change* c : g.facts) {
          PartVersion v;
          v.hlc = c->hlc;
          v.drop = c->drop;
          v.born = c->born ? *c->born : c->hlc;
          v.text = c->text;
          auto it = incoming.find(c->object);
          if (it == incoming.end() || v.beats(it->second)) incoming[c->object] = v;
        }
        // Only what both creates said is compared: a part added since on either side merges.
        auto created = [](std::map<std::string, PartVersion> parts, const Hlc& create) {
          std::erase_if(parts, [&](const auto& e) { return !e.second.born.same_transaction(create); });
          return parts;
        };
        const Hlc local_create = stored.count("table") ? stored.at("table").hlc : Hlc{};
        std::map<std::string, std::string> here = defining(created(stored, local_create)),
                                           there = defining(created(incoming, g.table_fact->hlc));
        bool differ = false;
        for (const auto& [p, text] : here)
          if (auto it = there.find(p); it != there.end() && it->second != text) differ = true;
        if (!stored.empty() && differ)
          throw sdk::Error(QRS_CONSTRAINT,
                           "sync-store: table " + g.schema + "." + g.rec->name + " exists here and was created by site " +
                               g.table_fact->hlc.site.text() + " with another definition; here: " +
                               assemble(g.rec->schema, g.rec->name, stored, nullptr) +
                               "; there: " + assemble(g.schema, g.name, incoming, nullptr) +
                               ". Make one side match the other (or drop one), then sync again: nothing applied");
      }
      plan.before.incs.push_back({{g.rec->schema, g.rec->name}, {g.inc}});
    }
    if (g.create) plan.before.incs.push_back({{g.schema, g.name}, {g.inc}});
    const std::string local_name = g.rec ? g.rec->name : g.name;
    const std::string schema = g.rec ? g.rec->schema : g.schema;
    if (winners.empty()) continue;
    plan.applied += winners.size();
    // The table's drop beats everything else of it.
    if (auto t = winners.find("table"); t != winners.end() && t->second.drop && g.rec) {
      const bool name_wanted = created_names.count({lower(schema), lower(local_name)}) > 0;
      std::vector<Hlc> incs = g.rec->incs;
      if (std::find(incs.begin(), incs.end(), g.inc) == incs.end()) incs.push_back(g.inc);
      std::sort(incs.begin(), incs.end());
      (name_wanted ? plan.before : plan.after).dead.push_back({incs, t->second.hlc, schema, local_name, g.inc});
      nlohmann::json step{{"op", "drop"}, {"schema", schema}, {"table", local_name}};
      (name_wanted ? drops_before : after).push_back(step);
      continue;
    }
    // Which phase each winner belongs to: what loosens runs before the data, what tightens
    // after it.
    std::map<std::string, PartVersion> live_before, live_after;
    const std::set<std::string> shadowed_here = shadowed_columns(stored);
    for (const auto& [p, v] : stored)
      if (!v.drop && !shadowed_here.count(p)) live_before[p] = live_after[p] = v;
    std::vector<std::pair<std::string, std::string>> renames;
    std::vector<std::string> recreated;  // columns here whose name a different column takes
    std::string rename_to;
    std::set<std::string> renamed_away;
    std::map<std::string, PartVersion> renamed_from;  // a renamed column's part -> its version here
    // A column is known by its birth: a winner born with one of ours is ours, renamed when
    // its name differs (even onto a name one of ours holds now: a swap, a rename into a
    // dropped column's name).
    std::set<Hlc> winner_births;
    for (const auto& [p, v] : winners)
      if (p.starts_with("col:") && !v.drop) winner_births.insert(v.born);
    std::set<std::string> shadowed;  // winners of their part a column of their birth here outranks
    std::set<Hlc> dead;                // column births a real drop (here or in the page) ended
    for (const auto& [p, v] : current)
      if (p.starts_with(kColumnEnd) && !v.drop) dead.insert(v.born);
    for (const auto& [p, v] : winners) {
      if (!p.starts_with("col:") || v.drop) continue;
      if (dead.count(v.born)) {
        shadowed.insert(p);  // a rename (or alter) of a column dropped concurrently: the drop wins
        continue;
      }
      const std::string* ours = nullptr;
      for (const auto& [q, lv] : live_before)
        if (q.starts_with("col:") && lv.born == v.born) ours = &q;
      if (ours && *ours != p) {
        // Renamed concurrently here and there: the later rename's name stands.
        const PartVersion& here = live_before.at(*ours);
        if (v.hlc < here.hlc || (v.hlc == here.hlc && p < *ours)) {
          shadowed.insert(p);
          continue;
        }
      }
      if (ours && *ours != p) {
        renames.emplace_back(column_name(live_before.at(*ours).text), column_name(v.text));
        renamed_away.insert(*ours);
        renamed_from[p] = live_before.at(*ours);
      } else if (ours) {
        if (column_name(live_before.at(p).text) != column_name(v.text))
          renames.emplace_back(column_name(live_before.at(p).text), column_name(v.text));  // its casing only
      }
      // Ours under this name is another column that keeps no name of the page: it goes when
      // a rename takes its name, the column was made again after its writer saw ours
      // dropped (its values are not the new column's), or ours came to the name by a rename
      // that lost it to a concurrent add (a column of its own, with values of its own). Two
      // columns added concurrently under one name stay one column (the differ aligns the
      // definition).
      if (auto here = live_before.find(p); here != live_before.end() && here->second.born != v.born &&
                                           !winner_births.count(here->second.born) &&
                                           (renamed_from.count(p) || (v.seen && *v.seen >= here->second.born) ||
                                            !here->second.from.empty()))
        recreated.push_back(column_name(here->second.text));
    }
    // Renames onto names held here now run through names of their own: sources step aside,
    // the columns losing their name are dropped, then the targets are taken.
    std::vector<std::pair<std::string, std::string>> renames_final;
    {
      std::set<std::string> held;
      for (const auto& [q, lv] : live_before)
        if (q.starts_with("col:")) held.insert(lower(column_name(lv.text)));
      bool occupied = false;
      for (const auto& [from, to] : renames) occupied = occupied || (lower(from) != lower(to) && held.count(lower(to)));
      if (occupied) {
        std::vector<std::pair<std::string, std::string>> first;
        for (size_t i = 0; i < renames.size(); ++i) {
          const std::string aside = renames[i].first + "$sync$" + std::to_string(i) + "$" + std::to_string(plan.token);
          first.emplace_back(renames[i].first, aside);
          renames_final.emplace_back(aside, renames[i].second);
        }
        renames = std::move(first);
      }
    }
    bool any_before = false, any_after = false;
    for (const auto& [p, v] : winners) {
      auto old = stored.find(p);
      const bool had = old != stored.end() && !old->second.drop;
      bool late;
      // A new table takes its whole definition at once; a key change comes first too, since
      // the page's rows are addressed by the key as it is now at the origin.
      if (g.create || p == "table" || p == "name" || p == "tail" || p == "pk") late = false;
      else if (p.starts_with("col:") && renamed_from.count(p)) {
        // A renamed column: the rename runs before the data (the page's rows use the new
        // name); a tightening of it after, so the column stands renamed with its old rule.
        const PartVersion& src = renamed_from.at(p);
        late = tightens_column(src.text, v.text);
        if (late) {
          PartVersion renamed = src;
          renamed.text = v.text.substr(0, after_name(v.text)) + src.text.substr(after_name(src.text));
          live_before[p] = renamed;
          any_before = true;
        }
      } else if (p.starts_with("col:")) late = v.drop ? !renamed_away.count(p) : had && tightens_column(old->second.text, v.text);
      else if (p.starts_with("idx:")) late = !v.drop && v.text.starts_with("create unique");
      else late = !v.drop;  // a constraint: adding one tightens, dropping one loosens
      SchemaWrite w{schema, "", g.inc, p, v};
      if (shadowed.count(p)) {
        plan.before.writes.push_back(std::move(w));  // kept (and relayed), not standing
        continue;
      }
      if (p == "name" && !v.drop) rename_to = v.text;
      (late ? plan.after : plan.before).writes.push_back(std::move(w));
      (late ? any_after : any_before) = true;
      auto apply = [&](std::map<std::string, PartVersion>& live) {
        if (v.drop) live.erase(p); else live[p] = v;
      };
      apply(live_after);
      if (!late) apply(live_before);
    }
    for (const std::string& old : renamed_away)
      if (!renamed_from.count(old)) {  // (a swap: the name is taken again)
        live_before.erase(old);
        live_after.erase(old);
      }
    // A column here whose birth the page's drop ended (renamed here while a peer dropped
    // it): it goes too, after the data, as drops do.
    for (auto it = live_after.begin(); it != live_after.end();)
      if (it->first.starts_with("col:") && dead.count(it->second.born)) {
        it = live_after.erase(it);
        any_after = true;
      } else {
        ++it;
      }
    if (!recreated.empty()) any_before = true;
    const std::string final_name = rename_to.empty() ? local_name : rename_to;
    for (SchemaWrite& w : plan.before.writes)
      if (w.table.empty()) w.table = final_name;
    for (SchemaWrite& w : plan.after.writes)
      if (w.table.empty()) w.table = final_name;
    if (g.create) {
      creates.push_back(definition_step("create", schema, final_name, final_name, live_before));
      if (any_after) after.push_back(definition_step("alter", schema, final_name, final_name, live_after));
      continue;
    }
    if (stored.empty()) continue;  // a table from before schema replication: nothing to compare with
    auto columns = [](const std::map<std::string, PartVersion>& live) {
      for (const auto& [p, v] : live)
        if (p.starts_with("col:")) return true;
      return false;
    };
    if (any_before && columns(live_before)) {
      nlohmann::json step = definition_step("alter", schema, local_name, final_name, live_before);
      if (!rename_to.empty() && rename_to != local_name) {
        step["renameTo"] = rename_to;
        if (renames_collide) {
          // Unlikely to be taken: the table's id and this plan's token.
          const std::string aside = local_name + "$sync$" + std::to_string(g.rec->id) + "$" + std::to_string(plan.token);
          set_aside.push_back({{"op", "rename"}, {"schema", schema}, {"table", local_name}, {"to", aside}});
          step["table"] = aside;
        }
      }
      nlohmann::json rc = nlohmann::json::array(), rf = nlohmann::json::array();
      for (auto& [a, b] : renames) rc.push_back(nlohmann::json::array({a, b}));
      for (auto& [a, b] : renames_final) rf.push_back(nlohmann::json::array({a, b}));
      step["renameColumns"] = rc;
      step["dropColumns"] = recreated;
      if (!rf.empty()) step["renameColumnsFinal"] = rf;
      before.push_back(step);
    }
    if (any_after && columns(live_after)) after.push_back(definition_step("alter", schema, final_name, final_name, live_after));
  }
  // Before the data: drops whose name a create takes, tables stepping aside for a rename,
  // then alterations, then creates.
  nlohmann::json first = drops_before;
  for (auto& s : set_aside) first.push_back(s);
  for (auto& s : before) first.push_back(s);
  for (auto& s : creates) first.push_back(s);
  // A held step beaten since (by what is here or by this page) is dropped; one still
  // winning is in the plan again, and goes when its write lands.
  for (size_t i = 0; i < held.size(); ++i) {
    bool pending = false;
    for (const SchemaPhasePlan* ph : {&plan.before, &plan.after})
      for (const SchemaWrite& w : ph->writes)
        pending = pending || (w.inc == held[i].inc && w.part == held[i].object && w.v.hlc == held[i].hlc);
    for (const SchemaPhasePlan* ph : {&plan.before, &plan.after})
      for (const SchemaDead& d : ph->dead)
        pending = pending || (held[i].object == "table" && d.fact_inc == held[i].inc && d.hlc == held[i].hlc);
    if (!pending) plan.stale_holds.push_back(held_keys[i]);
  }
  nlohmann::json out{{"token", plan.token}, {"before", first}, {"after", after}};
  schema_plan_ = std::move(plan);
  return out.dump();
}

void Replica::schema_phase(uint64_t token, std::string_view phase, std::optional<std::pair<std::string, std::string>> table) {
  std::lock_guard lock(writer_);
  if (!schema_plan_ || schema_plan_->token != token)
    throw sdk::Error(QRS_MISUSE, "sync-store: no inbound schema change " + std::to_string(token) + " is pending");
  if (!scope_) scope_.emplace();
  scope_->phase = phase == "after" ? &schema_plan_->after : &schema_plan_->before;
  if (table) scope_->phase_table = std::make_pair(lower(table->first), lower(table->second));
}

// The step of `table` in the "after" phase failed here (its DDL rolled back): its parts are
// held, with the error, and resolved again with every later page until they run or lose.
bool Replica::schema_hold(uint64_t token, const std::string& schema, const std::string& table, const std::string& error) {
  std::lock_guard db_lock(db_->mu());
  std::lock_guard lock(writer_);
  if (!schema_plan_ || schema_plan_->token != token)
    throw sdk::Error(QRS_MISUSE, "sync-store: no inbound schema change " + std::to_string(token) + " is pending");
  KvBatch b;
  bool fresh = false;
  const uint64_t now = options_.clock();
  auto hold = [&](const Change& c) {
    Hold h;
    h.site = c.hlc.site;
    h.change = change_to_json(c);
    h.received = now;
    h.rejected = true;
    h.error = error;
    const std::string key = schema_hold_key(c.inc, c.object);
    fresh = fresh || !db_->kv().get(key);
    b.put(key, h.encode());
  };
  auto ours = [&](const std::string& s, const std::string& t) { return lower(s) == lower(schema) && lower(t) == lower(table); };
  for (const SchemaWrite& w : schema_plan_->after.writes) {
    if (!ours(w.schema, w.table)) continue;
    Change c;
    c.kind = Change::Kind::kSchema;
    c.schema = w.schema;
    c.table = w.table;
    c.inc = w.inc;
    c.object = w.part;
    c.hlc = w.v.hlc;
    c.text = w.v.text;
    c.drop = w.v.drop;
    c.born = w.v.born;
    c.seen_delete = w.v.seen;
    c.from = w.v.from;
    hold(c);
  }
  for (const SchemaDead& d : schema_plan_->after.dead) {  // a table's drop
    if (!ours(d.schema, d.table)) continue;
    Change c;
    c.kind = Change::Kind::kSchema;
    c.schema = d.schema;
    c.table = d.table;
    c.inc = d.fact_inc;
    c.object = "table";
    c.hlc = d.hlc;
    c.drop = true;
    hold(c);
  }
  if (!b.empty()) db_->kv().write(b, true);
  return fresh;
}

uint64_t Replica::held_schema_steps() {
  std::lock_guard db_lock(db_->mu());
  uint64_t n = 0;
  const std::string lo(1, kSchemaHolds);
  auto it = db_->kv().iterate(KvRange{lo, prefix_end(lo)}, false);
  for (; it->valid(); it->next()) ++n;
  it->check();
  return n;
}

std::string Replica::schema_done(uint64_t token) {
  std::lock_guard lock(writer_);
  nlohmann::json out = nlohmann::json::object();
  if (schema_plan_ && schema_plan_->token == token) {
    out = {{"applied", schema_plan_->applied}, {"skipped", schema_plan_->skipped}, {"unknownTable", schema_plan_->unknown}};
    schema_plan_.reset();
  }
  return out.dump();
}

}  // namespace quereus::sync
