// modules/store/kv_staged.h — a KvStore that holds its writes back until commit.
//
// The store's schema-change scope (SDK 1.4 schema_begin .. schema_commit) runs every DDL
// write of one statement — registry entries, row rewrites, index builds, the catalog —
// through a StagedKv over the real store: writes land in an in-memory overlay, reads merge
// the overlay over the store underneath, and commit() hands the whole overlay to the store
// as ONE atomic, synced batch. Nothing reaches the store before commit(), so a crash
// anywhere inside the statement leaves the store exactly as it was before it.
//
// The overlay is an ordered map of key -> value (or deletion). Iterators merge a snapshot
// iterator of the store with the overlay as it is while they walk (entries are never
// erased from the overlay, so map iterators stay valid; a write made after an iterator
// passed a key is not seen by it).
#ifndef QUEREUS_MODULES_STORE_KV_STAGED_H_
#define QUEREUS_MODULES_STORE_KV_STAGED_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kv.h"

namespace quereus::store {

class StagedKv : public KvStore {
 public:
  // `base` must outlive this object.
  explicit StagedKv(KvStore& base) : base_(base) {}

  const std::string& path() const override { return base_.path(); }
  std::optional<std::string> get(std::string_view key) override;
  std::unique_ptr<KvIterator> iterate(const KvRange& range, bool reverse) override;
  // Stages the writes (`sync` is decided at commit).
  void write(const KvWrites& batch, bool sync) override;
  uint64_t approximate_bytes(const KvRange& range) override { return base_.approximate_bytes(range); }
  // One counter with the store underneath: a staged write changes what reads return here.
  uint64_t generation() const override { return base_.generation(); }
  void changed() override { base_.changed(); }

  bool empty() const { return overlay_.empty(); }
  size_t size() const { return overlay_.size(); }
  // Writes every staged write to the store in one synced batch. On failure nothing
  // landed (the store's batch is atomic) and the error propagates.
  void commit();

  using Overlay = std::map<std::string, std::optional<std::string>, std::less<>>;

 private:
  KvStore& base_;
  Overlay overlay_;
};

}  // namespace quereus::store

#endif  // QUEREUS_MODULES_STORE_KV_STAGED_H_
