// modules/sync-store/replica_keys.h — the replica's keyspace and record helpers, shared by
// replica.cc and schema_sync.cc (layout: replica.h, docs/sync-store.md §Layout).
#ifndef QUEREUS_MODULES_SYNC_STORE_REPLICA_KEYS_H_
#define QUEREUS_MODULES_SYNC_STORE_REPLICA_KEYS_H_

#include <cstring>
#include <string>
#include <string_view>

#include "../store/kv.h"
#include "../store/row_codec.h"
#include "hlc.h"
#include "quereus/sdk.hpp"

namespace quereus::sync::keys {

using store::KvBatch;
using store::KvRange;
using store::prefix_end;

inline constexpr char kParts = 0x1E;  // a table's definition parts: <table id 8> <part> -> PartVersion
inline constexpr char kDead = 0x1F;   // a dropped incarnation: <inc 30> -> HLC, seq, schema, name
inline constexpr char kMeta = 0x20;
inline constexpr char kRows = 0x21;
inline constexpr char kLog = 0x22;
inline constexpr char kPeers = 0x23;
inline constexpr char kTables = 0x24;
inline constexpr char kHolds = 0x25;
inline constexpr char kBasis = 0x26;  // basis lifecycle: <schema> 00 <table> -> JSON record
// A peer's schema step that failed here (a tightening the rows here violate): <inc 30> <part>
// -> Hold (rejected, with the error), retried on every later apply.
inline constexpr char kSchemaHolds = 0x27;

inline std::string schema_hold_key(const Hlc& inc, std::string_view part) {
  std::string k(1, kSchemaHolds);
  inc.append_to(k);
  k += part;
  return k;
}

inline std::string meta_key(std::string_view name) {
  std::string k(1, kMeta);
  k += name;
  return k;
}

inline void put_u64(std::string& out, uint64_t v) {
  for (int s = 56; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xFF));
}
inline uint64_t get_u64(std::string_view in) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8 && i < in.size(); ++i) v = (v << 8) | uint8_t(in[i]);
  return v;
}
inline std::string u64(uint64_t v) {
  std::string s;
  put_u64(s, v);
  return s;
}

inline std::string log_key(uint64_t seq) {
  std::string k(1, kLog);
  put_u64(k, seq);
  return k;
}
// A run: the change-log positions first .. first+n-1 of one local commit in one record
// (22 ‖ first ‖ 'R' -> <varint n> <prefixed clock state> <prefixed ref> × n), so a commit of
// many rows adds one log entry, not one per row. It sorts after a single entry at `first`
// and before `first + 1`; the clock state it carries is the capture's (load_metadata takes
// the newest run's, so a local commit writes no meta records).
inline constexpr char kRunMark = 'R';
inline constexpr size_t kRunMax = 1024;  // positions per run record
inline std::string run_key(uint64_t first) {
  std::string k = log_key(first);
  k.push_back(kRunMark);
  return k;
}
// Format 5: a run whose references are prefix-compressed (RunRefs); 'R' runs stay readable.
inline constexpr char kCompactRunMark = 'C';
inline bool is_run_key(std::string_view k) { return k.size() == 10 && (k[9] == kRunMark || k[9] == kCompactRunMark); }
inline bool is_compact_run(std::string_view k) { return k.size() == 10 && k[9] == kCompactRunMark; }

inline std::string table_key(uint64_t id) {
  std::string k(1, kTables);
  put_u64(k, id);
  return k;
}
inline std::string peer_key(const SiteId& s) {
  std::string k(1, kPeers);
  k.append(reinterpret_cast<const char*>(s.bytes.data()), s.bytes.size());
  return k;
}
// A row key (04 ‖ id ‖ pk key) → its versions' key (21 ‖ id ‖ pk key), and the part both
// share, which the change log stores.
inline std::string versions_key(std::string_view row_key) {
  std::string k(1, kRows);
  k += row_key.substr(1);
  return k;
}

// Capture's hot path writes through a raw pointer (store::put_varint's encoding).
inline char* raw_varint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}
inline char* raw_be(char* p, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) *p++ = static_cast<char>((v >> (8 * i)) & 0xFF);
  return p;
}
inline char* raw_prefixed(char* p, std::string_view b) {
  p = raw_varint(p, b.size());
  if (!b.empty()) std::memcpy(p, b.data(), b.size());
  return p + b.size();
}

[[noreturn]] inline void corrupt(const std::string& what) {
  throw sdk::Error(QRS_CORRUPT, "sync-store: corrupt replication metadata (" + what + ")");
}

struct Reader {
  std::string_view in;
  uint8_t byte() {
    if (in.empty()) corrupt("truncated record");
    uint8_t b = uint8_t(in[0]);
    in.remove_prefix(1);
    return b;
  }
  uint64_t varint() {
    uint64_t v;
    if (!store::get_varint(in, &v)) corrupt("bad varint");
    return v;
  }
  std::string_view bytes(size_t n) {
    if (in.size() < n) corrupt("truncated record");
    std::string_view out = in.substr(0, n);
    in.remove_prefix(n);
    return out;
  }
  std::string_view prefixed() { return bytes(varint()); }
  Hlc hlc() {
    auto h = Hlc::from_bytes(bytes(kHlcBytes));
    return *h;
  }
};

// A run record's header (run_key): how many positions it holds and the clock state it
// carries; `r` is left at the first row reference.
struct RunHeader {
  uint64_t n;
  std::string_view clock;
};
inline RunHeader read_run_header(Reader& r) {
  const uint64_t n = r.varint();
  return {n, r.prefixed()};
}

// A run record's references, after its header (read_run_header). An 'R' run stores each
// reference whole (prefixed); a 'C' run (format 5) stores each as the number of leading
// bytes it shares with the one before, then the rest (prefixed): the first is taken against
// eight zero bytes, so a small table id's leading zeros cost nothing, and a commit's rows of
// one table cost their keys' differing tails. A view returned lives until the next call.
class RunRefs {
 public:
  RunRefs(Reader r, bool compact) : r_(r), compact_(compact), prev_(8, '\0') {}
  std::string_view next() {
    if (!compact_) return r_.prefixed();
    const uint64_t shared = r_.varint();
    if (shared > prev_.size()) corrupt("bad run reference");
    const std::string_view rest = r_.prefixed();
    prev_.resize(shared);
    prev_.append(rest);
    return prev_;
  }

 private:
  Reader r_;
  bool compact_;
  std::string prev_;
};

inline void put_prefixed(std::string& out, std::string_view b) {
  store::put_varint(out, b.size());
  out.append(b);
}

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return out;
}

}  // namespace quereus::sync::keys

#endif  // QUEREUS_MODULES_SYNC_STORE_REPLICA_KEYS_H_
