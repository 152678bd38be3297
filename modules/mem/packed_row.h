// modules/mem/packed_row.h — a stored row packed into one allocation.
//
// A memory table keeps each row as one reference-counted block: the cell count, the
// cells as the ABI's C views (qrs_value) and the text / blob / JSON bytes those views
// point at, in that order. Cursors hand the cells to the host as they are (no copy, no
// conversion), keeping the block alive until the host's next call; comparisons read
// the cells in place. One allocation per row instead of a vector, a Value per cell and
// a heap buffer per string: about half the memory and a third of the allocations.
#ifndef QUEREUS_MODULES_MEM_PACKED_ROW_H_
#define QUEREUS_MODULES_MEM_PACKED_ROW_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

#include "quereus/sdk.hpp"

namespace quereus::mem {

// Immutable once packed; shared between the table, pending transaction state and the
// batches of open cursors.
using Packed = std::shared_ptr<const uint64_t[]>;

// The cells of a packed row. REQUIRES: p non-null.
inline std::span<const qrs_value> cells_of(const Packed& p) {
  auto n = static_cast<uint32_t>(p[0]);
  return {reinterpret_cast<const qrs_value*>(p.get() + 1), n};
}

inline bool has_bytes(const qrs_value& c) {
  return c.type == QRS_TYPE_TEXT || c.type == QRS_TYPE_BLOB || c.type == QRS_TYPE_JSON;
}

// Packs C views (the host's row during a write) into a new block, copying the bytes.
inline Packed pack_row(std::span<const qrs_value> row) {
  static_assert(sizeof(qrs_value) % sizeof(uint64_t) == 0 && alignof(qrs_value) <= alignof(uint64_t));
  size_t bytes = 0;
  for (const qrs_value& c : row)
    if (has_bytes(c) && c.u.str.data) bytes += c.u.str.len;
  size_t cell_words = row.size() * (sizeof(qrs_value) / sizeof(uint64_t));
  size_t words = 1 + cell_words + (bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t);
  std::shared_ptr<uint64_t[]> block = std::make_shared_for_overwrite<uint64_t[]>(words);
  block[0] = row.size();
  auto* cells = reinterpret_cast<qrs_value*>(block.get() + 1);
  char* text = reinterpret_cast<char*>(block.get() + 1 + cell_words);
  for (size_t i = 0; i < row.size(); ++i) {
    qrs_value c = row[i];
    c.reserved_ = 0;
    if (has_bytes(c)) {
      size_t len = c.u.str.data ? c.u.str.len : 0;
      if (len) std::memcpy(text, c.u.str.data, len);
      c.u.str.data = text;
      c.u.str.len = len;
      text += len;
    }
    cells[i] = c;
  }
  return block;
}

// A fresh sdk::Row with copies of the cells (for the rare results that need one: the
// row a conflict found, the row REPLACE displaced, the row a delete removed).
inline sdk::RowPtr unpack_row(const Packed& p) {
  if (!p) return nullptr;
  sdk::Row row;
  row.reserve(cells_of(p).size());
  for (const qrs_value& c : cells_of(p)) row.push_back(sdk::Value::from_c(c));
  return sdk::make_row(std::move(row));
}

}  // namespace quereus::mem

#endif  // QUEREUS_MODULES_MEM_PACKED_ROW_H_
