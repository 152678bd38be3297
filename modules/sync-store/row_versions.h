// modules/sync-store/row_versions.h — a row's replication versions and their record forms
// (docs/sync-store.md, "Record forms"). Self-contained: the codec fuzz target builds it
// with hlc.cc and the store's row codec alone.
#pragma once

#include <cstdint>
#include <memory>
#include <memory_resource>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../store/store_db.h"
#include "hlc.h"

namespace quereus::sync {

// Where a record that names a column list finds it (RowVersions::decode).
class ListSource {
 public:
  using List = std::shared_ptr<const std::vector<std::string>>;
  virtual ~ListSource() = default;
  // List `k` of `table`. Throws QRS_CORRUPT when there is none.
  virtual List get(uint64_t table, uint32_t k) = 0;
  // An entry's value (<varint n> <prefixed name> × n) read; throws QRS_CORRUPT.
  static List parse(std::string_view value);
};

// One column's current version. Its value is the row's: data and versions are written in
// one batch, always, so the stored row holds each column's winning value.
struct ColumnVersion {
  std::string name;   // lower-case column name
  Hlc hlc;
  uint64_t seq = 0;   // the arrival sequence that wrote it
  std::optional<Hlc> seen_delete;  // the newest deletion its writer had seen
  // Does this version win over `o` (last-writer-wins, with delete-wins ranking versions
  // that had seen a newer deletion first)?
  bool outranks(const ColumnVersion& o, bool allow_resurrection) const;
};

// Everything the replica knows of one row: its newest deletion (with the row's address,
// which a deleted row no longer holds) and the current version of each column it has.
// Stored compactly: the distinct (wall, counter, site) bases once, each column as a base
// index and its op_seq.
struct RowVersions {
  std::string address;  // tombstoned rows: the raw primary-key cells, encoded as a row
  // Tombstoned rows: the row as it was when deleted here, as (lower-case name, value) pairs
  // encoded as one row (name, value, name, value, …) — so a re-keying ALTER can move the
  // tombstone to the key the row would have now. Empty when the row was not stored here.
  std::string image;
  std::optional<Hlc> tombstone;
  uint64_t tombstone_seq = 0;
  uint64_t tombstone_created = 0;  // local receive time (ms), for the GC horizon
  std::vector<ColumnVersion> columns;

  // A column list of the row's table (ColumnLists) that a record may name its columns by.
  struct ListRef {
    uint32_t k = 0;  // 0: none
    std::span<const std::string> names;
  };
  // `local`: this replica's site (left implied wherever it appears). With `list`, columns
  // (and a tombstone's image) whose names it holds are written as their positions in it.
  std::string encode(const SiteId& local, const ListRef* list = nullptr) const;
  // `lists` and `table`: where a record naming a column list finds it (without them such a
  // record is refused). Throws QRS_CORRUPT.
  static RowVersions decode(std::string_view bytes, const SiteId& local, ListSource* lists = nullptr,
                            uint64_t table = 0);
  // Does the record hold a tombstone? (Read from its first bytes only.)
  static bool has_tombstone(std::string_view bytes);
  // A fresh row's versions in the compact form: every column of `names` at `base` with
  // consecutive op_seqs from base.op_seq, written at arrival `seq`, none having seen a
  // deletion — naming list `k` when not 0 (record version 4: `names` are its first
  // names), else the names themselves (record version 3).
  template <class String>  // std::string or std::pmr::string
  static void append_fresh(String& out, const Hlc& base, uint64_t seq, std::span<const std::string> names,
                           const SiteId& local, uint32_t k = 0);
  // `image` from a stored row's cells and its table's columns, and back.
  static std::string image_of(std::span<const qrs_value> cells, const std::vector<sdk::ColumnDef>& columns);
  // The same, with the columns' lowered names given.
  static std::string image_of(std::span<const qrs_value> cells, std::span<const std::string> names);
  store::CommitObserver::NamedRow named_image() const;
  static std::string image_of(const store::CommitObserver::NamedRow& row);
  ColumnVersion* column(std::string_view lower_name);
  // The arrival sequences this record refers to (its columns' and its tombstone's).
  std::vector<uint64_t> seqs() const;  // sorted, distinct
  // Is a column version still part of the row under `tombstone`?
  bool valid(const ColumnVersion& c, bool allow_resurrection) const;
};

}  // namespace quereus::sync
