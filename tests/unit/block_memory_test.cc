// quereus/block_memory.hpp: blocks and the huge-page memory resource.
#include "quereus/block_memory.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory_resource>
#include <vector>

namespace quereus::sdk {
namespace {

TEST(BlockMemory, SmallAndLargeBlocksAreUsableAndAligned) {
  for (size_t n : {size_t{1}, size_t{4096}, kHugeBlock - 1, kHugeBlock, kHugeBlock + 1, 3 * kHugeBlock}) {
    std::shared_ptr<char[]> b = allocate_block(n);
    ASSERT_NE(b.get(), nullptr);
    std::memset(b.get(), 0x5a, n);
    EXPECT_EQ(b[n - 1], 0x5a);
    if (n >= kHugeBlock) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b.get()) % kHugeBlock, 0u) << n;
    }
  }
}

TEST(BlockMemory, ResourceUnderAMonotonicPoolServesAndReleases) {
  HugePageResource upstream;
  std::pmr::monotonic_buffer_resource pool(&upstream);
  std::pmr::vector<uint64_t> v(&pool);
  for (uint64_t i = 0; i < 1'000'000; ++i) v.push_back(i);  // grows past kHugeBlock
  uint64_t sum = 0;
  for (uint64_t x : v) sum += x;
  EXPECT_EQ(sum, uint64_t{999'999} * 1'000'000 / 2);
  v = std::pmr::vector<uint64_t>(&pool);
  pool.release();  // every block back to the upstream (sized deallocation)
  HugePageResource other;
  EXPECT_TRUE(upstream.is_equal(other));  // stateless: any instance frees what another took
}

}  // namespace
}  // namespace quereus::sdk
