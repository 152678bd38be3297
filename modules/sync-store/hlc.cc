// modules/sync-store/hlc.cc — site ids, hybrid logical clocks and base64.
#include "hlc.h"

#include <sys/random.h>

#include <cerrno>
#include <chrono>

#include "quereus/sdk.hpp"

namespace quereus::sync {
namespace {

constexpr char kStd[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kUrl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string encode64(std::string_view in, const char* alphabet, bool pad) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(alphabet[(v >> s) & 63]);
  }
  if (size_t rest = in.size() - i; rest > 0) {
    uint32_t v = uint8_t(in[i]) << 16;
    if (rest == 2) v |= uint8_t(in[i + 1]) << 8;
    out.push_back(alphabet[(v >> 18) & 63]);
    out.push_back(alphabet[(v >> 12) & 63]);
    if (rest == 2) out.push_back(alphabet[(v >> 6) & 63]);
    if (pad) out.append(rest == 1 ? "==" : "=");
  }
  return out;
}

int digit64(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

void put_be(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
uint64_t get_be(std::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | uint8_t(in[at + i]);
  return v;
}

}  // namespace

std::string base64(std::string_view bytes) { return encode64(bytes, kStd, true); }
std::string base64url(std::string_view bytes) { return encode64(bytes, kUrl, false); }

std::optional<std::string> base64_decode(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int d = digit64(c);
    if (d < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(d);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  if (bits > 0 && (acc & ((1u << bits) - 1)) != 0) return std::nullopt;  // non-canonical trailing bits
  return out;
}

SiteId SiteId::random() {
  SiteId s;
  size_t got = 0;
  while (got < s.bytes.size()) {
    ssize_t n = ::getrandom(s.bytes.data() + got, s.bytes.size() - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw sdk::Error(QRS_IOERR, "sync-store: cannot read random bytes for a site id (getrandom failed)");
    }
    got += static_cast<size_t>(n);
  }
  s.bytes[6] = static_cast<uint8_t>((s.bytes[6] & 0x0F) | 0x40);
  s.bytes[8] = static_cast<uint8_t>((s.bytes[8] & 0x3F) | 0x80);
  return s;
}

std::string SiteId::text() const {
  return base64url(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

std::optional<SiteId> SiteId::parse(std::string_view text) {
  if (text.size() != 22) return std::nullopt;
  auto raw = base64_decode(text);
  if (!raw || raw->size() != 16) return std::nullopt;
  SiteId s;
  for (size_t i = 0; i < 16; ++i) s.bytes[i] = uint8_t((*raw)[i]);
  return s;
}

void Hlc::append_to(std::string& out) const {
  put_be(out, wall, 8);
  put_be(out, counter, 2);
  out.append(reinterpret_cast<const char*>(site.bytes.data()), site.bytes.size());
  put_be(out, op_seq, 4);
}

std::string Hlc::bytes() const {
  std::string out;
  out.reserve(kHlcBytes);
  append_to(out);
  return out;
}

std::optional<Hlc> Hlc::from_bytes(std::string_view b) {
  if (b.size() != kHlcBytes) return std::nullopt;
  Hlc h;
  h.wall = get_be(b, 0, 8);
  h.counter = static_cast<uint16_t>(get_be(b, 8, 2));
  for (size_t i = 0; i < 16; ++i) h.site.bytes[i] = uint8_t(b[10 + i]);
  h.op_seq = static_cast<uint32_t>(get_be(b, 26, 4));
  return h;
}

std::string Hlc::text() const { return base64(bytes()); }

std::optional<Hlc> Hlc::parse(std::string_view text) {
  auto raw = base64_decode(text);
  if (!raw) return std::nullopt;
  return from_bytes(*raw);
}

std::string Hlc::transaction_id() const {
  return std::to_string(wall) + ":" + std::to_string(counter) + ":" + site.text();
}

Hlc HlcClock::tick(uint64_t now) {
  if (now > wall_) {
    wall_ = now;
    counter_ = 0;
  } else if (counter_ == 0xFFFF) {
    ++wall_;
    counter_ = 0;
  } else {
    ++counter_;
  }
  return Hlc{wall_, counter_, site_, 0};
}

void HlcClock::check_drift(const Hlc& r, uint64_t now) {
  if (r.wall > now && r.wall - now > kMaxDriftMs)
    throw sdk::Error(QRS_RANGE, "sync-store: a remote clock reading is " + std::to_string(r.wall - now) +
                                    " ms ahead of this replica's clock (the limit is " + std::to_string(kMaxDriftMs) +
                                    " ms): refused, nothing applied (HLC " + r.text() + " from site " + r.site.text() +
                                    ")");
}

void HlcClock::receive(const Hlc& r, uint64_t now) {
  check_drift(r, now);
  const uint64_t m = std::max({wall_, r.wall, now});
  uint32_t c;
  if (m == wall_ && m == r.wall) {
    c = uint32_t(std::max(counter_, r.counter)) + 1;
  } else if (m == wall_) {
    c = uint32_t(counter_) + 1;
  } else if (m == r.wall) {
    c = uint32_t(r.counter) + 1;
  } else {
    c = 0;
  }
  wall_ = m;
  if (c > 0xFFFF) {
    ++wall_;
    c = 0;
  }
  counter_ = static_cast<uint16_t>(c);
}

std::string HlcClock::state() const {
  std::string out;
  put_be(out, wall_, 8);
  put_be(out, counter_, 2);
  return out;
}

bool HlcClock::parse_state(std::string_view b, uint64_t* wall, uint16_t* counter) {
  if (b.size() != 10) return false;
  *wall = get_be(b, 0, 8);
  *counter = static_cast<uint16_t>(get_be(b, 8, 2));
  return true;
}

uint64_t now_ms() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace quereus::sync
