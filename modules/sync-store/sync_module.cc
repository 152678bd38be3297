// modules/sync-store/sync_module.cc — options, the module objects and the SQL functions.
#include "sync_module.h"

#include <map>
#include <mutex>

#include "json_codec.h"
#include <nlohmann/json.hpp>

namespace quereus::sync {
namespace {

constexpr std::string_view kModule = "sync-store";

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return out;
}

// Open replicas, by database name and by path (weak: the database owns its replica).
struct OpenReplicas {
  std::mutex mu;
  std::multimap<std::string, std::weak_ptr<Replica>> by_name;
  std::map<std::string, std::weak_ptr<Replica>> by_path;
};
OpenReplicas& open_replicas() {
  static OpenReplicas r;
  return r;
}

}  // namespace

std::pair<store::StoreOptions, ReplicaOptions> parse_sync_options(std::string_view db,
                                                                   const std::vector<sdk::Option>& options) {
  ReplicaOptions ro;
  auto extra = [&](const sdk::Option& o) {
    const std::string key = lower(o.key);
    if (key == "site_id") {
      if (o.value.type() != sdk::ValueType::kText || !SiteId::parse(o.value.as_text()))
        throw sdk::Error::misuse(store::option_error_prefix(kModule, db) +
                                 "'site_id' must be a site id: 22 characters of base64url (16 bytes), got " +
                                 o.value.debug_string());
      ro.site = SiteId::parse(o.value.as_text());
      return true;
    }
    if (key == "allow_resurrection") {
      ro.allow_resurrection = store::option_bool(kModule, db, o);
      return true;
    }
    if (key == "replicate_schema") {
      ro.replicate_schema = store::option_bool(kModule, db, o);
      return true;
    }
    if (key == "unknown_tables") {
      const std::string v = o.value.type() == sdk::ValueType::kText ? lower(o.value.as_text()) : "";
      if (v == "quarantine") ro.unknown_tables = UnknownTables::kQuarantine;
      else if (v == "ignore") ro.unknown_tables = UnknownTables::kIgnore;
      else if (v == "store-and-forward") ro.unknown_tables = UnknownTables::kForward;
      else
        throw sdk::Error::misuse(store::option_error_prefix(kModule, db) +
                                 "'unknown_tables' must be quarantine, ignore or store-and-forward, got " +
                                 o.value.debug_string());
      return true;
    }
    if (key == "quarantine_horizon_ms") {
      ro.quarantine_horizon_ms = static_cast<uint64_t>(store::option_size(kModule, db, o));
      return true;
    }
    if (key == "tombstone_horizon_ms") {
      ro.tombstone_horizon_ms = static_cast<uint64_t>(store::option_size(kModule, db, o));
      return true;
    }
    return false;
  };
  store::StoreOptions so =
      store::parse_options(db, options, kModule, extra, ", site_id, allow_resurrection, replicate_schema, tombstone_horizon_ms, unknown_tables, quarantine_horizon_ms");
  return {so, ro};
}

sdk::Capabilities SyncStoreModule::capabilities() const { return store::StoreModule::capabilities(); }

std::shared_ptr<sdk::Module> SyncStoreModule::open_database(std::string_view database_name,
                                                            const std::vector<sdk::Option>& options) {
  auto [so, ro] = parse_sync_options(database_name, options);
  auto db = std::make_shared<store::StoreDb>(so);
  auto replica = std::make_shared<Replica>(db, std::move(ro));
  {
    OpenReplicas& open = open_replicas();
    std::lock_guard lock(open.mu);
    std::erase_if(open.by_name, [](const auto& e) { return e.second.expired(); });
    std::erase_if(open.by_path, [](const auto& e) { return e.second.expired(); });
    open.by_name.emplace(lower(database_name), replica);
    open.by_path[db->path()] = replica;
  }
  return std::make_shared<SyncStoreDbModule>(std::move(db), std::move(replica));
}

std::shared_ptr<Replica> find_replica(std::string_view key) {
  OpenReplicas& open = open_replicas();
  std::lock_guard lock(open.mu);
  if (auto p = open.by_path.find(std::string(key)); p != open.by_path.end())
    if (auto r = p->second.lock()) return r;
  std::shared_ptr<Replica> found;
  auto [lo, hi] = open.by_name.equal_range(lower(key));
  for (auto it = lo; it != hi; ++it) {
    auto r = it->second.lock();
    if (!r) continue;
    if (found)
      throw sdk::Error::misuse("sync-store: more than one open database is named '" + std::string(key) +
                               "'; name it by its path instead");
    found = r;
  }
  if (!found)
    throw sdk::Error(QRS_NOTFOUND, "sync-store: no open sync-store database is named '" + std::string(key) +
                                       "' (give the database's name or its path)");
  return found;
}

std::string status_json(Replica& replica) {
  ReplicaStatus s = replica.status();
  nlohmann::json o{{"siteId", s.site.text()},
                     {"clock", s.clock.text()},
                     {"nextSeq", s.next_seq},
                     {"floor", s.floor},
                     {"logEntries", s.log_entries},
                     {"logPositions", s.log_positions},
                     {"capturedBatches", s.captured_batches},
                     {"appliedBatches", s.applied_batches},
                     {"holds", s.holds},
                     {"rejectedHolds", s.rejected_holds},
                     {"heldSchemaSteps", s.held_schema_steps},
                     {"schemaHolds", s.schema_holds},
                     {"writeBarrier", s.write_barrier},
                     {"unknownTables",
                      {{"quarantined", s.quarantined},
                       {"ignored", s.ignored},
                       {"forwarded", s.forwarded},
                       {"drained", s.drained},
                       {"byTable", s.unknown_by_table}}}};
  nlohmann::json peers = nlohmann::json::object();
  for (const auto& [site, c] : s.peers) peers[site] = {{"received", c.first}, {"sent", c.second}};
  o["peers"] = std::move(peers);
  if (s.pending_hub) o["pendingHub"] = true;
    return o.dump();
}

void SyncStoreDbModule::schema_commit() {
  try {
    replica_->schema_flush();
    StoreDbModule::schema_commit();
  } catch (...) {
    StoreDbModule::schema_rollback();
    replica_->schema_end(false);
    throw;
  }
  replica_->schema_end(true);
}

void SyncStoreDbModule::schema_rollback() {
  StoreDbModule::schema_rollback();
  replica_->schema_end(false);
}

std::string SyncStoreDbModule::replication(std::string_view op, std::string_view args) {
  try {
    return replication_request(op, args);
  } catch (const nlohmann::json::exception& e) {
    throw sdk::Error(QRS_FORMAT, "sync-store: replication '" + std::string(op) + "': malformed arguments (" + e.what() + ")");
  }
}

std::string SyncStoreDbModule::replication_request(std::string_view op, std::string_view args) {
  // A page (resolve, resolve_schema) is parsed by the change-set reader alone, once.
  const bool page = op == "resolve" || op == "resolve_schema";
  nlohmann::json a = args.empty() || page ? nlohmann::json::object()
                                          : nlohmann::json::parse(args.begin(), args.end(), nullptr, false);
  if (a.is_discarded() || !a.is_object())
    throw sdk::Error(QRS_FORMAT, "sync-store: replication '" + std::string(op) + "': the arguments are not a JSON object");
  auto token = [&]() {
    if (!a.contains("token") || !a["token"].is_number_unsigned())
      throw sdk::Error(QRS_FORMAT, "sync-store: replication '" + std::string(op) + "' needs a numeric token");
    return a["token"].get<uint64_t>();
  };
  if (op == "status") return status_json(*replica_);
  if (op == "prune") {  // the maintenance the sync client runs every prune_interval_ms
    const uint64_t tombstones = replica_->prune_tombstones();
    const uint64_t swept = replica_->last_swept();
    const uint64_t holds = replica_->prune_holds();
    return nlohmann::json{{"tombstones", tombstones}, {"holds", holds}, {"swept", swept}}.dump();
  }
  if (op == "site") {  // the cheap part of status (status walks the change log to count it)
    Replica::Position pos = replica_->position();
    return nlohmann::json{{"siteId", replica_->site().text()},
                          {"floor", pos.floor},
                          {"ownFloor", pos.own_floor},
                          {"nextSeq", pos.next_seq}}
        .dump();
  }
  if (op == "changes") {
    std::optional<SiteId> peer;
    if (a.contains("peer") && a["peer"].is_string()) peer = SiteId::parse(a["peer"].get<std::string>());
    const uint64_t since = a.value("since", uint64_t{0});
    const uint64_t batch = a.value("batchSize", uint64_t{1000});
    std::optional<SiteId> only;
    if (a.value("origin", std::string()) == "self") only = replica_->site();
    const uint64_t max_bytes = a.value("maxBytes", uint64_t{0});
    // `pastFloor`: our own writes from a position behind the newest deletion of ours
    // collected (the live ones; the collected deletions are gone) — for a hub that lost
    // what it had acknowledged.
    const bool past_floor = only && a.value("pastFloor", false);
    ChangeBatch b = replica_->changes_since(peer, since, batch == 0 ? 1000 : batch, only, max_bytes, past_floor);
    if (only && !b.snapshot_required) b.origin = PushOrigin{replica_->site(), since, b.cursor};
    return batch_to_json(b);
  }
  if (op == "snapshot") {
    // A snapshot page (docs/sync-network.md "Snapshots"): `after` is the previous page's
    // `next` (base64; "" to begin), `head` the first page's.
    std::string after;
    if (a.contains("after") && a["after"].is_string() && !a["after"].get<std::string>().empty()) {
      std::optional<std::string> k = base64_decode(a["after"].get<std::string>());
      if (!k) throw sdk::Error(QRS_FORMAT, "sync-store: snapshot: `after` is not base64");
      after = std::move(*k);
    }
    const uint64_t batch = a.value("batchSize", uint64_t{1000});
    Replica::SnapshotPage page = replica_->snapshot(after, a.value("head", uint64_t{0}), batch == 0 ? 1000 : batch,
                                                    a.value("maxBytes", uint64_t{0}));
    ChangeBatch b;
    b.sets = std::move(page.sets);
    nlohmann::json j = batch_json(b);
    j.erase("cursor");
    j.erase("hasMore");
    j["next"] = base64(page.next);
    j["done"] = page.done;
    j["head"] = page.head;
    // For the receiver's purge of rows this replica no longer has (docs/sync-store.md
    // "Snapshot purge"): whose chunk, between which checkpoints, and the first's frontier.
    nlohmann::json snap{{"source", replica_->site().text()}, {"after", base64(after)}, {"next", j["next"]},
                        {"done", page.done}, {"keyEpoch", page.key_epoch}, {"holds", page.holds}};
    if (after.empty()) {
      nlohmann::json f = nlohmann::json::array();
      for (const Hlc& h : page.frontier) f.push_back(h.text());
      snap["frontier"] = std::move(f);
    }
    j["snapshot"] = std::move(snap);
    return j.dump();
  }
  if (op == "forget_peer") {
    std::optional<SiteId> site = a.contains("site") && a["site"].is_string()
                                     ? SiteId::parse(a["site"].get<std::string>())
                                     : std::nullopt;
    if (!site) throw sdk::Error(QRS_FORMAT, "sync-store: replication 'forget_peer' needs `site`, a site id");
    replica_->forget_peer(*site);
    return "{}";
  }
  if (op == "peer" || op == "set_peer") {
    // A peer's cursors (a hub's, for the network client): `received` is the position of
    // theirs we applied up to, `sent` the position of ours they acknowledged.
    std::optional<SiteId> site = a.contains("site") && a["site"].is_string()
                                     ? SiteId::parse(a["site"].get<std::string>())
                                     : std::nullopt;
    if (!site)
      throw sdk::Error(QRS_FORMAT, "sync-store: replication '" + std::string(op) + "' needs `site`, a site id");
    Replica::PeerCursors c = replica_->peer(*site);
    if (op == "set_peer") {
      if (a.contains("received")) c.received = a["received"].get<uint64_t>();
      if (a.contains("sent")) c.sent = a["sent"].get<uint64_t>();
      if (a.contains("snapshot")) {
        const nlohmann::json& snap = a["snapshot"];
        c.in_snapshot = snap.is_object();
        c.snapshot_head = c.in_snapshot ? snap.value("head", uint64_t{0}) : 0;
        c.snapshot_after.clear();
        if (c.in_snapshot && snap.contains("after")) {
          std::optional<std::string> k = base64_decode(snap["after"].get<std::string>());
          if (!k) throw sdk::Error(QRS_FORMAT, "sync-store: set_peer: snapshot.after is not base64");
          c.snapshot_after = std::move(*k);
        }
      }
      replica_->set_peer(*site, c);
    }
    nlohmann::json out{{"received", c.received}, {"sent", c.sent}};
    if (c.in_snapshot) out["snapshot"] = {{"head", c.snapshot_head}, {"after", base64(c.snapshot_after)}};
    return out.dump();
  }
  // The host resolves a page's schema, then its data: the page is parsed once.
  auto parsed = [&]() {
    std::lock_guard lock(parsed_mu_);
    if (parsed_ && parsed_->text == args) {
      ParsedPage p = std::move(*parsed_);
      parsed_.reset();
      return p;
    }
    parsed_.reset();
    ParsedPage p;
    p.sets = sets_from_json(args, &p.snapshot, &p.origin, &p.frontier);
    return p;
  };
  if (op == "resolve") {
    ParsedPage p = parsed();
    return replica_->resolve_for_engine(std::move(p.sets), p.snapshot ? &*p.snapshot : nullptr, p.origin ? &*p.origin : nullptr,
                                        p.frontier.empty() ? nullptr : &p.frontier);
  }
  // Schema replication (docs/sync-store.md "Schema replication").
  if (op == "capture_schema") {
    replica_->capture_schema(args);
    return "{}";
  }
  if (op == "resolve_schema") {
    ParsedPage p = parsed();
    // A push the resolve will refuse (it starts past what we have of its pusher) runs none
    // of its schema steps either; the held ones still run.
    const bool gap = p.origin && p.origin->after > replica_->pushed_through(p.origin->site);
    std::string out = replica_->resolve_schema(gap ? std::vector<ChangeSet>{} : p.sets);
    p.text.assign(args);
    std::lock_guard lock(parsed_mu_);
    parsed_.emplace(std::move(p));
    return out;
  }
  if (op == "schema_phase" || op == "schema_stage") {
    std::lock_guard lock(db_->mu());
    if (!db_->in_schema_scope())
      throw sdk::Error(QRS_MISUSE, "sync-store: replication '" + std::string(op) + "' runs only inside the host's schema-change scope");
  }
  if (op == "schema_phase") {
    if (a.value("phase", std::string("before")) == "before") {
      // The page's rows will be resolved and committed inside this phase's scope; a group
      // commit another connection's open transaction holds back would land them after it,
      // apart from the phase (docs/sync-store.md "Schema replication"). Refused before any
      // of the phase's DDL has run (a rolled-back ALTER would doom that transaction).
      std::lock_guard lock(db_->mu());
      if (db_->any_open_transaction())
        throw sdk::Error(QRS_BUSY, "sync-store: a page with schema changes waits while another connection has a "
                                   "transaction open on this replica: apply it again once that one has ended");
    }
    std::optional<std::pair<std::string, std::string>> table;
    if (a.contains("table")) table.emplace(a.value("schema", std::string("main")), a["table"].get<std::string>());
    replica_->schema_phase(token(), a.value("phase", std::string("before")), std::move(table));
    return "{}";
  }
  if (op == "schema_stage") {
    replica_->schema_stage(token());
    return "{}";
  }
  if (op == "schema_hold") {
    const bool fresh = replica_->schema_hold(token(), a.at("schema").get<std::string>(),
                                             a.at("table").get<std::string>(), a.value("error", std::string()));
    return nlohmann::json{{"new", fresh}}.dump();
  }
  if (op == "schema_held") return nlohmann::json{{"held", replica_->held_schema_steps()}}.dump();
  if (op == "schema_done") return replica_->schema_done(token());
  if (op == "arm") {
    replica_->arm(token());
    return "{}";
  }
  if (op == "finish") return replica_->finish(token());
  if (op == "abandon") {
    std::optional<size_t> reject;
    if (a.contains("reject") && a["reject"].is_number_unsigned()) reject = a["reject"].get<size_t>();
    replica_->abandon(token(), reject, a.value("error", std::string()));
    return "{}";
  }
  throw sdk::Error(QRS_NOTFOUND, "sync-store: unknown replication request '" + std::string(op) + "'");
}

namespace {

std::string text_arg(std::span<const sdk::Value> args, size_t i, const char* fn) {
  if (i >= args.size() || args[i].type() != sdk::ValueType::kText)
    throw sdk::Error::mismatch(std::string(fn) + "() takes the database name (TEXT) as argument " + std::to_string(i + 1));
  return std::string(args[i].as_text());
}

}  // namespace

void register_sync_store(sdk::Registrar& r) {
  r.add_module(std::string(kModule), std::make_shared<SyncStoreModule>());
  // sync_site_id(db): this replica's site id.
  r.add_scalar("sync_site_id", 1, 0, QRS_LT_TEXT, [](std::span<const sdk::Value> args) {
    return sdk::Value::text(find_replica(text_arg(args, 0, "sync_site_id"))->site().text());
  });
  // sync_status(db): the replica's state as JSON.
  r.add_scalar("sync_status", 1, 0, QRS_LT_JSON, [](std::span<const sdk::Value> args) {
    return sdk::Value::json(status_json(*find_replica(text_arg(args, 0, "sync_status"))));
  });
  // sync_changes(db, since [, peer site id]): a page of changes after `since`, as JSON.
  r.add_scalar("sync_changes", -1, 0, QRS_LT_JSON, [](std::span<const sdk::Value> args) {
    if (args.size() < 2 || args.size() > 4)
      throw sdk::Error::misuse("sync_changes(db, since [, peer_site_id [, batch_size]]) takes 2 to 4 arguments");
    auto replica = find_replica(text_arg(args, 0, "sync_changes"));
    if (args[1].type() != sdk::ValueType::kInteger || args[1].as_integer() < 0)
      throw sdk::Error::mismatch("sync_changes(): `since` must be a non-negative INTEGER (a cursor)");
    std::optional<SiteId> peer;
    if (args.size() >= 3 && !args[2].is_null()) {
      peer = args[2].type() == sdk::ValueType::kText ? SiteId::parse(args[2].as_text()) : std::nullopt;
      if (!peer) throw sdk::Error::mismatch("sync_changes(): the peer must be a site id (22 characters of base64url)");
    }
    size_t batch = 1000;
    if (args.size() == 4) {
      if (args[3].type() != sdk::ValueType::kInteger || args[3].as_integer() < 1)
        throw sdk::Error::mismatch("sync_changes(): batch_size must be a positive INTEGER");
      batch = static_cast<size_t>(args[3].as_integer());
    }
    return sdk::Value::json(batch_to_json(replica->changes_since(peer, static_cast<uint64_t>(args[1].as_integer()), batch)));
  });
  // sync_prune(db): deletes the tombstones and holds older than their horizons; returns
  // how many.
  r.add_scalar("sync_prune", 1, 0, QRS_LT_INTEGER, [](std::span<const sdk::Value> args) {
    auto replica = find_replica(text_arg(args, 0, "sync_prune"));
    return sdk::Value::integer(static_cast<int64_t>(replica->prune_tombstones() + replica->prune_holds()));
  });
  // sync_basis(db): the basis lifecycle records (which logical schemas map each basis table).
  r.add_scalar("sync_basis", 1, 0, QRS_LT_JSON, [](std::span<const sdk::Value> args) {
    return sdk::Value::json(find_replica(text_arg(args, 0, "sync_basis"))->basis_records());
  });
  // sync_abandon_snapshot(db): forgets every snapshot in progress (its checkpoint), which
  // lifts the write barrier; the sync client starts over by delta, or by a new snapshot if
  // the source asks for one. Returns how many were abandoned.
  r.add_scalar("sync_abandon_snapshot", 1, 0, QRS_LT_INTEGER, [](std::span<const sdk::Value> args) {
    return sdk::Value::integer(
        static_cast<int64_t>(find_replica(text_arg(args, 0, "sync_abandon_snapshot"))->abandon_snapshots()));
  });
  // sync_drain(db): applies the held changes of tables that exist now; returns how many.
  r.add_scalar("sync_drain", 1, 0, QRS_LT_INTEGER, [](std::span<const sdk::Value> args) {
    return sdk::Value::integer(static_cast<int64_t>(find_replica(text_arg(args, 0, "sync_drain"))->drain()));
  });
  // sync_apply(db, changes): applies a change batch (sync_changes' JSON), returns counts.
  r.add_scalar("sync_apply", 2, 0, QRS_LT_JSON, [](std::span<const sdk::Value> args) {
    auto replica = find_replica(text_arg(args, 0, "sync_apply"));
    if (args[1].type() != sdk::ValueType::kText && args[1].type() != sdk::ValueType::kJson)
      throw sdk::Error::mismatch("sync_apply(): the changes must be JSON text (what sync_changes returns)");
    std::vector<Hlc> frontier;
    std::vector<ChangeSet> sets = sets_from_json(args[1].bytes(), nullptr, nullptr, &frontier);
    return sdk::Value::json(result_to_json(replica->apply(sets, frontier.empty() ? nullptr : &frontier)));
  });
}

}  // namespace quereus::sync
