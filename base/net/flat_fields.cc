#include "base/net/flat_fields.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/rfc7230.hpp>
#include <boost/beast/http/status.hpp>

#include "base/net/field_block_pool.h"

namespace fencegate::adapters {
namespace http = boost::beast::http;
namespace {

using string_view = FlatFields::string_view;

// Entries in the first array; then it doubles. A proxied request's headers have about ten.
constexpr std::uint32_t kFirstCapacity = 16;
// The first text block (a pooled size); later ones double (pooled up to 4 KiB).
constexpr std::size_t kFirstBlock = 512;

bool SameName(string_view a, string_view b) {
  return a.size() == b.size() && boost::beast::iequals(a, b);
}

}  // namespace

FlatFields::FlatFields(const FlatFields& other) { CopyFrom(other); }

FlatFields::FlatFields(FlatFields&& other) noexcept
    : entries_(std::exchange(other.entries_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)),
      text_(std::exchange(other.text_, nullptr)),
      cursor_(std::exchange(other.cursor_, nullptr)),
      limit_(std::exchange(other.limit_, nullptr)),
      method_(std::exchange(other.method_, {})),
      target_or_reason_(std::exchange(other.target_or_reason_, {})) {}

FlatFields& FlatFields::operator=(const FlatFields& other) {
  if (this != &other) {
    FlatFields copy(other);
    swap(copy);
  }
  return *this;
}

FlatFields& FlatFields::operator=(FlatFields&& other) noexcept {
  if (this != &other) {
    FlatFields taken(std::move(other));
    swap(taken);
  }
  return *this;
}

void FlatFields::swap(FlatFields& other) noexcept {
  std::swap(entries_, other.entries_);
  std::swap(size_, other.size_);
  std::swap(capacity_, other.capacity_);
  std::swap(text_, other.text_);
  std::swap(cursor_, other.cursor_);
  std::swap(limit_, other.limit_);
  std::swap(method_, other.method_);
  std::swap(target_or_reason_, other.target_or_reason_);
}

void FlatFields::Release() noexcept {
  if (entries_ != nullptr) FieldBlockPool::Deallocate(entries_, capacity_ * sizeof(value_type));
  while (text_ != nullptr) {
    TextBlock* previous = text_->previous;
    FieldBlockPool::Deallocate(text_, text_->size);
    text_ = previous;
  }
  cursor_ = limit_ = nullptr;
  entries_ = nullptr;
  size_ = capacity_ = 0;
  method_ = {};
  target_or_reason_ = {};
}

void FlatFields::CopyFrom(const FlatFields& other) {
  for (const value_type& entry : other) Append(entry.name(), entry.name_string(), entry.value());
  method_ = Keep(other.method_);
  target_or_reason_ = Keep(other.target_or_reason_);
}

// ---- Storage ----

char* FlatFields::ReserveInNewBlock(std::size_t bytes) {
  std::size_t size = text_ == nullptr ? kFirstBlock : 2 * text_->size;
  size = std::max(size, sizeof(TextBlock) + bytes);
  auto* block = static_cast<TextBlock*>(FieldBlockPool::Allocate(size));
  block->previous = text_;
  block->size = size;
  text_ = block;
  char* out = reinterpret_cast<char*>(block + 1);
  cursor_ = out + bytes;
  limit_ = reinterpret_cast<char*>(block) + size;
  return out;
}

void FlatFields::ThrowTooLarge() { throw std::length_error("field name or value too large"); }

string_view FlatFields::Keep(string_view text) {
  if (text.empty()) return {};
  char* out = Reserve(text.size());
  std::memcpy(out, text.data(), text.size());
  return {out, text.size()};
}

void FlatFields::Grow() {
  const std::uint32_t capacity = capacity_ == 0 ? kFirstCapacity : 2 * capacity_;
  auto* entries = static_cast<value_type*>(FieldBlockPool::Allocate(capacity * sizeof(value_type)));
  if (size_ > 0) std::memcpy(static_cast<void*>(entries), entries_, size_ * sizeof(value_type));
  if (entries_ != nullptr) FieldBlockPool::Deallocate(entries_, capacity_ * sizeof(value_type));
  entries_ = entries;
  capacity_ = capacity;
}

// ---- Modifiers ----

void FlatFields::insert(string_view name, string_view value) {
  Append(http::string_to_field(name), name, TrimOws(value));
}

void FlatFields::set(field name, string_view value) { Replace(name, http::to_string(name), value); }

void FlatFields::set(string_view name, string_view value) {
  Replace(http::string_to_field(name), name, value);
}

void FlatFields::Replace(field name, string_view name_string, string_view value) {
  value = TrimOws(value);
  const std::size_t first = IndexOf(name, name_string);
  if (first == size_) {
    Append(name, name_string, value);
    return;
  }
  EraseAll(name, name_string, first + 1);
  value_type& entry = entries_[first];
  if (value.size() <= entry.value_size_ && name_string.size() == entry.name_size_) {
    // Shorter or the same: over the old value (memmove: `value` may be a part of it).
    char* out = entry.text_ + entry.name_size_ + 2;
    if (!value.empty()) std::memmove(out, value.data(), value.size());
    out[value.size()] = '\r';
    out[value.size() + 1] = '\n';
    entry.value_size_ = static_cast<std::uint32_t>(value.size());
    std::memmove(entry.text_, name_string.data(), name_string.size());
    return;
  }
  Write(entry, name, name_string, value);
}

FlatFields::const_iterator FlatFields::erase(const_iterator position) {
  const std::size_t index = static_cast<std::size_t>(position - entries_);
  std::memmove(static_cast<void*>(entries_ + index), entries_ + index + 1,
               (size_ - index - 1) * sizeof(value_type));
  --size_;
  return entries_ + index;
}

std::size_t FlatFields::erase(field name) { return EraseAll(name, http::to_string(name), 0); }

std::size_t FlatFields::erase(string_view name) { return EraseAll(field::unknown, name, 0); }

std::size_t FlatFields::EraseAll(field name, string_view name_string, std::size_t from) {
  std::size_t kept = from;
  for (std::size_t i = from; i < size_; ++i) {
    if (Matches(entries_[i], name, name_string)) continue;
    if (kept != i) entries_[kept] = entries_[i];
    ++kept;
  }
  const std::size_t erased = size_ - kept;
  size_ = static_cast<std::uint32_t>(kept);
  return erased;
}

// ---- Lookup ----

// A known field is matched by its enum (every insert of a known name carries it); an unknown
// one, and any lookup by string, by the name compared without case.
bool FlatFields::Matches(const value_type& entry, field name, string_view name_string) {
  if (name != field::unknown) return entry.field_ == name;
  return SameName(entry.name_string(), name_string);
}

std::size_t FlatFields::IndexOf(field name, string_view name_string) const {
  std::size_t i = 0;
  while (i < size_ && !Matches(entries_[i], name, name_string)) ++i;
  return i;
}

std::size_t FlatFields::count(field name) const {
  std::size_t n = 0;
  for (const value_type& entry : *this) n += entry.field_ == name ? 1 : 0;
  return n;
}

std::size_t FlatFields::count(string_view name) const {
  std::size_t n = 0;
  for (const value_type& entry : *this) n += SameName(entry.name_string(), name) ? 1 : 0;
  return n;
}

FlatFields::const_iterator FlatFields::find(string_view name) const {
  return entries_ + IndexOf(field::unknown, name);
}

string_view FlatFields::operator[](string_view name) const {
  const const_iterator it = find(name);
  return it == end() ? string_view{} : it->value();
}

string_view FlatFields::at(field name) const {
  const const_iterator it = find(name);
  if (it == end()) throw std::out_of_range("field not found");
  return it->value();
}

string_view FlatFields::at(string_view name) const {
  const const_iterator it = find(name);
  if (it == end()) throw std::out_of_range("field not found");
  return it->value();
}

// ---- The Fields concept: the same rules as basic_fields (Beast's own helpers where they
// are exposed) ----

bool FlatFields::get_chunked_impl() const {
  const http::token_list codings{(*this)[field::transfer_encoding]};
  for (auto it = codings.begin(); it != codings.end();) {
    const auto next = std::next(it);
    if (next == codings.end()) return boost::beast::iequals(*it, "chunked");
    it = next;
  }
  return false;
}

bool FlatFields::get_keep_alive_impl(unsigned version) const {
  const const_iterator it = find(field::connection);
  if (version < 11) return it != end() && http::token_list{it->value()}.exists("keep-alive");
  return it == end() || !http::token_list{it->value()}.exists("close");
}

void FlatFields::set_chunked_impl(bool chunked) {
  const const_iterator it = find(field::transfer_encoding);
  boost::beast::detail::temporary_buffer buffer;
  if (chunked) {
    if (it == end()) {
      set(field::transfer_encoding, "chunked");
      return;
    }
    if (get_chunked_impl()) return;
    buffer.append(it->value(), ", chunked");
    set(field::transfer_encoding, buffer.view());
    return;
  }
  if (it == end()) return;
  http::detail::filter_token_list_last(buffer, it->value(), {"chunked", {}});
  if (buffer.empty()) {
    erase(field::transfer_encoding);
  } else {
    set(field::transfer_encoding, buffer.view());
  }
}

void FlatFields::set_content_length_impl(const boost::optional<std::uint64_t>& length) {
  if (!length) {
    erase(field::content_length);
    return;
  }
  const std::string digits = std::to_string(*length);
  set(field::content_length, digits);
}

void FlatFields::set_keep_alive_impl(unsigned version, bool keep_alive) {
  boost::beast::detail::temporary_buffer buffer;
  http::detail::keep_alive_impl(buffer, (*this)[field::connection], version, keep_alive);
  if (buffer.empty()) {
    erase(field::connection);
  } else {
    set(field::connection, buffer.view());
  }
}

// ---- writer ----

FlatFields::writer::writer(const FlatFields& fields, unsigned version,
                           boost::beast::http::verb method) {
  const string_view name = method == http::verb::unknown ? fields.method_ : http::to_string(method);
  text_.append(name.data(), name.size());
  text_.push_back(' ');
  text_.append(fields.target_or_reason_.data(), fields.target_or_reason_.size());
  text_.append(" HTTP/");
  text_.push_back(static_cast<char>('0' + version / 10));
  text_.push_back('.');
  text_.push_back(static_cast<char>('0' + version % 10));
  text_.append("\r\n");
  AppendFields(fields);
}

FlatFields::writer::writer(const FlatFields& fields, unsigned version, unsigned status) {
  text_.append("HTTP/");
  text_.push_back(static_cast<char>('0' + version / 10));
  text_.push_back('.');
  text_.push_back(static_cast<char>('0' + version % 10));
  text_.push_back(' ');
  text_.push_back(static_cast<char>('0' + status / 100 % 10));
  text_.push_back(static_cast<char>('0' + status / 10 % 10));
  text_.push_back(static_cast<char>('0' + status % 10));
  text_.push_back(' ');
  const string_view reason = fields.target_or_reason_.empty()
                                 ? http::obsolete_reason(static_cast<http::status>(status))
                                 : fields.target_or_reason_;
  text_.append(reason.data(), reason.size());
  text_.append("\r\n");
  AppendFields(fields);
}

FlatFields::writer::writer(const FlatFields& fields) { AppendFields(fields); }

void FlatFields::writer::AppendFields(const FlatFields& fields) {
  for (const value_type& entry : fields) {
    text_.append(entry.text_, entry.name_size_ + 2 + entry.value_size_ + 2);
  }
  text_.append("\r\n");
}

}  // namespace fencegate::adapters
