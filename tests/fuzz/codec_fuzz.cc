// libFuzzer target for the store's codecs (modules/store/row_codec, key_codec) and
// sync-store's row-version records (modules/sync-store/row_versions).
//
// Input byte 0 picks the check:
//   0 mod 4: the rest is a stored row (form 01, or 02 with a sidecar). decode_row either throws
//         QRS_CORRUPT or yields cells whose encoding (wrapped with the input's sidecar) is
//         exactly the input (the decoder accepts only what the encoder writes), and
//         decode_row_owned and row_cell_count agree.
//   2 mod 8: the rest is a row-version record (forms 2 to 5), read against three column
//         lists of table 7. RowVersions::decode either throws QRS_CORRUPT or yields
//         versions that, encoded again (with and without the list), read back the same;
//         has_tombstone agrees with what was read.
//   6 mod 8: the rest is a sync page as a peer sends it (modules/sync-store/json_codec:
//         changeSets, snapshot, origin, frontier). sets_from_json either throws QRS_FORMAT
//         (or RANGE) — never another error or exception — or yields change sets whose
//         JSON, read again, writes the same JSON (the decoder takes what the encoder writes,
//         and loses nothing it keeps). And the streaming reader agrees with the document
//         reader it replaced (document_page_reader.cc): the same refusal (code and message),
//         or the same sets, snapshot, origin and frontier — with every part asked for, and
//         with those that bits 3, 4, 5 of byte 0 leave out (snapshot, origin, frontier) not
//         asked for. With bit 6 set the rest is read as one change (change_from_json, as a
//         held change is) against the document reader the same way. The values read are
//         written again by append_value_json (the plan's writer), which must write the JSON
//         value value_json does.
//   odd:  byte 1 picks a normalizer, a direction and a type; the rest is two values a, b.
//         Encoding never crashes, no component starts with 00 or FF, NULL is 05, and for
//         numbers and BINARY text and blobs the byte order of the components is the
//         order of the values (reversed under DESC).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "document_page_reader.h"
#include "json_codec.h"
#include "key_codec.h"
#include "row_codec.h"
#include "row_versions.h"

namespace {

using quereus::store::Normalizer;

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "codec_fuzz: %s\n", what);
  __builtin_trap();
}

void check_row(std::string_view bytes) {
  std::vector<qrs_value> cells;
  try {
    quereus::store::decode_row(bytes, cells, "fuzz");
  } catch (const quereus::sdk::Error& e) {
    if (e.code() != QRS_CORRUPT) finding("decode_row threw something other than CORRUPT");
    return;
  }
  // The 02 form: the sidecar, then the row exactly as encode_row writes it.
  std::string expected;
  quereus::store::wrap_row(expected, quereus::store::row_sidecar(bytes), quereus::store::encode_row(cells));
  if (expected != bytes) finding("decode_row accepted bytes encode_row (with wrap_row) does not write");
  if (quereus::store::row_cell_count(bytes) != cells.size()) finding("row_cell_count disagrees with decode_row");
  auto owned = quereus::store::decode_row_owned(bytes);
  if (owned->size() != cells.size()) finding("decode_row_owned disagrees with decode_row");
}

int sign(int c) { return (c > 0) - (c < 0); }

// -1, 0, 1 for a <, =, > b as the key order sees numbers (NaN lowest, -0 == 0,
// integers and reals by value).
int compare_numbers(const qrs_value& a, const qrs_value& b) {
  auto is_nan = [](const qrs_value& v) { return v.type == QRS_TYPE_REAL && std::isnan(v.u.real); };
  if (is_nan(a) || is_nan(b)) return is_nan(a) == is_nan(b) ? 0 : is_nan(a) ? -1 : 1;
  if (a.type == QRS_TYPE_INTEGER && b.type == QRS_TYPE_INTEGER) return sign((a.u.integer > b.u.integer) - (a.u.integer < b.u.integer));
  // Exact integer / real comparison through long double (64-bit mantissa on x86-64).
  auto as_ld = [](const qrs_value& v) {
    return v.type == QRS_TYPE_INTEGER ? static_cast<long double>(v.u.integer) : static_cast<long double>(v.u.real);
  };
  long double x = as_ld(a), y = as_ld(b);
  return (x > y) - (x < y);
}

void check_key(const uint8_t* data, size_t size) {
  if (size < 1) return;
  const uint8_t ctl = data[0];
  const Normalizer normalizers[] = {Normalizer::kBinary, Normalizer::kNocase, Normalizer::kRtrim, Normalizer::kJson,
                                    Normalizer::kTimespan};
  const Normalizer n = normalizers[(ctl & 7) % 5];
  const bool desc = ctl & 8;
  const int kind = (ctl >> 4) % 6;  // 0 text, 1 json, 2 blob, 3 integers, 4 reals, 5 integer vs real
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t half = rest.size() / 2;
  std::string_view pa = rest.substr(0, half), pb = rest.substr(half);

  auto number = [&](std::string_view p, bool real) {
    qrs_value v{};
    uint64_t bits = 0;
    std::memcpy(&bits, p.data(), std::min<size_t>(8, p.size()));
    if (real) {
      v.type = QRS_TYPE_REAL;
      std::memcpy(&v.u.real, &bits, 8);
    } else {
      v.type = QRS_TYPE_INTEGER;
      v.u.integer = static_cast<int64_t>(bits);
    }
    return v;
  };
  qrs_value a{}, b{};
  switch (kind) {
    case 0: case 1: case 2:
      a.type = b.type = kind == 0 ? QRS_TYPE_TEXT : kind == 1 ? QRS_TYPE_JSON : QRS_TYPE_BLOB;
      a.u.str = qrs_string{pa.data(), pa.size()};
      b.u.str = qrs_string{pb.data(), pb.size()};
      break;
    case 3: a = number(pa, false); b = number(pb, false); break;
    case 4: a = number(pa, true); b = number(pb, true); break;
    default: a = number(pa, false); b = number(pb, true); break;
  }
  std::string ka, kb;
  try {
    quereus::store::encode_component(ka, a, n, desc);
    quereus::store::encode_component(kb, b, n, desc);
  } catch (const quereus::sdk::Error& e) {
    if (e.code() != QRS_RANGE) finding("encode_component threw something other than RANGE");
    return;
  }
  for (const std::string* k : {&ka, &kb})
    if (k->empty() || k->front() == '\0' || k->front() == '\xff') finding("a component starts with 00 or FF");
  std::string knull;
  quereus::store::encode_component(knull, qrs_value{}, n, desc);
  if (knull != "\x05") finding("NULL is not 05");
  if (knull >= ka || knull >= kb) finding("NULL does not sort first");

  int expected;
  if (kind >= 3) {
    expected = compare_numbers(a, b);
  } else if (kind == 2 || (kind == 0 && n == Normalizer::kBinary)) {
    expected = sign(pa.compare(pb));
  } else {
    return;  // collation orders are checked against the host by the store's unit tests
  }
  if (desc) expected = -expected;
  if (sign(ka.compare(kb)) != expected) finding("the byte order of the components is not the value order");
}

}  // namespace

// The column lists a fuzzed record may name: 1..3 of table 7.
class FuzzLists : public quereus::sync::ListSource {
 public:
  List get(uint64_t table, uint32_t k) override {
    static const List lists[] = {
        std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"id"}),
        std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"id", "a", "b"}),
        std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"id", "name", "a", "b", "é"})};
    if (table != 7 || k == 0 || k > 3) throw quereus::sdk::Error(QRS_CORRUPT, "no such list");
    return lists[k - 1];
  }
};

bool same_versions(const quereus::sync::RowVersions& x, const quereus::sync::RowVersions& y) {
  if (x.columns.size() != y.columns.size() || x.tombstone != y.tombstone || x.tombstone_seq != y.tombstone_seq ||
      x.tombstone_created != y.tombstone_created || x.address != y.address || x.image != y.image)
    return false;
  for (size_t i = 0; i < x.columns.size(); ++i) {
    const auto &a = x.columns[i], &b = y.columns[i];
    if (a.name != b.name || !(a.hlc == b.hlc) || a.seq != b.seq || a.seen_delete != b.seen_delete) return false;
  }
  return true;
}

void check_versions(std::string_view bytes) {
  using quereus::sync::RowVersions;
  quereus::sync::SiteId local;
  for (size_t i = 0; i < local.bytes.size(); ++i) local.bytes[i] = static_cast<uint8_t>(0xA0 + i);
  FuzzLists lists;
  RowVersions m;
  try {
    m = RowVersions::decode(bytes, local, &lists, 7);
  } catch (const quereus::sdk::Error& e) {
    if (e.code() != QRS_CORRUPT) finding("RowVersions::decode threw something other than CORRUPT");
    return;
  }
  if (RowVersions::has_tombstone(bytes) != (m.tombstone.has_value() && bytes[0] != 3 && bytes[0] != 4))
    finding("has_tombstone disagrees with decode");
  // Every list, and none: each encoding reads back as the same versions.
  const std::vector<std::string> names[] = {{"id"}, {"id", "a", "b"}, {"id", "name", "a", "b", "é"}};
  for (uint32_t k = 0; k <= 3; ++k) {
    const RowVersions::ListRef list{k, k ? std::span<const std::string>(names[k - 1]) : std::span<const std::string>()};
    std::string again;
    try {
      again = m.encode(local, &list);
    } catch (const quereus::sdk::Error& e) {
      // An image the record holds that is not a row of (name, value) pairs cannot be
      // re-laid in a list's order; anything else is a finding.
      if (e.code() != QRS_CORRUPT) finding("RowVersions::encode threw something other than CORRUPT");
      continue;
    }
    RowVersions back;
    try {
      back = RowVersions::decode(again, local, &lists, 7);
    } catch (const quereus::sdk::Error&) {
      finding("RowVersions::decode refused what encode wrote");
    }
    if (!same_versions(back, m)) finding("a re-encoded record reads back differently");
  }
  (void)m.seqs();
  try {
    (void)m.named_image();
  } catch (const quereus::sdk::Error& e) {
    if (e.code() != QRS_CORRUPT) finding("named_image threw something other than CORRUPT");
  }
}

void check_page(std::string_view text) {
  using namespace quereus::sync;
  auto refused = [](const quereus::sdk::Error& e) {
    if (e.code() != QRS_FORMAT && e.code() != QRS_RANGE) finding("sets_from_json threw something other than FORMAT");
  };
  ChangeBatch batch;
  std::optional<SnapshotChunk> snapshot;
  std::optional<PushOrigin> origin;
  try {
    batch.sets = sets_from_json(text, &snapshot, &origin, &batch.frontier);
  } catch (const quereus::sdk::Error& e) {
    refused(e);
    return;
  } catch (...) {
    finding("sets_from_json threw an exception that is not a quereus::sdk::Error");
  }
  batch.origin = origin;
  // The plan's value writer (append_value_json, no document) writes what the document
  // writer does, as JSON values (a real's digits may differ, not the number they read as).
  for (const ChangeSet& s : batch.sets)
    for (const Change& c : s.changes) {
      std::vector<const quereus::sdk::Value*> values{&c.value};
      for (const auto& v : c.pk) values.push_back(&v);
      for (const quereus::sdk::Value* v : values) {
        std::string text;
        append_value_json(text, v->to_c());
        if (nlohmann::json::parse(text) != value_json_object(*v)) finding("append_value_json disagrees with value_json");
      }
    }
  std::string once, twice;
  try {
    once = batch_to_json(batch);
  } catch (...) {
    finding("batch_to_json threw on change sets sets_from_json accepted");
  }
  ChangeBatch again;
  std::optional<PushOrigin> origin2;
  try {
    again.sets = sets_from_json(once, nullptr, &origin2, &again.frontier);
  } catch (...) {
    finding("sets_from_json refused what batch_to_json wrote");
  }
  again.origin = origin2;
  try {
    twice = batch_to_json(again);
  } catch (...) {
    finding("batch_to_json threw on its own output read back");
  }
  if (once != twice) finding("a page read back writes different JSON");
}

// A read's outcome, as text: the refusal, or everything read written out.
std::string snapshot_text(const quereus::sync::SnapshotChunk& c) {
  std::string s = c.source.text() + "|" + quereus::sync::base64(c.after) + "|" + quereus::sync::base64(c.next) + "|" +
                  (c.done ? "done" : "") + "|" + c.key_epoch + "|" + (c.holds ? "holds" : "") + "|";
  for (const auto& h : c.frontier) s += h.text() + ",";
  return s;
}

template <class Read>
std::string outcome(Read read) {
  try {
    return read();
  } catch (const quereus::sdk::Error& e) {
    return "refused " + std::to_string(static_cast<int>(e.code())) + ": " + e.message();
  } catch (...) {
    finding("a page reader threw an exception that is not a quereus::sdk::Error");
  }
}

void check_readers_agree(std::string_view text, uint8_t ctl) {
  using namespace quereus::sync;
  if (ctl & 0x40) {
    auto stream = outcome([&] { return change_to_json(change_from_json(text)); });
    auto document = outcome([&] { return change_to_json(document_change_from_json(text)); });
    if (stream != document) finding("change_from_json disagrees with the document reader");
    return;
  }
  for (const uint8_t leave_out : {uint8_t{0}, static_cast<uint8_t>((ctl >> 3) & 7)}) {
    auto read = [&](auto reader) {
      return outcome([&] {
        ChangeBatch batch;
        std::optional<SnapshotChunk> snapshot;
        std::optional<PushOrigin> origin;
        batch.sets = reader(text, leave_out & 1 ? nullptr : &snapshot, leave_out & 2 ? nullptr : &origin,
                            leave_out & 4 ? nullptr : &batch.frontier);
        batch.origin = origin;
        return batch_to_json(batch) + (snapshot ? " snapshot " + snapshot_text(*snapshot) : std::string());
      });
    };
    const std::string stream = read([](auto... a) { return sets_from_json(a...); });
    const std::string document = read([](auto... a) { return document_sets_from_json(a...); });
    if (stream != document) finding("sets_from_json disagrees with the document reader");
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 3) == 0)
    check_row(rest);
  else if ((data[0] & 7) == 2)
    check_versions(rest);
  else if ((data[0] & 7) == 6) {
    check_readers_agree(rest, data[0]);
    if (!(data[0] & 0x40)) check_page(rest);
  }
  else
    check_key(data + 1, size - 1);
  return 0;
}
