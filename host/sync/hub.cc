#include "sync/hub.h"

#include <openssl/crypto.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "config/config_loader.h"
#include "config/host_setup.h"
#include "sync/protocol.h"

namespace quereus::syncnet {
namespace {

std::string http_ok(const nlohmann::json& data) { return safe_dump(nlohmann::json{{"ok", true}, {"data", data}}); }
HttpReply http_error(unsigned status, std::string_view code, std::string_view message) {
  return {status, safe_dump(nlohmann::json{{"ok", false}, {"error", {{"code", code}, {"message", message}}}})};
}

std::string query_param(std::string_view target, std::string_view name) {
  size_t q = target.find('?');
  if (q == std::string_view::npos) return "";
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) return std::string(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return "";
}

bool parse_u64(const std::string& s, uint64_t* out) {
  if (s.empty() || s.size() > 19 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  *out = std::stoull(s);
  return true;
}

}  // namespace

Hub::Hub(ServerConfig config, std::shared_ptr<Registry> registry)
    : config_(std::move(config)), registry_(std::move(registry)) {
  std::filesystem::create_directories(config_.data_dir);
}

Hub::~Hub() = default;

bool Hub::token_ok(std::string_view token, std::string_view site) const {
  bool ok = false;
  for (const ServerToken& t : config_.tokens) {  // every token compared, each in constant time
    if (t.token.size() != token.size() || CRYPTO_memcmp(t.token.data(), token.data(), token.size()) != 0) continue;
    ok = ok || site.empty() || t.sites.empty() || std::find(t.sites.begin(), t.sites.end(), site) != t.sites.end();
  }
  return ok || (config_.allow_anonymous && token.empty());
}

Hub::Db& Hub::open(const std::string& id, bool create) {
  auto it = dbs_.find(id);
  if (it != dbs_.end()) {
    it->second.last_used = std::chrono::steady_clock::now();
    return it->second;
  }
  namespace fs = std::filesystem;
  if (!fs::exists(fs::path(config_.data_dir) / id)) {
    if (!create) throw Error(StatusCode::kNotFound, "no hub database '" + id + "'");
    size_t existing = 0;
    for (const auto& e : fs::directory_iterator(config_.data_dir)) existing += e.is_directory() ? 1 : 0;
    if (existing >= static_cast<size_t>(config_.max_databases))
      throw Error(StatusCode::kTooBig, "the hub holds " + std::to_string(existing) +
                                           " databases (max_databases); refusing to create '" + id + "'");
  }
  if (dbs_.size() >= static_cast<size_t>(config_.max_open_databases)) {
    // Close the least recently used database no connection is on.
    auto victim = dbs_.end();
    for (auto d = dbs_.begin(); d != dbs_.end(); ++d)
      if (d->second.sessions.empty() && (victim == dbs_.end() || d->second.last_used < victim->second.last_used))
        victim = d;
    if (victim != dbs_.end()) {
      spdlog::info("sync hub: closing database '{}' (least recently used of {})", victim->first, dbs_.size());
      dbs_.erase(victim);
    }
  }
  DatabaseConfig dc;
  dc.default_module = "sync-store";
  SettingList& opts = dc.module_options["sync-store"];
  opts.emplace_back("path", Value::Text((std::filesystem::path(config_.data_dir) / id).string()));
  opts.emplace_back("unknown_tables", Value::Text("store-and-forward"));
  for (const auto& [k, v] : config_.module_options)
    if (k != "path" && k != "unknown_tables") opts.emplace_back(k, v);
  dc.module_origins["sync-store"] = config_.origin;
  std::unique_ptr<Database> db;
  Status st = open_configured_database(registry_, id, dc, &db);
  if (!st.ok()) throw Error(st.code(), "hub database '" + id + "': " + st.message());
  std::string status;
  st = db->sync_request("site", "{}", &status);
  if (!st.ok()) throw Error(st.code(), "hub database '" + id + "': " + st.message());
  Db& d = dbs_[id];
  d.db = std::move(db);
  d.site = parse_object(status).value("siteId", std::string());
  d.last_used = std::chrono::steady_clock::now();
  d.last_pruned = {};  // maintained at the next tick: a database reopened often is still collected
  spdlog::info("sync hub: opened database '{}' (site {})", id, d.site);
  return d;
}

void Hub::close_idle(std::chrono::steady_clock::duration idle) {
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(dbs_, [&](const auto& e) {
    const bool go = e.second.sessions.empty() && now - e.second.last_used > idle;
    if (go) spdlog::info("sync hub: closing idle database '{}'", e.first);
    return go;
  });
}

void Hub::maintain() {
  if (config_.prune_interval_ms <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  for (auto& [id, d] : dbs_) {
    if (now - d.last_pruned < std::chrono::milliseconds(config_.prune_interval_ms)) continue;
    d.last_pruned = now;
    std::string out;
    Status st = d.db->sync_request("prune", "{}", &out);
    if (!st.ok()) {
      ++counters_.errors;
      spdlog::warn("sync hub: the maintenance of database '{}' failed: {}", id, st.to_string());
      continue;
    }
    const nlohmann::json r = parse_object(out);
    const uint64_t tombstones = r.value("tombstones", uint64_t{0}), holds = r.value("holds", uint64_t{0});
    ++counters_.prunes;
    counters_.tombstones_pruned += tombstones;
    counters_.holds_pruned += holds;
    if (tombstones || holds)
      spdlog::info("sync hub: database '{}': collected {} tombstone(s) and {} hold(s) past their horizons", id,
                   tombstones, holds);
  }
}

HubReply Hub::handshake(HubSession& s, const nlohmann::json& m) {
  HubReply r;
  auto fatal = [&](const char* c, const std::string& msg, uint16_t close) {
    ++counters_.errors;
    r.messages.push_back(error_message(c, msg, true));
    r.close = true;
    r.close_code = close;
    r.close_reason = c;
    return r;
  };
  // The version first, before authentication and before any store is touched.
  if (!m.contains("protocolVersion") || !m["protocolVersion"].is_number_integer() ||
      m["protocolVersion"].get<int64_t>() != kProtocolVersion)
    return fatal(code::kVersionMismatch,
                 "this hub speaks sync protocol version " + std::to_string(kProtocolVersion) + "; the peer sent " +
                     (m.contains("protocolVersion") ? safe_dump(m["protocolVersion"]).substr(0, 32) : std::string("none")),
                 kCloseVersionMismatch);
  if (s.authenticated) {
    ++counters_.errors;
    r.messages.push_back(error_message(code::kAlreadyAuthenticated, "this connection already completed its handshake", true));
    r.close = true;
    r.close_code = kCloseProtocolError;
    return r;
  }
  const std::string token = m.contains("token") && m["token"].is_string() ? m["token"].get<std::string>() : "";
  if (!token_ok(token)) {
    ++counters_.auth_failures;
    spdlog::warn("sync hub: connection {} refused: bad or missing token", s.id);
    return fatal(code::kAuthFailed, token.empty() ? "a token is required" : "the token is not accepted",
                 kCloseAuthFailed);
  }
  const std::string site = m.contains("siteId") && m["siteId"].is_string() ? m["siteId"].get<std::string>() : "";
  if (!token_ok(token, site)) {
    ++counters_.auth_failures;
    spdlog::warn("sync hub: connection {} refused: its token is not bound to site {}", s.id, site.substr(0, 22));
    return fatal(code::kAuthFailed, "the token is not accepted for this site id", kCloseAuthFailed);
  }
  const std::string id = m.contains("databaseId") && m["databaseId"].is_string() ? m["databaseId"].get<std::string>() : "";
  if (!valid_hub_database_id(id))
    return fatal(code::kMissingDatabase,
                 id.empty() ? "the handshake names no databaseId"
                            : "'" + id.substr(0, 64) + "' is not a database id (A-Z a-z 0-9 _ : . -, at most 128)",
                 kCloseMissingDatabase);
  if (!is_site_id_text(site))
    return fatal(code::kMessageError, "the handshake's siteId is not a site id (22 characters of base64url)",
                 kCloseProtocolError);
  Db* opened = nullptr;
  try {
    opened = &open(id);
  } catch (const Error& e) {
    if (e.code() != StatusCode::kTooBig) throw;
    return fatal(code::kMissingDatabase, e.what(), kCloseMissingDatabase);
  }
  Db& d = *opened;
  if (site == d.site)
    return fatal(code::kWrongSite, "the peer claims the hub's own site id", kCloseProtocolError);
  s.authenticated = true;
  s.database_id = id;
  s.site = site;
  d.sessions.insert(&s);
  ++counters_.handshakes;
  spdlog::info("sync hub: connection {} is site {} on database '{}'", s.id, site, id);
  r.messages.push_back(nlohmann::json{{"type", "handshake_ack"},
                                      {"serverSiteId", d.site},
                                      {"connectionId", std::to_string(s.id)},
                                      {"databaseId", id},
                                      {"maxMessageBytes", config_.max_message_bytes},
                                      {"protocolVersion", kProtocolVersion}}
                           .dump());
  return r;
}

std::string Hub::changes(Db& d, const std::string& peer_site, uint64_t since, uint64_t batch) {
  std::string reply;
  Status st = d.db->sync_request(
      "changes",
      nlohmann::json{{"since", since}, {"peer", peer_site}, {"batchSize", batch},
                     {"maxBytes", static_cast<uint64_t>(config_.max_message_bytes) / 2}}
          .dump(),
      &reply);
  if (!st.ok()) throw Error(st.code(), st.message());
  ++counters_.pages_served;
  return reply;
}

std::string Hub::apply(Db& d, HubSession* from, const std::string& site, const std::string& text,
                       const nlohmann::json& m) {
  // [FIX] A site is bound to its connection: a peer pushes its own writes only, so a change
  // set naming another site is refused whole (nothing applied).
  const nlohmann::json* sets = m.contains("changeSets") ? &m["changeSets"] : nullptr;
  if (!sets || !sets->is_array()) throw Error(StatusCode::kFormat, "$.changeSets: not an array");
  for (size_t i = 0; i < sets->size(); ++i) {
    const nlohmann::json& cs = (*sets)[i];
    if (!cs.is_object() || !cs.contains("siteId") || cs["siteId"] != site)
      throw Error(StatusCode::kMisuse, "$.changeSets[" + std::to_string(i) + "].siteId: a peer may only push its own "
                                      "site's changes (this connection is site " + site + ")");
  }
  // A push is changes, never a snapshot chunk: a chunk's `snapshot` member would have the
  // hub purge its rows by a frontier the peer made up.
  if (m.contains("snapshot"))
    throw Error(StatusCode::kMisuse, "$.snapshot: a push cannot carry a snapshot chunk's purge; nothing applied");
  // The push's place in the pusher's log names the pusher: it is this connection's site
  // too (the database keeps its record of each pusher by it).
  if (auto o = m.find("origin"); o != m.end() && !o->is_null()) {
    if (!o->is_object() || !o->contains("site") || (*o)["site"] != site)
      throw Error(StatusCode::kMisuse, "$.origin.site: a peer may only push its own site's changes (this connection is "
                                       "site " + site + ")");
  }
  std::string result;
  Status st = d.db->sync_apply(text, &result);  // the frame as received: no copy
  if (!st.ok()) throw Error(st.code(), st.message());
  nlohmann::json r = parse_object(result);
  const uint64_t applied = r.value("applied", uint64_t{0}), held = r.value("unknownTable", uint64_t{0});
  // Schema facts count apart (`schema.applied`): a push of DDL alone is news too, or peers
  // that pull only when told (poll_ms 0) would not see it until their next write's page.
  const uint64_t schema_applied =
      r.contains("schema") && r["schema"].is_object() ? r["schema"].value("applied", uint64_t{0}) : 0;
  ++counters_.applies;
  counters_.facts_applied += applied;
  counters_.facts_held += held;
  if (applied + held + schema_applied > 0) {
    // Tell the database's other connections there is something new; they pull it in order.
    for (HubSession* o : d.sessions) {
      if (o == from || o->notify_pending || !o->send) continue;
      o->notify_pending = true;
      ++counters_.notifications;
      o->send(R"({"type":"changes_available"})");
    }
  }
  return result;
}

HubReply Hub::handle(HubSession& s, const std::string& text) {
  ++counters_.messages;
  HubReply r;
  std::string why;
  std::optional<nlohmann::json> m = parse_message(text, &why);
  if (!m) {
    ++counters_.errors;
    r.messages.push_back(error_message(code::kMessageError, why, false));
    return r;
  }
  const std::string type = (*m)["type"].get<std::string>();
  const nlohmann::json request_id = request_id_of(*m);
  if (type == "handshake") {
    try {
      return handshake(s, *m);
    } catch (const std::exception& e) {
      ++counters_.errors;
      spdlog::error("sync hub: handshake of connection {} failed: {}", s.id, e.what());
      r.messages.push_back(error_message("HUB_ERROR", e.what(), true));
      r.close = true;
      r.close_code = 1011;
      return r;
    }
  }
  if (type == "ping") {
    r.messages.push_back(R"({"type":"pong"})");
    return r;
  }
  if (!s.authenticated) {
    ++counters_.errors;
    r.messages.push_back(error_message(code::kNotAuthenticated, "send a handshake first", false, request_id));
    return r;
  }
  auto found = dbs_.find(s.database_id);
  if (found == dbs_.end()) {  // cannot happen: a database with a session stays open
    r.messages.push_back(error_message("HUB_ERROR", "the database is not open", true));
    r.close = true;
    r.close_code = 1011;
    return r;
  }
  Db& d = found->second;
  d.last_used = std::chrono::steady_clock::now();
  if (type == "get_changes") {
    try {
      uint64_t since = 0;
      if (m->contains("since")) {
        if (!(*m)["since"].is_number_unsigned()) throw Error(StatusCode::kFormat, "$.since: not a cursor (an unsigned integer)");
        since = (*m)["since"].get<uint64_t>();
      }
      s.notify_pending = false;
      std::string page = changes(d, s.site, since, static_cast<uint64_t>(config_.batch_size));
      r.messages.push_back(with_request_id(with_type("changes", page), request_id));
    } catch (const std::exception& e) {
      ++counters_.errors;
      r.messages.push_back(error_message(code::kGetChangesError, e.what(), false, request_id));
    }
    return r;
  }
  if (type == "get_snapshot") {
    try {
      nlohmann::json args{{"batchSize", static_cast<uint64_t>(config_.batch_size)},
                          {"maxBytes", static_cast<uint64_t>(config_.max_message_bytes) / 2}};
      if (m->contains("after")) {
        if (!(*m)["after"].is_string()) throw Error(StatusCode::kFormat, "$.after: not a string");
        args["after"] = (*m)["after"];
      }
      if (m->contains("head")) {
        if (!(*m)["head"].is_number_unsigned()) throw Error(StatusCode::kFormat, "$.head: not a cursor");
        args["head"] = (*m)["head"];
      }
      std::string page;
      Status st = d.db->sync_request("snapshot", args.dump(), &page);
      if (!st.ok()) throw Error(st.code(), st.message());
      ++counters_.pages_served;
      r.messages.push_back(with_request_id(with_type("snapshot_chunk", page), request_id));
    } catch (const std::exception& e) {
      ++counters_.errors;
      r.messages.push_back(error_message("SNAPSHOT_ERROR", e.what(), false, request_id));
    }
    return r;
  }
  if (type == "apply_changes") {
    try {
      std::string result = apply(d, &s, s.site, text, *m);
      nlohmann::json out = parse_object(result);
      out["type"] = "apply_result";
      out["requestId"] = request_id;
      r.messages.push_back(safe_dump(out));
    } catch (const std::exception& e) {
      ++counters_.errors;
      spdlog::warn("sync hub: apply from site {} on '{}' refused: {}", s.site, s.database_id, e.what());
      r.messages.push_back(error_message(code::kApplyError, e.what(), false, request_id));
    }
    return r;
  }
  ++counters_.errors;
  r.messages.push_back(error_message(code::kUnknownMessage, "unknown message type '" + type.substr(0, 64) + "'", false,
                                     request_id));
  return r;
}

void Hub::closed(HubSession& s) {
  if (auto it = dbs_.find(s.database_id); it != dbs_.end()) {
    it->second.sessions.erase(&s);
    it->second.last_used = std::chrono::steady_clock::now();
  }
  s.send = nullptr;
}

std::string Hub::status_json() {
  nlohmann::json dbs = nlohmann::json::object();
  for (auto& [id, d] : dbs_) dbs[id] = {{"site", d.site}, {"connections", d.sessions.size()}};
  return nlohmann::json{{"protocolVersion", kProtocolVersion},
                        {"databases", dbs},
                        {"handshakes", counters_.handshakes},
                        {"authFailures", counters_.auth_failures},
                        {"messages", counters_.messages},
                        {"errors", counters_.errors},
                        {"applies", counters_.applies},
                        {"factsApplied", counters_.facts_applied},
                        {"factsHeld", counters_.facts_held},
                        {"pagesServed", counters_.pages_served},
                        {"prunes", counters_.prunes},
                        {"tombstonesPruned", counters_.tombstones_pruned},
                        {"holdsPruned", counters_.holds_pruned}}
      .dump();
}

HttpReply Hub::http(std::string_view method, std::string_view target, std::string_view authorization,
                    std::string_view site_header, std::string_view version_header, const std::string& body) {
  const std::string& base = config_.base_path;
  std::string_view path = target.substr(0, target.find('?'));
  if (path.substr(0, base.size()) != base || (path.size() > base.size() && path[base.size()] != '/'))
    return http_error(404, "NOT_FOUND", "no such route: " + std::string(path.substr(0, 200)));
  std::string_view rest = path.substr(std::min(path.size(), base.size() + 1));
  std::string token;
  if (authorization.substr(0, 7) == "Bearer ") token = std::string(authorization.substr(7));
  if ((rest == "status" || rest == "metrics") && !token_ok(token)) {
    ++counters_.auth_failures;
    return http_error(401, code::kAuthFailed, "a bearer token is required");
  }
  if (rest == "status" && method == "GET") return {200, http_ok(parse_object(status_json()))};
  if (rest == "metrics" && method == "GET") {
    std::string m;
    auto line = [&](const char* name, const char* help, uint64_t v) {
      m += std::string("# HELP quereus_sync_") + name + " " + help + "\n# TYPE quereus_sync_" + name + " counter\n" +
           "quereus_sync_" + name + " " + std::to_string(v) + "\n";
    };
    line("handshakes_total", "Completed handshakes.", counters_.handshakes);
    line("auth_failures_total", "Refused tokens.", counters_.auth_failures);
    line("messages_total", "WebSocket messages handled.", counters_.messages);
    line("errors_total", "Error replies sent.", counters_.errors);
    line("applies_total", "Pushed pages applied.", counters_.applies);
    line("facts_applied_total", "Facts written to hub tables.", counters_.facts_applied);
    line("facts_held_total", "Facts held store-and-forward.", counters_.facts_held);
    line("pages_served_total", "Change pages served.", counters_.pages_served);
    m += "# HELP quereus_sync_open_databases Hub databases open.\n# TYPE quereus_sync_open_databases gauge\n"
         "quereus_sync_open_databases " + std::to_string(dbs_.size()) + "\n";
    return {200, m, "text/plain; version=0.0.4"};
  }
  // BASE/DB/changes
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos || rest.substr(slash + 1) != "changes")
    return http_error(404, "NOT_FOUND", "no such route: " + std::string(path.substr(0, 200)));
  const std::string id(rest.substr(0, slash));
  if (version_header != std::to_string(kProtocolVersion))
    return http_error(400, code::kVersionMismatch,
                      "send X-Quereus-Sync-Protocol: " + std::to_string(kProtocolVersion) + " (got '" +
                          std::string(version_header.substr(0, 16)) + "')");
  const std::string site(site_header);
  if (!token_ok(token, site)) {
    ++counters_.auth_failures;
    return http_error(401, code::kAuthFailed, token.empty() ? "a bearer token is required" : "the token is not accepted");
  }
  if (!valid_hub_database_id(id)) return http_error(400, code::kMissingDatabase, "not a database id");
  if (!is_site_id_text(site))
    return http_error(400, code::kMessageError, "send X-Site-Id: the peer's site id (22 characters of base64url)");
  try {
    Db& d = open(id, method == "POST");
    if (method == "GET") {
      uint64_t since = 0;
      std::string s = query_param(target, "since");
      if (!s.empty() && !parse_u64(s, &since)) return http_error(400, code::kMessageError, "since: not a cursor");
      return {200, "{\"ok\":true,\"data\":" + changes(d, site, since, static_cast<uint64_t>(config_.batch_size)) + "}"};
    }
    if (method == "POST") {
      std::string why;
      std::optional<nlohmann::json> m = parse_object_bounded(body, &why);
      if (!m) return http_error(400, code::kMessageError, "the body: " + why);
      return {200, "{\"ok\":true,\"data\":" + apply(d, nullptr, site, body, *m) + "}"};
    }
  } catch (const Error& e) {
    if (e.code() == StatusCode::kNotFound) return http_error(404, code::kMissingDatabase, e.what());
    const unsigned status = e.code() == StatusCode::kMisuse ? 403 : e.code() == StatusCode::kFormat ? 400 : 500;
    return http_error(status, status == 500 ? "HUB_ERROR" : code::kMessageError, e.what());
  } catch (const std::exception& e) {
    return http_error(500, "HUB_ERROR", e.what());
  }
  return http_error(405, "METHOD_NOT_ALLOWED", "use GET or POST");
}

}  // namespace quereus::syncnet
