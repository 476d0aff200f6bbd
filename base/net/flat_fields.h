#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/optional/optional.hpp>

#include "base/net/field_lists.h"

namespace fencegate::adapters {

template <bool isRequest, class Body>
class MessageParser;

// The fields of one HTTP header, as Beast's Fields concept wants them (http::header and
// http::message take it as their Fields parameter), stored flat: an array of 16-byte entries in
// arrival order, their text in a few pooled blocks that grow by appending.
//
// Why not Beast's basic_fields: it allocates each field on its own and links it into a
// red-black tree (for lookups by name) and a list (for order). A proxied request parses and
// forwards two headers of about ten fields each, looked up a few times: the tree and the
// per-field allocations cost ~6k instructions per request here, more than a quarter of the
// gateway's whole cost, where scanning ten entries costs a few dozen.
//
// What differs from basic_fields, none of it visible on the wire:
// - Fields stay in arrival order; basic_fields moves a repeated field next to its first
//   occurrence. The order among fields of one name, the only order HTTP gives meaning to, is
//   the same in both.
// - set() replaces the first field of that name where it stands (dropping the others) instead
//   of erasing them all and appending.
// - No equal_range (same-named fields need not be adjacent).
// - Text of erased or replaced fields is reclaimed when the FlatFields is destroyed, not
//   before: a header lives for one exchange and is changed a handful of times.
//
// As in basic_fields, values are stored without surrounding spaces and tabs, and a name or value
// longer than 65,533 bytes throws std::length_error (the parsers' header limit is far lower).
class FlatFields {
 public:
  using string_view = boost::beast::string_view;
  using field = boost::beast::http::field;

  // One field. Its text is kept as "name: value\r\n".
  class value_type {
   public:
    field name() const { return field_; }
    string_view name_string() const { return {text_, name_size_}; }
    string_view value() const { return {text_ + name_size_ + 2, value_size_}; }
    // The field as it goes on the wire: "name: value\r\n".
    string_view line() const { return {text_, std::size_t{name_size_} + value_size_ + 4}; }

   private:
    friend class FlatFields;
    char* text_ = nullptr;
    std::uint32_t value_size_ = 0;
    std::uint16_t name_size_ = 0;
    field field_ = field::unknown;
  };
  using const_iterator = const value_type*;
  using iterator = const_iterator;

  // The serialized header, for Beast's serializer (the Fields concept's writer).
  class writer;

  FlatFields() = default;
  FlatFields(const FlatFields& other);
  FlatFields(FlatFields&& other) noexcept;
  FlatFields& operator=(const FlatFields& other);
  FlatFields& operator=(FlatFields&& other) noexcept;
  ~FlatFields() {
    if (entries_ != nullptr || text_ != nullptr) Release();
  }

  const_iterator begin() const { return entries_; }
  const_iterator end() const { return entries_ + size_; }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }

  // A new field after the others. `name` must not be field::unknown in the first form.
  void insert(field name, string_view value) {
    Append(name, boost::beast::http::to_string(name), TrimOws(value));
  }
  void insert(string_view name, string_view value);
  void insert(field name, string_view name_string, string_view value) {
    Append(name, name_string, TrimOws(value));
  }

  // The field `name` with this one value: the first of that name is replaced, others erased.
  void set(field name, string_view value);
  void set(string_view name, string_view value);

  const_iterator erase(const_iterator position);
  std::size_t erase(field name);
  std::size_t erase(string_view name);
  // Erases, in one pass, the fields `remove` returns true for; returns how many.
  template <class Predicate>
  std::size_t erase_if(Predicate remove) {
    std::uint32_t kept = 0;
    for (std::uint32_t i = 0; i < size_; ++i) {
      if (remove(static_cast<const value_type&>(entries_[i]))) continue;
      if (kept != i) entries_[kept] = entries_[i];
      ++kept;
    }
    const std::size_t erased = size_ - kept;
    size_ = kept;
    return erased;
  }
  // Removes every field; the method, target and reason stay.
  void clear() { size_ = 0; }
  void swap(FlatFields& other) noexcept;
  friend void swap(FlatFields& a, FlatFields& b) noexcept { a.swap(b); }

  std::size_t count(field name) const;
  std::size_t count(string_view name) const;
  bool contains(field name) const { return find(name) != end(); }
  bool contains(string_view name) const { return find(name) != end(); }
  const_iterator find(field name) const {
    const_iterator it = begin();
    while (it != end() && it->field_ != name) ++it;
    return it;
  }
  const_iterator find(string_view name) const;

  // The first value of `name`, empty when there is none.
  string_view operator[](field name) const {
    const const_iterator it = find(name);
    return it == end() ? string_view{} : it->value();
  }
  string_view operator[](string_view name) const;
  // The first value of `name`; throws std::out_of_range when there is none.
  string_view at(field name) const;
  string_view at(string_view name) const;

 protected:
  // The Fields concept: what http::header and http::message call.
  string_view get_method_impl() const { return method_; }
  string_view get_target_impl() const { return target_or_reason_; }
  string_view get_reason_impl() const { return target_or_reason_; }
  bool get_chunked_impl() const;
  bool get_keep_alive_impl(unsigned version) const;
  bool has_content_length_impl() const { return count(field::content_length) > 0; }
  void set_method_impl(string_view method) { method_ = Keep(method); }
  void set_target_impl(string_view target) { target_or_reason_ = Keep(target); }
  void set_reason_impl(string_view reason) { target_or_reason_ = Keep(reason); }
  void set_chunked_impl(bool chunked);
  void set_content_length_impl(const boost::optional<std::uint64_t>& length);
  void set_keep_alive_impl(unsigned version, bool keep_alive);

 private:
  template <bool isRequest, class Body>
  friend class MessageParser;  // appends what it parsed, already trimmed

  // A block of text; the bytes follow it.
  struct TextBlock {
    TextBlock* previous;
    std::size_t size;  // of the whole allocation
  };
  static constexpr std::size_t kMaxPart = 65533;  // basic_fields' limit for a name or value

  // A new last field; `value` is trimmed already. Inline: the parser calls it for every field.
  void Append(field name, string_view name_string, string_view value) {
    value_type entry;
    Write(entry, name, name_string, value);  // first: a throw leaves no half-made entry
    if (size_ == capacity_) Grow();
    entries_[size_++] = entry;
  }

  // A complete header block as the parser reads it, and where its bytes were copied (CopyBlock);
  // empty when the parser is not given whole blocks.
  struct BlockCopy {
    std::uintptr_t source = 0;
    std::size_t size = 0;
    char* copy = nullptr;
  };

  // Copies a header block into the text blocks at once, for AppendParsed.
  BlockCopy CopyBlock(string_view block) {
    if (block.empty() || block.size() > kMaxPart) return {};
    char* copy = Reserve(block.size());
    std::memcpy(copy, block.data(), block.size());
    return {reinterpret_cast<std::uintptr_t>(block.data()), block.size(), copy};
  }

  // The request target as the parser saw it: a view of the block's copy when it stands in
  // `block`, else a copy.
  void SetParsedTarget(string_view target, const BlockCopy& block) {
    const std::uintptr_t offset = reinterpret_cast<std::uintptr_t>(target.data()) - block.source;
    if (offset < block.size && block.size - offset >= target.size()) {
      target_or_reason_ = {block.copy + offset, target.size()};
    } else {
      set_target_impl(target);
    }
  }

  // Append for a field as the parser saw it, trimmed. When the name and value are views of one
  // "name: value" line of the parsed input (the common case), the line is not assembled: if it
  // stands in `block` exactly as it goes on the wire (one space, no trailing whitespace, as
  // clients send it), the entry refers to it in the block's copy; otherwise it is copied at
  // once. Inline: the parser calls it for every field.
  void AppendParsed(field name, string_view name_string, string_view value,
                    const BlockCopy& block) {
    const char* name_end = name_string.data() + name_string.size();
    if (value.data() != name_end + 2 || name_end[0] != ':' || name_end[1] != ' ' ||
        value.size() > kMaxPart || name_string.size() > kMaxPart) {
      Append(name, name_string, value);
      return;
    }
    const std::size_t line = name_string.size() + 2 + value.size();
    const std::uintptr_t offset =
        reinterpret_cast<std::uintptr_t>(name_string.data()) - block.source;
    char* text;
    if (offset < block.size && block.size - offset >= line + 2 &&
        name_string.data()[line] == '\r' && name_string.data()[line + 1] == '\n') {
      text = block.copy + offset;
    } else {
      text = Reserve(line + 2);
      std::memcpy(text, name_string.data(), line);
      text[line] = '\r';
      text[line + 1] = '\n';
    }
    if (size_ == capacity_) Grow();
    value_type& entry = entries_[size_++];
    entry.text_ = text;
    entry.value_size_ = static_cast<std::uint32_t>(value.size());
    entry.name_size_ = static_cast<std::uint16_t>(name_string.size());
    entry.field_ = name;
  }

  // Writes "name: value\r\n" into the text blocks and points `entry` at it.
  void Write(value_type& entry, field name, string_view name_string, string_view value) {
    if (name_string.size() > kMaxPart || value.size() > kMaxPart) ThrowTooLarge();
    char* text = Reserve(name_string.size() + value.size() + 4);
    char* out = text;
    std::memcpy(out, name_string.data(), name_string.size());
    out += name_string.size();
    out[0] = ':';
    out[1] = ' ';
    out += 2;
    if (!value.empty()) std::memcpy(out, value.data(), value.size());
    out += value.size();
    out[0] = '\r';
    out[1] = '\n';
    entry.text_ = text;
    entry.value_size_ = static_cast<std::uint32_t>(value.size());
    entry.name_size_ = static_cast<std::uint16_t>(name_string.size());
    entry.field_ = name;
  }

  char* Reserve(std::size_t bytes) {
    if (static_cast<std::size_t>(limit_ - cursor_) < bytes) return ReserveInNewBlock(bytes);
    char* out = cursor_;
    cursor_ += bytes;
    return out;
  }

  [[noreturn]] static void ThrowTooLarge();
  char* ReserveInNewBlock(std::size_t bytes);
  static bool Matches(const value_type& entry, field name, string_view name_string);
  std::size_t IndexOf(field name, string_view name_string) const;
  void Replace(field name, string_view name_string, string_view value);
  std::size_t EraseAll(field name, string_view name_string, std::size_t from);
  string_view Keep(string_view text);
  void Grow();
  void CopyFrom(const FlatFields& other);
  void Release() noexcept;

  value_type* entries_ = nullptr;
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = 0;
  TextBlock* text_ = nullptr;  // the newest block; older ones are linked from it
  char* cursor_ = nullptr;     // the newest block's free bytes: [cursor_, limit_)
  char* limit_ = nullptr;
  string_view method_;  // set only for a method Beast has no verb for
  string_view target_or_reason_;
};

class FlatFields::writer {
 public:
  using const_buffers_type = boost::asio::const_buffer;

  writer(const FlatFields& fields, unsigned version, boost::beast::http::verb method);
  writer(const FlatFields& fields, unsigned version, unsigned status);
  explicit writer(const FlatFields& fields);

  const_buffers_type get() const { return {text_.data(), text_.size()}; }

 private:
  void AppendFields(const FlatFields& fields);

  std::string text_;
};

}  // namespace fencegate::adapters
