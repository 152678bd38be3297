#include "sync/client.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "sync/protocol.h"

namespace quereus::syncnet {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;
using net::use_awaitable;
using Clock = std::chrono::steady_clock;

namespace {

// A refusal reconnecting cannot cure (token, protocol version, database id).
struct Fatal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Url {
  bool tls = false;
  std::string host, port, path;
};

Url parse_url(const std::string& url) {
  Url u;
  std::string rest;
  if (url.rfind("wss://", 0) == 0) {
    u.tls = true;
    rest = url.substr(6);
  } else if (url.rfind("ws://", 0) == 0) {
    rest = url.substr(5);
  } else {
    throw Fatal("sync: the hub url must start with ws:// or wss:// (got '" + url + "')");
  }
  const size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  u.path = slash == std::string::npos ? "/sync" : rest.substr(slash);
  while (u.path.size() > 1 && u.path.back() == '/') u.path.pop_back();
  u.path += "/ws";
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) throw Fatal("sync: bad IPv6 address in the hub url '" + url + "'");
    u.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') u.port = authority.substr(close + 2);
  } else {
    const size_t colon = authority.rfind(':');
    u.host = authority.substr(0, colon);
    if (colon != std::string::npos) u.port = authority.substr(colon + 1);
  }
  if (u.port.empty()) u.port = u.tls ? "443" : "80";
  if (u.host.empty()) throw Fatal("sync: the hub url names no host ('" + url + "')");
  return u;
}

}  // namespace

struct SyncClient::Impl {
  SyncClientConfig cfg;
  std::string name;
  DatabaseAccess access;
  Url url;
  net::io_context ioc{1};
  std::thread thread;

  mutable std::mutex mu;  // guards st, pushed_commits, pulled_at_head
  std::condition_variable cv;
  State st;
  std::atomic<uint64_t> local_commits{0};
  uint64_t pushed_commits = 0;  // local commits known to be pushed (and acknowledged)
  bool pulled_at_head = false;
  // wait_caught_up asks for a pull (pull_wanted_gen); a pull sent after that carries its
  // generation, and reaching the hub's head records it (head_gen): an older pull in flight
  // does not count.
  uint64_t pull_wanted_gen = 0, head_gen = 0;
  uint64_t inflight_gen = 0;  // I/O thread: the generation of the pull in flight

  // I/O-thread state.
  bool stopping = false;
  net::steady_timer wake{ioc};
  std::function<void()> close_socket;
  std::string my_site, hub_site;
  uint64_t received = 0, sent = 0;
  bool in_snapshot = false;       // pulling a snapshot (resumable: after / head)
  uint64_t snapshot_head = 0;
  std::string snapshot_after;     // base64 of the last key applied
  bool want_pull = false, pull_inflight = false;
  Clock::time_point pull_due{}, push_due{}, next_poll{}, prune_due{};
  bool want_push = false;
  struct Push {
    std::string id;
    uint64_t cursor = 0;
    bool has_more = false;
    uint64_t commits = 0;  // local_commits when the page was read
  };
  std::optional<Push> push;
  uint64_t push_commits_mark = 0;
  uint64_t request_counter = 0;  // never reset: request ids stay unique across reconnects
  bool healthy = false;          // this session applied a page
  // This session's first pull was answered from our cursor (no snapshot needed). Until then,
  // and while a snapshot is in progress, nothing is pushed: a hub restored from an older
  // copy must not take a write of ours past a gap in what it has of us, or its frontier
  // would cover writes it lost (docs/sync-store.md "Snapshot purge").
  bool pulled = false;
  uint64_t hub_max_bytes = uint64_t{16} << 20;  // the hub's frame limit (its acknowledgement)
  bool push_blocked = false;     // a page the hub cannot take: no more pushes this session
  // The hub refused a push as starting past its record of us (it was restored from an older
  // copy): our own writes are read from that record even behind our collected deletions.
  bool push_past_floor = false;
  int push_failures = 0;         // refused pushes in a row: the retry backs off
  int pull_failures = 0;         // pages in a row that failed to apply: likewise
  int snapshot_failures = 0;     // refusals of the snapshot checkpoint in a row
  net::steady_timer backoff{ioc};  // between connections (not woken by commits)

  Impl(SyncClientConfig c, std::string n, DatabaseAccess a)
      : cfg(std::move(c)), name(std::move(n)), access(std::move(a)), url(parse_url(cfg.url)) {}

  void set_state(const std::string& s, const std::string& error = {}) {
    std::lock_guard lock(mu);
    st.state = s;
    if (!error.empty()) st.last_error = error;
    cv.notify_all();
  }

  // Runs fn with the database; a failed Status is thrown.
  std::string db_request(const std::string& op, const nlohmann::json& args) {
    std::string reply;
    Status status;
    access([&](Database& db) { status = db.sync_request(op, args.dump(), &reply); });
    if (!status.ok()) throw std::runtime_error("sync: " + op + ": " + status.to_string());
    return reply;
  }

  void save_cursors() {
    nlohmann::json args{{"site", hub_site}, {"received", received}, {"sent", sent}, {"snapshot", nullptr}};
    if (in_snapshot) args["snapshot"] = {{"head", snapshot_head}, {"after", snapshot_after}};
    db_request("set_peer", args);
    std::lock_guard lock(mu);
    st.received = received;
    st.sent = sent;
  }

  void kick() { wake.cancel(); }

  // The replica's maintenance (prune_interval_ms): tombstones and holds past their horizons,
  // the change log's dead positions. A failure is logged; the session goes on.
  void prune() {
    try {
      const nlohmann::json r = parse_object(db_request("prune", nlohmann::json::object()));
      const uint64_t tombstones = r.value("tombstones", uint64_t{0}), holds = r.value("holds", uint64_t{0}),
                     swept = r.value("swept", uint64_t{0});
      {
        std::lock_guard lock(mu);
        ++st.prunes;
      }
      if (tombstones || holds || swept)
        spdlog::info("sync '{}': maintenance collected {} tombstones and {} held changes, swept {} log records", name,
                     tombstones, holds, swept);
    } catch (const std::exception& e) {
      spdlog::warn("sync '{}': maintenance failed: {}", name, e.what());
    }
  }

  // Until the hub's record exists (its site is known at the first handshake), a placeholder
  // record (the zero site, nothing acknowledged) keeps the replica's maintenance from
  // collecting deletions of ours that no hub has yet (docs/sync-store.md "Snapshot purge").
  static constexpr const char* kPendingHub = "AAAAAAAAAAAAAAAAAAAAAA";
  bool pending_hub_cleared = false;

  net::awaitable<void> run() {
    int attempt = 0;
    prune_due = Clock::now() + std::chrono::milliseconds(cfg.prune_interval_ms);
    try {
      db_request("set_peer", {{"site", kPendingHub}, {"received", 0}, {"sent", 0}, {"snapshot", nullptr}});
    } catch (const std::exception& e) {
      spdlog::warn("sync '{}': {}", name, e.what());
    }
    while (!stopping) {
      set_state("connecting");
      bool acked = false;
      healthy = false;
      try {
        if (url.tls)
          co_await session_tls(acked);
        else
          co_await session_plain(acked);
      } catch (const Fatal& f) {
        spdlog::error("sync '{}': {} — not reconnecting", name, f.what());
        std::lock_guard lock(mu);
        st.state = "failed";
        st.last_error = f.what();
        ++st.failures;
        cv.notify_all();
        co_return;
      } catch (const std::exception& e) {
        if (!stopping) {
          spdlog::warn("sync '{}': connection to {} lost: {}", name, cfg.url, e.what());
          std::lock_guard lock(mu);
          st.last_error = e.what();
          ++st.failures;
        }
      }
      close_socket = nullptr;
      if (stopping) break;
      if (healthy) attempt = 0;  // backoff starts over only after a session that pulled a page
      const int64_t delay = std::min<int64_t>(cfg.reconnect_max_ms, int64_t{1000} << std::min(attempt, 20));
      ++attempt;
      set_state("backoff");
      // The replica's maintenance keeps its schedule while the hub is out of reach (a peer
      // offline for days still collects its tombstones and sweeps its log).
      const auto resume = Clock::now() + std::chrono::milliseconds(delay);
      while (!stopping) {
        const auto now = Clock::now();
        if (cfg.prune_interval_ms > 0 && now >= prune_due) {
          prune_due = now + std::chrono::milliseconds(cfg.prune_interval_ms);
          prune();
          continue;
        }
        if (now >= resume) break;
        backoff.expires_at(cfg.prune_interval_ms > 0 ? std::min(resume, prune_due) : resume);
        beast::error_code ec;
        co_await backoff.async_wait(net::redirect_error(use_awaitable, ec));
      }
    }
    set_state("stopped");
  }

  net::awaitable<tcp::resolver::results_type> resolve() {
    tcp::resolver resolver(ioc);
    co_return co_await resolver.async_resolve(url.host, url.port, use_awaitable);
  }

  net::awaitable<void> session_plain(bool& acked) {
    auto endpoints = co_await resolve();
    websocket::stream<beast::tcp_stream> ws(ioc);
    beast::get_lowest_layer(ws).expires_after(std::chrono::seconds(10));
    co_await beast::get_lowest_layer(ws).async_connect(endpoints, use_awaitable);
    co_await converse(ws, acked);
  }

  net::awaitable<void> session_tls(bool& acked) {
    auto endpoints = co_await resolve();
    net::ssl::context ctx(net::ssl::context::tls_client);
    ctx.set_verify_mode(net::ssl::verify_peer);
    if (cfg.ca_file.empty())
      ctx.set_default_verify_paths();
    else
      ctx.load_verify_file(cfg.ca_file);
    websocket::stream<beast::ssl_stream<beast::tcp_stream>> ws(ioc, ctx);
    beast::get_lowest_layer(ws).expires_after(std::chrono::seconds(10));
    co_await beast::get_lowest_layer(ws).async_connect(endpoints, use_awaitable);
    if (!SSL_set_tlsext_host_name(ws.next_layer().native_handle(), url.host.c_str()))
      throw std::runtime_error("sync: cannot set the TLS server name");
    ws.next_layer().set_verify_callback(net::ssl::host_name_verification(url.host));
    co_await ws.next_layer().async_handshake(net::ssl::stream_base::client, use_awaitable);
    co_await converse(ws, acked);
  }

  template <class Ws>
  net::awaitable<void> converse(Ws& ws, bool& acked) {
    co_await ws.async_handshake(url.host + ":" + url.port, url.path, use_awaitable);
    beast::get_lowest_layer(ws).expires_never();
    websocket::stream_base::timeout t = websocket::stream_base::timeout::suggested(beast::role_type::client);
    t.idle_timeout = std::chrono::seconds(30);
    t.keep_alive_pings = true;
    ws.set_option(t);
    close_socket = [&ws] {
      beast::error_code ignored;
      beast::get_lowest_layer(ws).socket().shutdown(tcp::socket::shutdown_both, ignored);
      beast::get_lowest_layer(ws).socket().close(ignored);
    };
    const std::string hello = handshake_message();
    co_await ws.async_write(net::buffer(hello), use_awaitable);
    // The acknowledgement, within 10 s.
    beast::flat_buffer buffer;
    net::steady_timer ack_timer(ioc, std::chrono::seconds(10));
    bool timed_out = false, answered = false;
    ack_timer.async_wait([&](beast::error_code ec) {
      if (!ec && !answered) {
        timed_out = true;
        if (close_socket) close_socket();
      }
    });
    beast::error_code ec;
    co_await ws.async_read(buffer, net::redirect_error(use_awaitable, ec));
    answered = true;
    ack_timer.cancel();
    if (timed_out) throw std::runtime_error("the hub did not acknowledge the handshake within 10 s");
    if (ec) throw std::runtime_error("handshake: " + ec.message());
    std::string why;
    nlohmann::json ack = parse_message(beast::buffers_to_string(buffer.data()), &why).value_or(nlohmann::json::object());
    if (ack.value("type", "") == "error") {
      const std::string msg = ack.value("code", std::string("ERROR")) + ": " + ack.value("message", std::string());
      if (ack.value("fatal", false)) throw Fatal("the hub refused the handshake: " + msg);
      throw std::runtime_error("the hub refused the handshake: " + msg);
    }
    if (ack.value("type", "") != "handshake_ack")
      throw Fatal("the hub answered the handshake with something else: " + ack.dump().substr(0, 200));
    if (!ack.contains("protocolVersion") || ack["protocolVersion"] != kProtocolVersion)
      throw Fatal("the hub speaks another sync protocol version (" +
                  (ack.contains("protocolVersion") ? ack["protocolVersion"].dump() : std::string("none")) + "; this peer speaks " +
                  std::to_string(kProtocolVersion) + ")");
    hub_site = ack.value("serverSiteId", std::string());
    if (hub_site.size() != 22) throw Fatal("the hub's acknowledgement names no site id");
    hub_max_bytes = ack.contains("maxMessageBytes") && ack["maxMessageBytes"].is_number_unsigned()
                        ? ack["maxMessageBytes"].get<uint64_t>()
                        : uint64_t{16} << 20;
    ws.read_message_max(std::max<uint64_t>(uint64_t{64} << 20, hub_max_bytes));
    push_blocked = false;
    push_failures = 0;
    acked = true;
    load_cursors();
    if (!pending_hub_cleared) {
      save_cursors();  // the hub's record exists from here on
      db_request("forget_peer", {{"site", kPendingHub}});
      pending_hub_cleared = true;
    }
    {
      std::lock_guard lock(mu);
      st.state = "connected";
      st.hub_site = hub_site;
      st.received = received;
      st.sent = sent;
      ++st.connects;
      pulled_at_head = false;
      cv.notify_all();
    }
    spdlog::info("sync '{}': connected to {} (hub site {}, cursors received {} sent {})", name, cfg.url, hub_site,
                 received, sent);
    want_pull = true;
    pull_inflight = false;
    pull_due = Clock::now();
    want_push = !cfg.read_only;
    push_due = Clock::now();
    push.reset();
    pulled = false;
    next_poll = Clock::now() + std::chrono::milliseconds(cfg.poll_ms);

    bool reader_done = false;
    std::exception_ptr reader_error;
    net::co_spawn(ioc, reader(ws), [&](std::exception_ptr e) {
      reader_done = true;
      reader_error = e;
      kick();
    });
    std::exception_ptr driver_error;
    try {
      while (!stopping && !reader_done) {
        const auto now = Clock::now();
        if (want_pull && !pull_inflight && now >= pull_due) {
          want_pull = false;
          pull_inflight = true;
          {
            std::lock_guard lock(mu);
            inflight_gen = pull_wanted_gen;
          }
          const std::string ask = get_changes_message();
          co_await ws.async_write(net::buffer(ask), use_awaitable);
          continue;
        }
        const bool may_push = want_push && !push && pulled && !in_snapshot;
        if (may_push && now >= push_due) {
          co_await push_page(ws);
          continue;
        }
        if (cfg.poll_ms > 0 && now >= next_poll) {
          next_poll = now + std::chrono::milliseconds(cfg.poll_ms);
          want_pull = true;
          continue;
        }
        if (cfg.prune_interval_ms > 0 && now >= prune_due) {
          prune_due = now + std::chrono::milliseconds(cfg.prune_interval_ms);
          prune();
          continue;
        }
        auto until = cfg.poll_ms > 0 ? next_poll : Clock::now() + std::chrono::hours(1);
        if (cfg.prune_interval_ms > 0) until = std::min(until, prune_due);
        if (want_pull && !pull_inflight) until = std::min(until, pull_due);
        if (may_push) until = std::min(until, push_due);
        wake.expires_at(until);
        co_await wake.async_wait(net::redirect_error(use_awaitable, ec));
      }
    } catch (...) {
      driver_error = std::current_exception();
    }
    if (driver_error) {
      if (close_socket) close_socket();
      while (!reader_done) {
        net::steady_timer t(ioc, std::chrono::milliseconds(5));
        co_await t.async_wait(net::redirect_error(use_awaitable, ec));
      }
      std::rethrow_exception(driver_error);
    }
    if (stopping) {
      websocket::close_reason reason(websocket::close_code::normal);
      net::steady_timer guard(ioc, std::chrono::seconds(1));
      guard.async_wait([&](beast::error_code e) {
        if (!e && close_socket) close_socket();
      });
      co_await ws.async_close(reason, net::redirect_error(use_awaitable, ec));
      guard.cancel();
    }
    if (close_socket) close_socket();
    while (!reader_done) {
      net::steady_timer t(ioc, std::chrono::milliseconds(5));
      co_await t.async_wait(net::redirect_error(use_awaitable, ec));
    }
    close_socket = nullptr;
    if (reader_error && !stopping) std::rethrow_exception(reader_error);
  }

  // The handshake (JSON built outside the coroutines: GCC 12 miscompiles brace-initialized
  // JSON inside one).
  std::string handshake_message() {
    my_site = parse_object(db_request("site", nlohmann::json::object())).value("siteId", std::string());
    nlohmann::json hello{{"type", "handshake"},
                         {"databaseId", cfg.database_id},
                         {"siteId", my_site},
                         {"protocolVersion", kProtocolVersion}};
    if (!cfg.token.empty()) hello["token"] = cfg.token;
    return hello.dump();
  }

  std::string get_changes_message() const {
    if (in_snapshot) {
      nlohmann::json m{{"type", "get_snapshot"}, {"after", snapshot_after}};
      if (!snapshot_after.empty()) m["head"] = snapshot_head;
      return m.dump();
    }
    return nlohmann::json{{"type", "get_changes"}, {"since", received}}.dump();
  }

  void load_cursors() {
    nlohmann::json cursors = parse_object(db_request("peer", {{"site", hub_site}}));
    received = cursors.value("received", uint64_t{0});
    sent = cursors.value("sent", uint64_t{0});
    in_snapshot = cursors.contains("snapshot");
    snapshot_head = in_snapshot ? cursors["snapshot"].value("head", uint64_t{0}) : 0;
    snapshot_after = in_snapshot ? cursors["snapshot"].value("after", std::string()) : "";
    if (in_snapshot) spdlog::info("sync '{}': resuming a snapshot from the hub", name);
  }

  // Reads this replica's own writes after `sent` as one page: the message to send, or ""
  // when there is nothing to push (the cursor is moved past foreign entries).
  std::string own_page() {
    const uint64_t commits = local_commits.load();
    if (push_blocked) {
      want_push = false;
      return "";
    }
    std::string page = db_request("changes", {{"since", sent},
                                              {"origin", "self"},
                                              {"pastFloor", push_past_floor},
                                              {"batchSize", cfg.batch_size},
                                              {"maxBytes", hub_max_bytes / 2}});
    nlohmann::json j = parse_object(page);
    const uint64_t cursor = j.value("cursor", sent);
    const bool has_more = j.value("hasMore", false);
    if (j.value("snapshotRequired", false)) {
      // Our own log does not answer from `sent`: its oldest entries were pruned (tombstone
      // horizon), or it is behind what the hub acknowledged (a restored backup). Go on from
      // the oldest position it still answers; what was pruned is gone everywhere.
      // (Our own writes answer from the newest deletion of ours collected: `ownFloor`.)
      const nlohmann::json site = parse_object(db_request("site", nlohmann::json::object()));
      const uint64_t floor = site.value("ownFloor", site.value("floor", uint64_t{0}));
      want_push = false;
      if (floor == sent) {
        spdlog::error("sync '{}': the local change log answers no position from {}; not pushing", name, sent);
        push_blocked = true;
        return "";
      }
      spdlog::warn("sync '{}': the local change log does not answer from {}; pushing from {}", name, sent, floor);
      sent = floor;
      save_cursors();
      want_push = true;
      push_due = Clock::now() + std::chrono::milliseconds(100);
      return "";
    }
    if ((!j.contains("changeSets") || j["changeSets"].empty()) && cursor == sent) {
      want_push = has_more;
      if (!has_more) {
        std::lock_guard lock(mu);
        pushed_commits = std::max(pushed_commits, commits);
        cv.notify_all();
      }
      return "";
    }
    // (A page with no facts of ours whose cursor moved past others' entries goes too: the
    // hub's record of us moves with it, so our next push starts where that record ends.)
    Push p;
    p.id = "apply-" + std::to_string(++request_counter);
    p.cursor = cursor;
    p.has_more = has_more;
    p.commits = commits;
    push = p;
    want_push = false;
    std::string msg = with_request_id(with_type("apply_changes", page), p.id);
    if (msg.size() > hub_max_bytes) {
      // One transaction larger than the hub takes (a page never splits one): it cannot go.
      const std::string e = "a transaction of " + std::to_string(msg.size()) + " bytes is larger than the hub's " +
                            "max_message_bytes (" + std::to_string(hub_max_bytes) + "); pushing stopped";
      spdlog::error("sync '{}': {}", name, e);
      push.reset();
      push_blocked = true;
      std::lock_guard lock(mu);
      st.last_error = e;
      return "";
    }
    return msg;
  }

  template <class Ws>
  net::awaitable<void> push_page(Ws& ws) {
    const std::string msg = own_page();
    if (!msg.empty()) co_await ws.async_write(net::buffer(msg), use_awaitable);
  }

  template <class Ws>
  net::awaitable<void> reader(Ws& ws) {
    beast::flat_buffer buffer;
    for (;;) {
      buffer.clear();
      co_await ws.async_read(buffer, use_awaitable);
      std::string text = beast::buffers_to_string(buffer.data());
      std::string why;
      std::optional<nlohmann::json> m = parse_message(text, &why);
      if (!m) {
        spdlog::warn("sync '{}': the hub sent something that is not a message ({})", name, why);
        continue;
      }
      const std::string type = (*m)["type"].get<std::string>();
      if (type == "changes") {
        on_changes(text, *m);
      } else if (type == "snapshot_chunk") {
        on_snapshot_chunk(text, *m);
      } else if (type == "changes_available") {
        want_pull = true;
      } else if (type == "apply_result") {
        on_apply_result(*m);
      } else if (type == "error") {
        const std::string msg = m->value("code", std::string("ERROR")) + ": " + m->value("message", std::string());
        if (m->value("fatal", false)) throw Fatal("the hub closed the session: " + msg);
        spdlog::warn("sync '{}': the hub reports {}", name, msg);
        {
          std::lock_guard lock(mu);
          st.last_error = msg;
        }
        if (push && m->contains("requestId") && (*m)["requestId"] == push->id) {
          // Retried after a pause that doubles each time (1 s … 60 s): the same page, from
          // the same cursor, until the hub takes it.
          push.reset();
          want_push = true;
          push_due = Clock::now() + std::chrono::milliseconds(1000LL << std::min(push_failures, 6));
          ++push_failures;
        } else if (m->value("code", std::string()) == "SNAPSHOT_ERROR" && in_snapshot && ++snapshot_failures >= 3) {
          // A checkpoint the hub keeps refusing (its data moved on, or it is damaged): start
          // the snapshot over.
          spdlog::warn("sync '{}': the hub refused the snapshot checkpoint 3 times; starting the snapshot again", name);
          snapshot_failures = 0;
          snapshot_after.clear();
          snapshot_head = 0;
          save_cursors();
          pull_inflight = false;
          want_pull = true;
          pull_due = Clock::now() + std::chrono::seconds(1);
        } else if (m->value("code", std::string()) == code::kGetChangesError ||
                   m->value("code", std::string()) == "SNAPSHOT_ERROR") {
          pull_inflight = false;
          want_pull = true;
          pull_due = Clock::now() + std::chrono::seconds(1);
        }
      }
      kick();
    }
  }

  // Applies a page (changes or a snapshot chunk) through the engine. False when it did not
  // apply (an explicit transaction is open, or the apply failed: nothing of it landed) —
  // the pull is then asked again later.
  bool apply_page(const std::string& text, nlohmann::json* result) {
    bool deferred = false;
    Status status;
    std::string out;
    access([&](Database& db) {
      if (db.in_transaction()) {
        deferred = true;  // an explicit transaction is open: try again shortly
        return;
      }
      status = db.sync_apply(text, &out);
      // Another connection over the same replica is applying, or holds a transaction open
      // that a page with schema changes must wait for: nothing landed, try again shortly.
      if (status.code() == StatusCode::kBusy) deferred = true;
    });
    if (deferred) {
      want_pull = true;
      pull_due = Clock::now() + std::chrono::milliseconds(100);
      return false;
    }
    if (!status.ok()) {
      spdlog::error("sync '{}': applying a page from the hub failed: {}", name, status.to_string());
      {
        std::lock_guard lock(mu);
        st.last_error = status.to_string();
      }
      want_pull = true;
      pull_due = Clock::now() + std::chrono::milliseconds(1000LL << std::min(pull_failures, 6));
      ++pull_failures;
      return false;
    }
    *result = parse_object(out);
    healthy = true;
    pull_failures = 0;
    std::lock_guard lock(mu);
    ++st.pages_pulled;
    st.facts_applied += result->value("applied", uint64_t{0});
    st.conflicts += result->value("conflicts", uint64_t{0});
    st.rejected += result->value("rejected", uint64_t{0});
    st.purged += result->value("purged", uint64_t{0});
    return true;
  }

  void on_changes(const std::string& text, const nlohmann::json& m) {
    pull_inflight = false;
    if (in_snapshot) return;  // a late reply from before the snapshot began
    if (m.value("snapshotRequired", false)) {
      // The hub's log does not reach back to our cursor (its tombstones were collected, or
      // it was restored from an older copy): take a snapshot, then go on by delta.
      spdlog::warn("sync '{}': the hub cannot answer from cursor {}; taking a snapshot and pushing this "
                   "replica's writes again",
                   name, received);
      in_snapshot = true;
      snapshot_after.clear();
      snapshot_head = 0;
      // A hub restored from an older copy may have lost what it acknowledged: every write of
      // ours is pushed again (the hub skips what it has) once the snapshot is in — not
      // before, since the snapshot's purge of rows the hub no longer has trusts the hub's
      // frontier as of the snapshot's start (docs/sync-store.md "Snapshot purge"). A push in
      // flight is forgotten, so its ack cannot move the cursor back up.
      push.reset();
      save_cursors();
      want_pull = true;
      return;
    }
    pulled = true;
    nlohmann::json r;
    if (!apply_page(text, &r)) return;
    received = m.value("cursor", received);
    save_cursors();
    const bool more = m.value("hasMore", false);
    if (more) want_pull = true;
    std::lock_guard lock(mu);
    pulled_at_head = !more;
    if (!more) head_gen = std::max(head_gen, inflight_gen);
    cv.notify_all();
  }

  void on_snapshot_chunk(const std::string& text, const nlohmann::json& m) {
    pull_inflight = false;
    if (!in_snapshot) return;
    nlohmann::json r;
    if (!apply_page(text, &r)) return;  // nothing landed: the checkpoint stays, the chunk comes again
    const uint64_t head = m.value("head", uint64_t{0});
    snapshot_failures = 0;
    if (r.value("restartSnapshot", false)) {
      // The hub re-keyed a table since the snapshot began: nothing of the chunk landed; the
      // snapshot starts again (its first chunks carry the new key).
      spdlog::warn("sync '{}': the hub re-keyed a table during the snapshot; taking it again", name);
      snapshot_after.clear();
      snapshot_head = 0;
      save_cursors();
      want_pull = true;
      return;
    }
    if (m.value("done", false)) {
      in_snapshot = false;
      snapshot_after.clear();
      received = head;
      sent = 0;  // every write of ours again (above, on snapshotRequired)
      push.reset();
      want_push = !cfg.read_only;
      pulled = true;
      uint64_t purged = 0;
      {
        std::lock_guard lock(mu);
        purged = st.purged;
      }
      spdlog::info("sync '{}': snapshot complete ({} row(s) the hub no longer has removed here so far); going on by "
                   "delta from {}",
                   name, purged, head);
    } else {
      snapshot_after = m.value("next", std::string());
      snapshot_head = head;
    }
    save_cursors();  // the checkpoint: a reconnect resumes after the last chunk applied
    want_pull = true;
    std::lock_guard lock(mu);
    ++st.snapshot_chunks;
  }

  void on_apply_result(const nlohmann::json& m) {
    if (!push || !m.contains("requestId") || m["requestId"] != push->id) return;  // unknown, late or duplicate
    if (m.value("pushGap", false)) {
      // The hub has our writes only up to `pushedThrough` (it was restored from an older
      // copy since we last pushed): nothing of the page was applied; push again from there.
      const uint64_t have = m.value("pushedThrough", uint64_t{0});
      spdlog::warn("sync '{}': the hub has our writes only up to position {} (we had {} acknowledged; was it "
                   "restored from an older copy?): pushing again from there", name, have, sent);
      sent = std::min(sent, have);
      push_past_floor = true;
      save_cursors();
      push.reset();
      want_push = true;
      push_due = Clock::now();
      std::lock_guard lock(mu);
      ++st.push_gaps;
      return;
    }
    sent = std::max(sent, push->cursor);
    save_cursors();
    const Push done = *push;
    push.reset();
    push_failures = 0;
    if (const uint64_t rejected = m.value("rejected", uint64_t{0})) {
      // The hub could not write some rows (a constraint of its own tables): it holds them
      // aside, visible in its status; they are not relayed.
      spdlog::warn("sync '{}': the hub held {} pushed fact(s) aside as rejected", name, rejected);
      std::lock_guard lock(mu);
      st.rejected_by_hub += rejected;
    }
    want_push = done.has_more || local_commits.load() != done.commits;
    if (!done.has_more) push_past_floor = false;  // caught up with the hub's record again
    push_due = Clock::now();
    std::lock_guard lock(mu);
    ++st.pages_pushed;
    if (!done.has_more) pushed_commits = std::max(pushed_commits, done.commits);
    cv.notify_all();
  }
};

SyncClient::SyncClient(SyncClientConfig config, std::string database_name, DatabaseAccess access)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(database_name), std::move(access))) {}

SyncClient::~SyncClient() { stop(); }

void SyncClient::start() {
  if (impl_->thread.joinable()) return;
  Impl* impl = impl_.get();
  impl->stopping = false;  // a client stopped before starts again
  impl->ioc.restart();
  net::co_spawn(impl->ioc, impl->run(), [impl](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      spdlog::error("sync '{}': stopped: {}", impl->name, x.what());
      impl->set_state("failed", x.what());
    }
  });
  impl->thread = std::thread([impl] { impl->ioc.run(); });
}

void SyncClient::stop() {
  Impl* impl = impl_.get();
  if (!impl->thread.joinable()) return;
  net::post(impl->ioc, [impl] {
    impl->stopping = true;
    impl->kick();
    impl->backoff.cancel();
  });
  // A clean close within a second and a half; then the loop is stopped where it is.
  {
    std::unique_lock lock(impl->mu);
    impl->cv.wait_for(lock, std::chrono::milliseconds(1500),
                      [impl] { return impl->st.state == "stopped" || impl->st.state == "failed"; });
  }
  impl->ioc.stop();
  impl->thread.join();
}

void SyncClient::local_commit() {
  Impl* impl = impl_.get();
  impl->local_commits.fetch_add(1);
  if (impl->cfg.read_only || !impl->thread.joinable()) return;
  net::post(impl->ioc, [impl] {
    if (!impl->want_push) {
      impl->want_push = true;
      impl->push_due = Clock::now() + std::chrono::milliseconds(impl->cfg.push_debounce_ms);
    }
    impl->kick();
  });
}

void SyncClient::committed(const ChangeBatch& batch) {
  // A DDL-only commit (ALTER TABLE … ADD COLUMN with no row written) has no data event but
  // records schema facts of ours: it must be pushed too, or a peer whose last write was a
  // DDL keeps it to itself until it reconnects (sync_chaos.py --ddl: one peer stuck with a
  // column the others never got).
  for (const auto& e : batch.schema)
    if (!e.remote) return local_commit();
  for (const auto& e : batch.data)
    if (!e.remote) return local_commit();
}

SyncClient::State SyncClient::state() const {
  std::lock_guard lock(impl_->mu);
  State s = impl_->st;
  s.caught_up = impl_->pulled_at_head && impl_->pushed_commits >= impl_->local_commits.load();
  return s;
}

std::string SyncClient::state_json() const {
  State s = state();
  return nlohmann::json{{"url", impl_->cfg.url},
                        {"databaseId", impl_->cfg.database_id},
                        {"state", s.state},
                        {"hubSite", s.hub_site},
                        {"received", s.received},
                        {"sent", s.sent},
                        {"pagesPulled", s.pages_pulled},
                        {"pagesPushed", s.pages_pushed},
                        {"factsApplied", s.facts_applied},
                        {"conflicts", s.conflicts},
                        {"rejected", s.rejected},
                        {"rejectedByHub", s.rejected_by_hub},
                        {"snapshotChunks", s.snapshot_chunks},
                        {"purged", s.purged},
                        {"pushGaps", s.push_gaps},
                        {"connects", s.connects},
                        {"failures", s.failures},
                        {"caughtUp", s.caught_up},
                        {"lastError", s.last_error}}
      .dump();
}

bool SyncClient::wait_caught_up(std::chrono::milliseconds timeout) {
  Impl* impl = impl_.get();
  const uint64_t target = impl->local_commits.load();
  // A pull sent after this call must reach the hub's head.
  uint64_t gen;
  {
    std::lock_guard lock(impl->mu);
    gen = ++impl->pull_wanted_gen;
  }
  net::post(impl->ioc, [impl] {
    impl->want_pull = true;
    impl->kick();
  });
  std::unique_lock lock(impl->mu);
  return impl->cv.wait_for(lock, timeout, [&] {
    return impl->st.state == "connected" && impl->head_gen >= gen &&
           (impl->cfg.read_only || impl->pushed_commits >= target);
  });
}

}  // namespace quereus::syncnet
