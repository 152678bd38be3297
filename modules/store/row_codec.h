// modules/store/row_codec.h — the stored form of a row (the value under its key).
//
//   01                      format version of the row encoding
//   <varint cell count>
//   per cell: <type tag (qrs_value_type)> then
//     INTEGER  zigzag varint
//     REAL     8 bytes, little-endian IEEE bits
//     BOOLEAN  1 byte (0 / 1)
//     TEXT / BLOB / JSON  <varint length> <bytes>
//     NULL     nothing
//
// A second form carries an observer's opaque bytes beside the cells (sync-store keeps a
// row's versions there, so a row and its versions are one entry):
//   02 <varint n> <n bytes: the sidecar> <the row in the 01 form above>
// Every reader decodes both forms; the store's own rewrites of a row (ALTER's re-encode,
// a re-key's move) keep its sidecar.
//
// Decoding yields C views (qrs_value) pointing into the encoded bytes, so a cursor hands
// a row to the host without building Values: it keeps the bytes alive and shares them.
#ifndef QUEREUS_MODULES_STORE_ROW_CODEC_H_
#define QUEREUS_MODULES_STORE_ROW_CODEC_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quereus/sdk.hpp"

namespace quereus::store {

// Appends the encoding of `row` to `out`.
void encode_row(std::string& out, std::span<const qrs_value> row);
std::string encode_row(std::span<const qrs_value> row);
std::string encode_row(const sdk::Row& row);

// Replaces `out` by views of the cells of `bytes` (valid while `bytes` lives). Throws
// QRS_CORRUPT naming the table `where` when the bytes are not exactly a row encode_row
// writes (any malformed input: never a crash, never a read past `bytes`). The cell count
// is the row's own; a caller that expects a schema's column count must compare.
void decode_row(std::string_view bytes, std::vector<qrs_value>& out, std::string_view where = "a table");
// The sidecar of a stored row (empty for the 01 form) and the row's 01 form (the bytes
// themselves for a 01 row). Throw QRS_CORRUPT on a malformed 02 header.
std::string_view row_sidecar(std::string_view bytes, std::string_view where = "a table");
std::string_view row_body(std::string_view bytes, std::string_view where = "a table");
// The cell count of a stored row (either form), without decoding its cells.
size_t row_cell_count(std::string_view bytes, std::string_view where = "a table");
// `row` (either form) with `sidecar` (replacing any it had; empty: the 01 form), into `out`.
void wrap_row(std::string& out, std::string_view sidecar, std::string_view row);
// A fresh owned row (copies the bytes).
sdk::RowPtr decode_row_owned(std::string_view bytes);

// Varints for the module's metadata and the row format. get_varint accepts only the
// canonical form put_varint writes (false otherwise, `in` unchanged).
void put_varint(std::string& out, uint64_t v);
bool get_varint(std::string_view& in, uint64_t* v);

}  // namespace quereus::store

#endif  // QUEREUS_MODULES_STORE_ROW_CODEC_H_
