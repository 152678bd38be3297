// libFuzzer target for the store's codecs (modules/store/row_codec, key_codec).
//
// Input byte 0 picks the check:
//   even: the rest is a stored row (form 01, or 02 with a sidecar). decode_row either throws
//         QRS_CORRUPT or yields cells whose encoding (wrapped with the input's sidecar) is
//         exactly the input (the decoder accepts only what the encoder writes), and
//         decode_row_owned and row_cell_count agree.
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

#include "key_codec.h"
#include "row_codec.h"

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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if ((data[0] & 1) == 0)
    check_row(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  else
    check_key(data + 1, size - 1);
  return 0;
}
