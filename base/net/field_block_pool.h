#pragma once

#include <array>
#include <cstddef>
#include <new>

#include <sanitizer/asan_interface.h>

namespace fencegate::adapters {

namespace field_pool_detail {

struct Block {
  Block* next;
};

struct FreeList {
  Block* head = nullptr;
  std::size_t count = 0;
};

inline constexpr std::size_t kGranule = 32;
inline constexpr std::size_t kLargest = 512;
inline constexpr std::size_t kBlocksPerClass = 64;

// One thread's free lists, one per size class; frees what it holds when its thread ends.
struct Lists {
  std::array<FreeList, kLargest / kGranule> by_class;
  Lists() = default;
  Lists(const Lists&) = delete;
  Lists& operator=(const Lists&) = delete;
  ~Lists() {
    for (std::size_t size_class = 0; size_class < by_class.size(); ++size_class) {
      FreeList& list = by_class[size_class];
      while (list.head != nullptr) {
        ASAN_UNPOISON_MEMORY_REGION(list.head, (size_class + 1) * kGranule);
        Block* next = list.head->next;
        ::operator delete(list.head);
        list.head = next;
      }
      list.count = 0;
    }
  }
};

inline thread_local Lists local_lists;

inline std::size_t ClassOf(std::size_t bytes) { return bytes == 0 ? 0 : (bytes - 1) / kGranule; }

}  // namespace field_pool_detail

// Blocks for HTTP header storage, recycled per thread: FlatFields' entry arrays and text
// blocks, and the read buffers of backend exchanges. A proxied request creates and destroys a
// few of them on the same network thread. glibc's malloc/free pair costs ~150 instructions
// there; popping and pushing a free list costs ~10.
//
// Sizes round up to kGranule (32 bytes); blocks above kLargest (512) go to operator new
// directly. Each thread keeps at most kBlocksPerClass (64) free blocks per size, so a thread
// that frees what another allocated (a header handed across threads) holds bounded memory;
// the rest is deleted.
struct FieldBlockPool {
  static void* Allocate(std::size_t bytes) {
    using namespace field_pool_detail;
    if (bytes > kLargest) return ::operator new(bytes);
    const std::size_t size_class = ClassOf(bytes);
    FreeList& list = local_lists.by_class[size_class];
    if (list.head == nullptr) return ::operator new((size_class + 1) * kGranule);
    Block* block = list.head;
    ASAN_UNPOISON_MEMORY_REGION(block, (size_class + 1) * kGranule);
    list.head = block->next;
    --list.count;
    return block;
  }

  static void Deallocate(void* pointer, std::size_t bytes) noexcept {
    using namespace field_pool_detail;
    if (bytes > kLargest) {
      ::operator delete(pointer);
      return;
    }
    const std::size_t size_class = ClassOf(bytes);
    FreeList& list = local_lists.by_class[size_class];
    if (list.count == kBlocksPerClass) {
      ::operator delete(pointer);
      return;
    }
    list.head = ::new (pointer) Block{list.head};
    ++list.count;
    // Under AddressSanitizer a block waiting in the list reads as freed (all but its link), so
    // a header used after its release is still reported.
    ASAN_POISON_MEMORY_REGION(static_cast<char*>(pointer) + sizeof(Block),
                              (size_class + 1) * kGranule - sizeof(Block));
  }
};

// A stateless allocator over FieldBlockPool: every instance is interchangeable, so headers
// move and swap between owners as with std::allocator.
template <class T>
class FieldAllocator {
 public:
  using value_type = T;
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "blocks have new's alignment");

  FieldAllocator() = default;
  template <class U>
  FieldAllocator(const FieldAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) { return static_cast<T*>(FieldBlockPool::Allocate(n * sizeof(T))); }
  void deallocate(T* pointer, std::size_t n) noexcept {
    FieldBlockPool::Deallocate(pointer, n * sizeof(T));
  }

  friend bool operator==(const FieldAllocator&, const FieldAllocator&) noexcept { return true; }
};

}  // namespace fencegate::adapters
