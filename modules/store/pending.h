// modules/store/pending.h — a transaction's pending writes: the overlay that reads merge
// over the committed store, and what the commit batch carries.
//
// Layout: every key and row byte lives in an append-only arena of large chunks; an ordered
// B-tree maps key views to slots (a row view, or a deletion). A write costs one arena
// append and one B-tree insert — no allocation per row — which is what makes a
// million-row transaction cheap. Overwriting a pending row appends the new bytes and
// leaves the old ones in the arena until the transaction ends (commit or rollback frees
// everything at once); savepoint undo entries keep pointing at them.
//
// Rows handed out (RowRef) share ownership of their arena chunk, so a cursor's batch stays
// valid after the transaction clears its overlay.
#ifndef QUEREUS_MODULES_STORE_PENDING_H_
#define QUEREUS_MODULES_STORE_PENDING_H_

#include <absl/container/btree_map.h>

#include "quereus/block_memory.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <memory_resource>
#include <string>
#include <string_view>
#include <vector>

namespace quereus::store {

// Row bytes and what keeps them alive. Falsy: no row (absent or deleted).
struct RowRef {
  std::string_view bytes;
  std::shared_ptr<const void> owner;

  explicit operator bool() const { return bytes.data() != nullptr; }
  // Takes ownership of `s` (a row read from the committed store).
  static RowRef own(std::string s) {
    auto p = std::make_shared<const std::string>(std::move(s));
    std::string_view v(*p);
    if (v.data() == nullptr) v = std::string_view("", 0);  // an empty row is still a row
    return RowRef{v, std::move(p)};
  }
};

// One pending entry: a row view into the arena, or a deletion (row.data() == nullptr).
struct PendingSlot {
  std::string_view row;
  uint32_t chunk = 0;      // the arena chunk holding `row`
  uint32_t committed = 0;  // 1 + the index of what the committed store held (PendingWrites::committed)
  bool live() const { return row.data() != nullptr; }
};

using sdk::allocate_block;
using sdk::kHugeBlock;

// Append-only bytes in large chunks. A copy's owner (chunk_owner) shares its chunk, so the
// bytes outlive the arena's own clear() for whoever still holds them.
class ByteArena {
 public:
  std::string_view copy(std::string_view bytes) {
    if (chunks_.empty() || used_ + bytes.size() > cap_) grow(bytes.size());
    char* at = chunks_.back().get() + used_;
    if (!bytes.empty()) std::memcpy(at, bytes.data(), bytes.size());
    used_ += bytes.size();
    return std::string_view(at, bytes.size());  // never a null view
  }
  // The chunk the last copy went to.
  uint32_t last_chunk() const { return static_cast<uint32_t>(chunks_.size() - 1); }
  std::shared_ptr<const void> chunk_owner(uint32_t chunk, const void* at) const {
    return std::shared_ptr<const void>(chunks_[chunk], at);
  }
  void clear() {
    chunks_.clear();
    used_ = cap_ = 0;
  }

 private:
  void grow(size_t need) {
    size_t cap = std::max<size_t>(need, chunks_.empty() ? 4096 : std::min<size_t>(cap_ * 2, kHugeBlock));
    chunks_.push_back(allocate_block(cap));
    cap_ = cap;
    used_ = 0;
  }
  std::vector<std::shared_ptr<char[]>> chunks_;
  size_t used_ = 0, cap_ = 0;
};

class PendingWrites {
 public:
  // The B-tree's nodes come from a monotonic pool over huge-page blocks, released at once
  // by clear() (a node freed earlier — by an erase — is reclaimed then).
  using Map = absl::btree_map<std::string_view, PendingSlot, std::less<std::string_view>,
                              std::pmr::polymorphic_allocator<std::pair<const std::string_view, PendingSlot>>>;

  PendingWrites() : pool_(&blocks_), map_(&pool_) {}
  PendingWrites(const PendingWrites&) = delete;
  PendingWrites& operator=(const PendingWrites&) = delete;

  const Map& map() const { return map_; }
  bool empty() const { return map_.empty(); }
  size_t size() const { return map_.size(); }
  // Bytes of keys and rows written so far (for the commit batch's reservation).
  size_t bytes() const { return bytes_; }

  const PendingSlot* find(std::string_view key) const {
    if (map_.empty() || key > map_.rbegin()->first) return nullptr;  // above every pending key
    auto it = map_.find(key);
    return it == map_.end() ? nullptr : &it->second;
  }
  // The row of a live slot, sharing its chunk; a falsy RowRef for a deletion.
  RowRef row_of(const PendingSlot& s) const {
    if (!s.live()) return {};
    return RowRef{s.row, arena_.chunk_owner(s.chunk, s.row.data())};
  }

  // What the committed store held under a key this transaction writes, as read just before
  // its first write of the key, at the store's generation `generation` (KvStore::generation):
  // a commit observer takes it instead of reading the row again while that still holds.
  struct Committed {
    std::string_view row;  // meaningful when `found`
    bool found = false;
    uint64_t generation = 0;
  };
  const Committed* committed(const PendingSlot& s) const {
    return s.committed == 0 ? nullptr : &committed_[s.committed - 1];
  }

  // Sets `key` to `row` (nullptr data: a deletion). Returns the slot that was there, if
  // any (`had` set), so a savepoint can restore it; the key view stays valid until clear().
  //
  // `committed`: what the committed store holds under `key`, when the caller read it at the
  // store's current generation; kept with the key while the transaction writes it again.
  std::string_view put(std::string_view key, std::string_view row, bool deletion, PendingSlot* prev, bool* had,
                       const Committed* committed = nullptr) {
    PendingSlot slot;
    if (!deletion) slot = store_row(row);
    auto note = [&] {
      // Bounded: past kCommittedBytes of rows the observer reads them at commit instead.
      if (!committed || committed_.size() >= UINT32_MAX || committed_bytes_ > kCommittedBytes) return;
      committed_bytes_ += committed->found ? committed->row.size() : 0;
      committed_.push_back(Committed{committed->found ? arena_.copy(committed->row) : std::string_view(),
                                     committed->found, committed->generation});
      slot.committed = static_cast<uint32_t>(committed_.size());
    };
    if (map_.empty() || key > map_.rbegin()->first) {  // appending in key order: no search
      *had = false;
      note();
      std::string_view k = intern(key);
      map_.emplace_hint(map_.end(), k, slot);
      return k;
    }
    auto it = map_.lower_bound(key);
    if (it != map_.end() && it->first == key) {
      *had = true;
      *prev = it->second;
      slot.committed = prev->committed;  // the committed row did not change
      it->second = slot;
      return it->first;
    }
    *had = false;
    note();
    std::string_view k = intern(key);
    map_.emplace_hint(it, k, slot);
    return k;
  }
  // Restores `key` to `slot` (or removes it when `had` is false): the savepoint undo.
  void restore(std::string_view key, const PendingSlot& slot, bool had) {
    if (had) {
      map_.insert_or_assign(key, slot);
    } else {
      map_.erase(key);
    }
  }
  // A copy of `row` in the arena, as a slot (for ghosts and undo entries built elsewhere).
  PendingSlot store_row(std::string_view row) {
    PendingSlot s;
    s.row = intern(row);
    s.chunk = arena_.last_chunk();
    return s;
  }
  std::string_view intern(std::string_view bytes) {
    bytes_ += bytes.size();
    return arena_.copy(bytes);
  }

  void clear() {
    committed_.clear();
    committed_bytes_ = 0;
    map_.clear();
    pool_.release();
    arena_.clear();
    bytes_ = 0;
  }

 private:
  sdk::HugePageResource blocks_;
  std::pmr::monotonic_buffer_resource pool_;
  Map map_;
  ByteArena arena_;
  size_t bytes_ = 0;
  std::vector<Committed> committed_;  // only for keys read before their first write
  static constexpr size_t kCommittedBytes = 16 << 20;
  size_t committed_bytes_ = 0;
};

}  // namespace quereus::store

#endif  // QUEREUS_MODULES_STORE_PENDING_H_
