#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace fencegate::adapters {

template <class Signature, std::size_t Capacity = 48>
class InlineHandler;

// A move-only completion handler kept inside the object, never on the heap. The handlers of
// the Downstream interface capture a shared_ptr to their exchange, and std::function keeps
// only trivially copyable callables inline: it allocated one block per body read and per
// response write. A callable larger than Capacity does not compile (capture less, or make the
// capacity of that handler type larger), so no call site falls back to the heap unnoticed.
//
// Calling an empty handler is undefined (as dereferencing a null pointer); test with bool.
template <class R, class... Args, std::size_t Capacity>
class InlineHandler<R(Args...), Capacity> {
 public:
  InlineHandler() = default;

  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, InlineHandler>>>
  InlineHandler(F&& f) {  // NOLINT(google-explicit-constructor): used like std::function
    using Callable = std::decay_t<F>;
    static_assert(sizeof(Callable) <= Capacity, "callable too large for this InlineHandler");
    static_assert(alignof(Callable) <= alignof(std::max_align_t), "callable over-aligned");
    static_assert(std::is_nothrow_move_constructible_v<Callable>,
                  "a handler must move without throwing");
    ::new (static_cast<void*>(storage_)) Callable(std::forward<F>(f));
    ops_ = &kOps<Callable>;
  }

  InlineHandler(InlineHandler&& other) noexcept { TakeFrom(other); }
  InlineHandler& operator=(InlineHandler&& other) noexcept {
    if (this != &other) {
      Reset();
      TakeFrom(other);
    }
    return *this;
  }
  InlineHandler& operator=(std::nullptr_t) noexcept {
    Reset();
    return *this;
  }
  InlineHandler(const InlineHandler&) = delete;
  InlineHandler& operator=(const InlineHandler&) = delete;
  ~InlineHandler() { Reset(); }

  explicit operator bool() const { return ops_ != nullptr; }

  // Const like std::function's: the handler is called through a const copy captured by value.
  R operator()(Args... args) const { return ops_->invoke(storage_, std::forward<Args>(args)...); }

 private:
  struct Ops {
    R (*invoke)(void* callable, Args&&... args);
    void (*move_to)(void* from, void* to);  // move-constructs at `to`, destroys `from`
    void (*destroy)(void* callable);
  };

  template <class Callable>
  static constexpr Ops kOps{
      [](void* callable, Args&&... args) -> R {
        return (*static_cast<Callable*>(callable))(std::forward<Args>(args)...);
      },
      [](void* from, void* to) {
        ::new (to) Callable(std::move(*static_cast<Callable*>(from)));
        static_cast<Callable*>(from)->~Callable();
      },
      [](void* callable) { static_cast<Callable*>(callable)->~Callable(); }};

  void TakeFrom(InlineHandler& other) noexcept {
    if (other.ops_ == nullptr) return;
    other.ops_->move_to(other.storage_, storage_);
    ops_ = other.ops_;
    other.ops_ = nullptr;
  }

  void Reset() noexcept {
    if (ops_ == nullptr) return;
    const Ops* ops = ops_;
    ops_ = nullptr;
    ops->destroy(storage_);
  }

  alignas(std::max_align_t) mutable unsigned char storage_[Capacity];
  const Ops* ops_ = nullptr;
};

}  // namespace fencegate::adapters
