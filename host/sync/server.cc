#include "sync/server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <set>

#include "sync/protocol.h"

namespace quereus::syncnet {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;
using net::use_awaitable;

namespace {

struct Outgoing {
  Outgoing(std::string t, bool c = false, uint16_t k = 0, std::string r = {})
      : text(std::move(t)), close(c), code(k), reason(std::move(r)) {}
  std::string text;
  bool close = false;
  uint16_t code = 0;
  std::string reason;
};

// One WebSocket connection: the hub session, the outbox its writer drains, and a way to
// close it from elsewhere (shutdown, a slow reader).
struct Connection {
  HubSession session;
  std::deque<Outgoing> outbox;
  std::unique_ptr<net::steady_timer> wake;
  std::function<void()> abort;  // closes the socket under the reader and writer
  bool closing = false;
  bool writer_done = false;
};

}  // namespace

struct Server::Impl {
  Hub& hub;
  net::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  std::unique_ptr<net::ssl::context> tls;
  std::set<std::shared_ptr<Connection>> connections;
  uint64_t next_id = 0;
  bool stopping = false;
  static constexpr size_t kMaxConnections = 4096;
  size_t open_sockets = 0;  // accepted and not yet closed (HTTP and WebSocket)
  struct SocketCount {
    size_t& n;
    explicit SocketCount(size_t& c) : n(c) { ++n; }
    ~SocketCount() { --n; }
  };

  explicit Impl(Hub& h) : hub(h) {}

  net::awaitable<void> listen() {
    for (;;) {
      beast::error_code ec;
      tcp::socket socket = co_await acceptor.async_accept(net::redirect_error(use_awaitable, ec));
      if (ec) {
        if (stopping || ec == net::error::operation_aborted) co_return;
        spdlog::warn("sync hub: accept failed: {}", ec.message());
        net::steady_timer pause(ioc, std::chrono::milliseconds(100));  // EMFILE and the like: do not spin
        co_await pause.async_wait(net::redirect_error(use_awaitable, ec));
        continue;
      }
      if (open_sockets >= kMaxConnections) {
        spdlog::warn("sync hub: {} connections open: refusing another", open_sockets);
        socket.close(ec);
        continue;
      }
      socket.set_option(tcp::no_delay(true), ec);
      if (tls) {
        net::co_spawn(ioc, serve_tls(std::move(socket)), net::detached);
      } else {
        net::co_spawn(ioc, serve(beast::tcp_stream(std::move(socket))), net::detached);
      }
    }
  }

  net::awaitable<void> serve_tls(tcp::socket socket) {
    beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *tls);
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(30));
    beast::error_code ec;
    co_await stream.async_handshake(net::ssl::stream_base::server, net::redirect_error(use_awaitable, ec));
    if (ec) {
      spdlog::info("sync hub: TLS handshake failed: {}", ec.message());
      co_return;
    }
    co_await serve(std::move(stream));
  }

  // HTTP requests until the connection closes or upgrades to a WebSocket.
  template <class Stream>
  net::awaitable<void> serve(Stream stream) {
    SocketCount counted(open_sockets);
    try {
      co_await serve_requests(std::move(stream));
    } catch (const std::exception& e) {
      spdlog::info("sync hub: connection dropped: {}", e.what());
    }
  }

  template <class Stream>
  net::awaitable<void> serve_requests(Stream stream) {
    beast::flat_buffer buffer;
    const ServerConfig& cfg = hub.config();
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(static_cast<uint64_t>(cfg.max_message_bytes));
      parser.header_limit(16 * 1024);
      beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(30));
      beast::error_code ec;
      co_await http::async_read(stream, buffer, parser, net::redirect_error(use_awaitable, ec));
      if (ec == http::error::end_of_stream || ec == net::error::eof) co_return;
      if (ec) {
        if (ec == http::error::body_limit) {
          http::response<http::string_body> res{http::status::payload_too_large, 11};
          res.set(http::field::content_type, "application/json");
          res.body() = R"({"ok":false,"error":{"code":"MESSAGE_TOO_LARGE","message":"the body is larger than max_message_bytes"}})";
          res.prepare_payload();
          co_await http::async_write(stream, res, net::redirect_error(use_awaitable, ec));
        }
        co_return;
      }
      http::request<http::string_body> req = parser.release();
      if (websocket::is_upgrade(req)) {
        std::string_view target(req.target().data(), req.target().size());
        if (target.substr(0, target.find('?')) == cfg.base_path + "/ws") {
          beast::get_lowest_layer(stream).expires_never();
          co_await websocket_session(websocket::stream<Stream>(std::move(stream)), std::move(req));
          co_return;
        }
      }
      auto field = [&](const auto& f) {  // an http::field or a header name
        auto it = req.find(f);
        return it == req.end() ? std::string_view() : std::string_view(it->value().data(), it->value().size());
      };
      HttpReply reply;
      try {
        reply = hub.http(std::string_view(req.method_string().data(), req.method_string().size()),
                         std::string_view(req.target().data(), req.target().size()),
                         field(http::field::authorization), field("X-Site-Id"), field("X-Quereus-Sync-Protocol"),
                         req.body());
      } catch (const std::exception& e) {
        spdlog::error("sync hub: HTTP {}: {}", std::string(req.target().data(), std::min<size_t>(req.target().size(), 200)),
                      e.what());
        reply = HttpReply{500, R"({"ok":false,"error":{"code":"HUB_ERROR","message":"internal error"}})"};
      }
      http::response<http::string_body> res{static_cast<http::status>(reply.status), req.version()};
      res.set(http::field::server, "quereus-sync");
      res.set(http::field::content_type, reply.content_type);
      res.keep_alive(req.keep_alive());
      res.body() = std::move(reply.body);
      res.prepare_payload();
      co_await http::async_write(stream, res, net::redirect_error(use_awaitable, ec));
      if (ec || !res.keep_alive()) co_return;
    }
  }

  template <class WsStream>
  net::awaitable<void> websocket_session(WsStream ws, http::request<http::string_body> req) {
    const ServerConfig& cfg = hub.config();
    ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws.read_message_max(static_cast<uint64_t>(cfg.max_message_bytes));
    ws.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "quereus-sync"); }));
    beast::error_code ec;
    co_await ws.async_accept(req, net::redirect_error(use_awaitable, ec));
    if (ec) co_return;
    auto conn = std::make_shared<Connection>();
    conn->session.id = ++next_id;
    conn->wake = std::make_unique<net::steady_timer>(ioc);
    conn->wake->expires_at(net::steady_timer::time_point::max());
    // `ws` lives in this frame, which ends only after the writer has finished (below), and
    // `abort` is cleared before it ends.
    std::weak_ptr<Connection> weak = conn;
    conn->abort = [&ws, weak] {
      auto c = weak.lock();
      if (c) c->closing = true;
      beast::error_code ignored;
      beast::get_lowest_layer(ws).socket().shutdown(tcp::socket::shutdown_both, ignored);
      beast::get_lowest_layer(ws).socket().close(ignored);
      if (c) c->wake->cancel();
    };
    const size_t max_queued = static_cast<size_t>(cfg.max_queued_messages);
    conn->session.send = [weak, max_queued](std::string text) {
      auto c = weak.lock();
      if (!c || c->closing) return;
      if (c->outbox.size() >= max_queued) {
        // A reader this far behind is dropped; it reconnects and pulls from its cursor.
        spdlog::warn("sync hub: connection {} is not reading ({} messages queued): closing it", c->session.id,
                     c->outbox.size());
        c->outbox.clear();
        c->outbox.push_back({error_message("TOO_SLOW", "the connection fell too far behind", true), true,
                             kCloseTooSlow, "too slow"});
        c->wake->cancel();
        return;
      }
      c->outbox.push_back({std::move(text)});
      c->wake->cancel();
    };
    connections.insert(conn);
    spdlog::info("sync hub: connection {} open", conn->session.id);
    net::co_spawn(ioc, writer(ws, conn), [conn](std::exception_ptr) {
      conn->writer_done = true;
      conn->wake->cancel();
    });
    // The handshake must come within 10 s.
    net::steady_timer deadline(ioc, std::chrono::seconds(10));
    deadline.async_wait([weak](beast::error_code e) {
      auto c = weak.lock();
      if (!e && c && !c->session.authenticated && c->abort) {
        spdlog::info("sync hub: connection {} sent no handshake within 10 s: closing it", c->session.id);
        c->abort();
      }
    });
    try {
      beast::flat_buffer buffer;
      while (!conn->closing) {
        // Backpressure: while this connection has not read what it was sent, read nothing
        // more from it; a peer that stays behind for 30 s is closed.
        for (int waited = 0; conn->outbox.size() >= max_queued && !conn->closing; ++waited) {
          if (waited == 3000) {
            spdlog::warn("sync hub: connection {} does not read its replies: closing it", conn->session.id);
            conn->abort();
            break;
          }
          net::steady_timer t(ioc, std::chrono::milliseconds(10));
          co_await t.async_wait(net::redirect_error(use_awaitable, ec));
        }
        if (conn->closing) break;
        buffer.clear();
        co_await ws.async_read(buffer, net::redirect_error(use_awaitable, ec));
        if (ec) break;  // closed, timed out, or a frame over max_message_bytes (1009)
        if (!ws.got_text()) {
          conn->outbox.push_back({error_message(code::kMessageError, "binary frames are not part of the protocol", true),
                                  true, kCloseProtocolError, "binary frame"});
          conn->wake->cancel();
          break;
        }
        HubReply reply;
        try {
          reply = hub.handle(conn->session, beast::buffers_to_string(buffer.data()));
        } catch (const std::exception& e) {
          spdlog::error("sync hub: connection {}: {}", conn->session.id, e.what());
          reply.messages.push_back(error_message("HUB_ERROR", e.what(), true));
          reply.close = true;
          reply.close_code = 1011;
        }
        for (std::string& m : reply.messages) conn->outbox.push_back({std::move(m)});
        if (reply.close) conn->outbox.push_back({"", true, reply.close_code, reply.close_reason});
        conn->wake->cancel();
        if (reply.close) break;
      }
    } catch (const std::exception& e) {
      spdlog::error("sync hub: connection {}: {}", conn->session.id, e.what());
    }
    deadline.cancel();
    // The hub forgets the session; the writer flushes (and sends the close) before the
    // connection goes, within 5 s.
    conn->session.send = nullptr;
    hub.closed(conn->session);
    for (int waited = 0; !conn->writer_done; ++waited) {
      if (conn->outbox.empty() && !conn->closing) conn->outbox.push_back({"", true, websocket::close_code::normal, ""});
      if (waited == 1000 && conn->abort) conn->abort();
      conn->wake->cancel();
      net::steady_timer t(ioc, std::chrono::milliseconds(5));
      co_await t.async_wait(net::redirect_error(use_awaitable, ec));
    }
    conn->abort = nullptr;
    connections.erase(conn);
    spdlog::info("sync hub: connection {} closed", conn->session.id);
  }

  template <class WsStream>
  net::awaitable<void> writer(WsStream& ws, std::shared_ptr<Connection> conn) {
    beast::error_code ec;
    for (;;) {
      if (conn->outbox.empty()) {
        if (conn->closing) co_return;
        conn->wake->expires_at(net::steady_timer::time_point::max());
        co_await conn->wake->async_wait(net::redirect_error(use_awaitable, ec));
        continue;
      }
      Outgoing out = std::move(conn->outbox.front());
      conn->outbox.pop_front();
      if (out.close) {
        conn->closing = true;
        if (!out.text.empty()) co_await ws.async_write(net::buffer(out.text), net::redirect_error(use_awaitable, ec));
        websocket::close_reason reason(static_cast<websocket::close_code>(out.code), out.reason);
        co_await ws.async_close(reason, net::redirect_error(use_awaitable, ec));
        if (conn->abort) conn->abort();
        co_return;
      }
      ws.text(true);
      co_await ws.async_write(net::buffer(out.text), net::redirect_error(use_awaitable, ec));
      if (ec) {
        if (conn->abort) conn->abort();
        co_return;
      }
    }
  }

  net::awaitable<void> sweep() {
    net::steady_timer t(ioc);
    // Idle databases close after 5 minutes; each open one's maintenance runs every
    // prune_interval_ms (the timer wakes at least that often, at most every 50 ms).
    const int64_t prune = hub.config().prune_interval_ms;
    const auto period = std::chrono::milliseconds(prune > 0 ? std::clamp<int64_t>(prune, 50, 60'000) : 60'000);
    auto idle_due = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      t.expires_after(period);
      beast::error_code ec;
      co_await t.async_wait(net::redirect_error(use_awaitable, ec));
      if (stopping) co_return;
      hub.maintain();
      if (std::chrono::steady_clock::now() >= idle_due) {
        hub.close_idle(std::chrono::minutes(5));
        idle_due = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      }
    }
  }

  void shutdown() {
    if (stopping) return;
    stopping = true;
    beast::error_code ec;
    acceptor.close(ec);
    for (const auto& c : connections) {
      c->outbox.push_back({"", true, websocket::close_code::going_away, "server shutting down"});
      c->wake->cancel();
    }
    // Give the writers a moment to send their close frames, then stop.
    auto t = std::make_shared<net::steady_timer>(ioc, std::chrono::milliseconds(200));
    t->async_wait([this, t](beast::error_code) { ioc.stop(); });
  }
};

Server::Server(Hub& hub) : impl_(std::make_unique<Impl>(hub)) {
  const ServerConfig& cfg = hub.config();
  const size_t colon = cfg.listen.rfind(':');
  std::string host = cfg.listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const auto port = static_cast<uint16_t>(std::stoul(cfg.listen.substr(colon + 1)));
  if (!cfg.tls_cert_file.empty()) {
    impl_->tls = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
    impl_->tls->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                            net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 | net::ssl::context::no_tlsv1_1);
    beast::error_code ec;
    impl_->tls->use_certificate_chain_file(cfg.tls_cert_file, ec);
    if (ec) throw Error(StatusCode::kConfig, cfg.origin + ": server.tls_cert_file '" + cfg.tls_cert_file + "': " + ec.message());
    impl_->tls->use_private_key_file(cfg.tls_key_file, net::ssl::context::pem, ec);
    if (ec) throw Error(StatusCode::kConfig, cfg.origin + ": server.tls_key_file '" + cfg.tls_key_file + "': " + ec.message());
  }
  beast::error_code ec;
  tcp::resolver resolver(impl_->ioc);
  auto results = resolver.resolve(host, std::to_string(port), ec);
  if (ec || results.empty())
    throw Error(StatusCode::kCantOpen, "sync hub: cannot resolve listen address '" + cfg.listen + "': " + ec.message());
  const tcp::endpoint ep = results.begin()->endpoint();
  impl_->acceptor.open(ep.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(ep, ec);
  if (!ec) impl_->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) throw Error(StatusCode::kCantOpen, "sync hub: cannot listen on " + cfg.listen + ": " + ec.message());
}

Server::~Server() = default;

uint16_t Server::port() const { return impl_->acceptor.local_endpoint().port(); }

void Server::run(bool handle_signals) {
  std::unique_ptr<net::signal_set> signals;
  if (handle_signals) {
    signals = std::make_unique<net::signal_set>(impl_->ioc, SIGINT, SIGTERM);
    signals->async_wait([this](beast::error_code ec, int sig) {
      if (ec) return;
      spdlog::info("sync hub: signal {}: shutting down", sig);
      impl_->shutdown();
    });
  }
  net::co_spawn(impl_->ioc, impl_->listen(), net::detached);
  net::co_spawn(impl_->ioc, impl_->sweep(), net::detached);
  impl_->ioc.run();
}

void Server::stop() {
  net::post(impl_->ioc, [this] { impl_->shutdown(); });
}

}  // namespace quereus::syncnet
