// quereus/block_memory.hpp — memory for a module's large, fast-growing buffers.
//
// Filling fresh memory costs a page fault per 4 KB page, and on virtual machines a fault
// is expensive (~14 us measured on our CI machines: 8 MB of fresh pages, 28 ms). A block
// of 2 MB or more advised for transparent huge pages takes one fault per 2 MB instead.
// Where THP is off the advice is ignored and the pages are ordinary.
//
//   allocate_block(n)   a shared byte block (huge-page backed from kHugeBlock up)
//   HugePageResource    a stateless std::pmr::memory_resource on the same policy, to put
//                       under a pool (monotonic_buffer_resource, *_pool_resource) whose
//                       chunks grow to kHugeBlock and beyond
//
// Header-only, Linux-aware (madvise), portable elsewhere (plain heap).
#ifndef QUEREUS_BLOCK_MEMORY_HPP_
#define QUEREUS_BLOCK_MEMORY_HPP_

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <memory_resource>
#include <new>

namespace quereus::sdk {

inline constexpr std::size_t kHugeBlock = std::size_t{2} << 20;

namespace detail {

inline std::size_t huge_size(std::size_t bytes) { return (bytes + kHugeBlock - 1) / kHugeBlock * kHugeBlock; }

inline void* allocate_huge(std::size_t bytes) {
  const std::size_t size = huge_size(bytes);
  void* p = std::aligned_alloc(kHugeBlock, size);
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  ::madvise(p, size, MADV_HUGEPAGE);  // advice only
#endif
  return p;
}

}  // namespace detail

// A byte block of at least `bytes`, freed when the last owner lets go.
inline std::shared_ptr<char[]> allocate_block(std::size_t bytes) {
  if (bytes < kHugeBlock) return std::shared_ptr<char[]>(new char[bytes]);
  return std::shared_ptr<char[]>(static_cast<char*>(detail::allocate_huge(bytes)), [](char* p) { std::free(p); });
}

// Requests of kHugeBlock or more: huge-page blocks; smaller ones: operator new.
class HugePageResource : public std::pmr::memory_resource {
 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    if (bytes >= kHugeBlock && alignment <= kHugeBlock) return detail::allocate_huge(bytes);
    return ::operator new(bytes, std::align_val_t(alignment));
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    if (bytes >= kHugeBlock && alignment <= kHugeBlock) {
      std::free(p);
      return;
    }
    // The unsized form: clang before 19 declares the sized one only with -fsized-deallocation,
    // and a module built with it must still compile this header.
    ::operator delete(p, std::align_val_t(alignment));
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return dynamic_cast<const HugePageResource*>(&other) != nullptr;
  }
};

}  // namespace quereus::sdk

#endif  // QUEREUS_BLOCK_MEMORY_HPP_
