// modules/store/pending.cc — huge-page blocks for the pending writes (pending.h).
#include "pending.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

namespace quereus::store {

std::shared_ptr<char[]> allocate_block(size_t bytes) {
  if (bytes < kHugeBlock) return std::shared_ptr<char[]>(new char[bytes]);
  const size_t size = (bytes + kHugeBlock - 1) / kHugeBlock * kHugeBlock;
  void* p = std::aligned_alloc(kHugeBlock, size);
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  ::madvise(p, size, MADV_HUGEPAGE);  // advice only: without transparent huge pages, ordinary pages
#endif
  return std::shared_ptr<char[]>(static_cast<char*>(p), [](char* q) { std::free(q); });
}

void* BlockResource::do_allocate(size_t bytes, size_t alignment) {
  if (alignment > alignof(std::max_align_t)) throw std::bad_alloc();  // B-tree nodes never ask for more
  blocks_.push_back(allocate_block(bytes));
  return blocks_.back().get();
}

void BlockResource::do_deallocate(void* p, size_t, size_t) {
  for (size_t i = 0; i < blocks_.size(); ++i) {
    if (blocks_[i].get() == p) {
      blocks_[i] = std::move(blocks_.back());
      blocks_.pop_back();
      return;
    }
  }
}

}  // namespace quereus::store
