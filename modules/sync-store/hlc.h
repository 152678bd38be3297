// modules/sync-store/hlc.h — site ids and hybrid logical clocks (docs/sync-store.md §Clock).
//
// A site id is 16 random bytes stamped as a UUIDv4; its text form is unpadded base64url
// (22 characters). An HLC is (wall ms u64, counter u16, site[16], op_seq u32), serialized
// as 30 big-endian bytes whose memcmp order is the HLC order: wall, then counter, then
// site, then op_seq (op_seq only separates the facts of one transaction).
#ifndef QUEREUS_MODULES_SYNC_STORE_HLC_H_
#define QUEREUS_MODULES_SYNC_STORE_HLC_H_

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <string_view>

namespace quereus::sync {

struct SiteId {
  std::array<uint8_t, 16> bytes{};

  // 16 random bytes from the system's CSPRNG, stamped as UUIDv4.
  static SiteId random();
  // Unpadded base64url (22 characters); parse accepts exactly that (or standard base64
  // without padding) and nothing else.
  std::string text() const;
  static std::optional<SiteId> parse(std::string_view text);
  bool is_zero() const {
    for (uint8_t b : bytes)
      if (b) return false;
    return true;
  }
  auto operator<=>(const SiteId&) const = default;
};

inline constexpr size_t kHlcBytes = 30;
inline constexpr uint64_t kMaxDriftMs = 60'000;

struct Hlc {
  uint64_t wall = 0;
  uint16_t counter = 0;
  SiteId site;
  uint32_t op_seq = 0;

  // 30 bytes, big-endian: wall 8, counter 2, site 16, op_seq 4.
  std::string bytes() const;
  void append_to(std::string& out) const;
  // Exactly 30 bytes (any other length, the legacy 26 included, is nullopt).
  static std::optional<Hlc> from_bytes(std::string_view b);
  // The wire form: standard base64 of the 30 bytes (base64url accepted on decode).
  std::string text() const;
  static std::optional<Hlc> parse(std::string_view text);
  // The facts of one transaction share (wall, counter, site).
  bool same_transaction(const Hlc& o) const { return wall == o.wall && counter == o.counter && site == o.site; }
  // "{wall}:{counter}:{b64url(site)}", the transaction id of a base.
  std::string transaction_id() const;
  auto operator<=>(const Hlc& o) const {
    if (auto c = wall <=> o.wall; c != 0) return c;
    if (auto c = counter <=> o.counter; c != 0) return c;
    if (auto c = site <=> o.site; c != 0) return c;
    return op_seq <=> o.op_seq;
  }
  bool operator==(const Hlc&) const = default;
};

// The clock of one replica. Not thread-safe: the replica's writer lock guards it.
class HlcClock {
 public:
  explicit HlcClock(SiteId site, uint64_t wall = 0, uint16_t counter = 0) : site_(site), wall_(wall), counter_(counter) {}

  // A local event at wall time `now`: strictly after every HLC this clock produced or
  // received, even when `now` goes backwards or the counter overflows. op_seq 0.
  Hlc tick(uint64_t now);
  // Merges a remote HLC (its op_seq is ignored); afterwards the clock is past `r`.
  // Throws sdk::Error(QRS_RANGE) when `r` is more than kMaxDriftMs ahead of `now` (the
  // check changes nothing).
  void receive(const Hlc& r, uint64_t now);
  // Throws as receive would, changing nothing.
  static void check_drift(const Hlc& r, uint64_t now);

  // Moves to (wall, counter) when that is later than the clock; never back.
  void advance_to(uint64_t wall, uint16_t counter) {
    if (std::pair(wall, counter) > std::pair(wall_, counter_)) wall_ = wall, counter_ = counter;
  }

  uint64_t wall() const { return wall_; }
  uint16_t counter() const { return counter_; }
  const SiteId& site() const { return site_; }
  // The persisted state: wall 8 + counter 2, big-endian.
  std::string state() const;
  static bool parse_state(std::string_view b, uint64_t* wall, uint16_t* counter);

 private:
  SiteId site_;
  uint64_t wall_;
  uint16_t counter_;
};

// Milliseconds since the Unix epoch (system clock).
uint64_t now_ms();

// Base64 (standard alphabet, padded) and base64url (unpadded); decode accepts either
// alphabet, with or without padding, and returns nullopt on anything else.
std::string base64(std::string_view bytes);
std::string base64url(std::string_view bytes);
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace quereus::sync

#endif  // QUEREUS_MODULES_SYNC_STORE_HLC_H_
