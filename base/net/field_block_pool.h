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

// Size classes: every kGranule bytes up to kLargestGranular (a field's text, an entry array),
// then doubling up to kLargest (the text blocks and serialized header of a request that carries
// a realistic header block of a kilobyte or two).
inline constexpr std::size_t kGranule = 32;
inline constexpr std::size_t kLargestGranular = 512;
inline constexpr std::size_t kLargest = 4096;
inline constexpr std::size_t kGranularClasses = kLargestGranular / kGranule;
inline constexpr std::size_t kClasses = kGranularClasses + 3;  // 1024, 2048, 4096
// Free blocks a thread keeps per class: 64, and no more than 32 KiB of them.
inline constexpr std::size_t kBlocksPerClass = 64;
inline constexpr std::size_t kBytesPerClass = 32 * 1024;

inline std::size_t ClassOf(std::size_t bytes) {
  if (bytes <= kLargestGranular) return bytes == 0 ? 0 : (bytes - 1) / kGranule;
  std::size_t size_class = kGranularClasses;
  for (std::size_t size = 2 * kLargestGranular; size < bytes; size *= 2) ++size_class;
  return size_class;
}

inline constexpr std::size_t BlockSize(std::size_t size_class) {
  return size_class < kGranularClasses ? (size_class + 1) * kGranule
                                       : kLargestGranular << (size_class - kGranularClasses + 1);
}

inline constexpr std::size_t MaxFreeBlocks(std::size_t size_class) {
  return kBlocksPerClass < kBytesPerClass / BlockSize(size_class)
             ? kBlocksPerClass
             : kBytesPerClass / BlockSize(size_class);
}

static_assert(BlockSize(kClasses - 1) == kLargest);

// One thread's free lists, one per size class; frees what it holds when its thread ends.
struct Lists {
  std::array<FreeList, kClasses> by_class;
  Lists() = default;
  Lists(const Lists&) = delete;
  Lists& operator=(const Lists&) = delete;
  ~Lists() {
    for (std::size_t size_class = 0; size_class < by_class.size(); ++size_class) {
      FreeList& list = by_class[size_class];
      while (list.head != nullptr) {
        ASAN_UNPOISON_MEMORY_REGION(list.head, BlockSize(size_class));
        Block* next = list.head->next;
        ::operator delete(list.head);
        list.head = next;
      }
      list.count = 0;
    }
  }
};

inline thread_local Lists local_lists;

}  // namespace field_pool_detail

// Blocks for HTTP header storage, recycled per thread: FlatFields' entry arrays and text
// blocks, and the read buffers of backend exchanges. A proxied request creates and destroys a
// few of them on the same network thread. glibc's malloc/free pair costs ~150 instructions
// there; popping and pushing a free list costs ~10.
//
// Sizes round up to their class (kGranule steps to 512 bytes, then 1024, 2048 and 4096); blocks
// above kLargest (4096) go to operator new directly. Each thread keeps at most 64 free blocks
// per class, and at most 32 KiB of them, so a thread that frees what another allocated (a
// header handed across threads) holds bounded memory; the rest is deleted.
struct FieldBlockPool {
  static void* Allocate(std::size_t bytes) {
    using namespace field_pool_detail;
    if (bytes > kLargest) return ::operator new(bytes);
    const std::size_t size_class = ClassOf(bytes);
    FreeList& list = local_lists.by_class[size_class];
    if (list.head == nullptr) return ::operator new(BlockSize(size_class));
    Block* block = list.head;
    ASAN_UNPOISON_MEMORY_REGION(block, BlockSize(size_class));
    list.head = block->next;
    --list.count;
    return block;
  }

  // The size of the block Allocate(bytes) returns, all of it usable.
  static std::size_t BlockBytes(std::size_t bytes) {
    using namespace field_pool_detail;
    return bytes > kLargest ? bytes : BlockSize(ClassOf(bytes));
  }

  static void Deallocate(void* pointer, std::size_t bytes) noexcept {
    using namespace field_pool_detail;
    if (bytes > kLargest) {
      ::operator delete(pointer);
      return;
    }
    const std::size_t size_class = ClassOf(bytes);
    FreeList& list = local_lists.by_class[size_class];
    if (list.count == MaxFreeBlocks(size_class)) {
      ::operator delete(pointer);
      return;
    }
    list.head = ::new (pointer) Block{list.head};
    ++list.count;
    // Under AddressSanitizer a block waiting in the list reads as freed (all but its link), so
    // a header used after its release is still reported.
    ASAN_POISON_MEMORY_REGION(static_cast<char*>(pointer) + sizeof(Block),
                              BlockSize(size_class) - sizeof(Block));
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
