// The member container of jsonv::Json objects: members in insertion order (what the
// reference's native objects keep and what its JSON.stringify prints), with a hash index
// once an object is big enough that a linear key search would make building or parsing
// it quadratic.
#pragma once

#include <cstddef>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <type_traits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <nlohmann/ordered_map.hpp>

namespace quereus::jsonv {

// nlohmann::ordered_map (a vector of members, searched linearly) plus an index from key to
// position, built the first time a mutable lookup sees kIndexFrom or more members and kept
// up to date while members are only appended. Erasing drops the index (positions shift);
// the next mutable lookup rebuilds it. A const lookup uses the index when it is current and
// searches linearly otherwise, so const access never writes: a const object may be read
// from several threads. Copies start without an index.
//
// Every member function of the base that adds, finds or removes members is redeclared
// here (they are not virtual: nlohmann::basic_json calls them through this type).
template <class Key, class T, class IgnoredLess = std::less<Key>,
          class Allocator = std::allocator<std::pair<const Key, T>>>
struct IndexedOrderedMap : nlohmann::ordered_map<Key, T, IgnoredLess, Allocator> {
  using Base = nlohmann::ordered_map<Key, T, IgnoredLess, Allocator>;
  using Container = typename Base::Container;
  using iterator = typename Base::iterator;
  using const_iterator = typename Base::const_iterator;
  using size_type = typename Base::size_type;
  using value_type = typename Base::value_type;
  using key_type = Key;
  using mapped_type = T;
  using key_compare = typename Base::key_compare;

  static constexpr size_t kIndexFrom = 16;

  // Key types usable for lookup without building a std::string: what nlohmann passes
  // (std::string_view, string literals) as long as a string_view can be made from it.
  template <class K>
  static constexpr bool is_key_like = !std::is_same_v<std::remove_cvref_t<K>, key_type> &&
                                      std::is_constructible_v<std::string_view, const K&>;


  IndexedOrderedMap() noexcept(noexcept(Base())) : Base() {}
  explicit IndexedOrderedMap(const Allocator& alloc) : Base(alloc) {}
  template <class It>
  IndexedOrderedMap(It first, It last, const Allocator& alloc = Allocator()) : Base(first, last, alloc) {}
  IndexedOrderedMap(std::initializer_list<value_type> init, const Allocator& alloc = Allocator())
      : Base(init, alloc) {}
  IndexedOrderedMap(const IndexedOrderedMap& other) : Base(other) {}
  IndexedOrderedMap(IndexedOrderedMap&& other) noexcept = default;
  IndexedOrderedMap& operator=(const IndexedOrderedMap& other) {
    if (this != &other) {
      Base::operator=(other);
      index_.reset();
    }
    return *this;
  }
  IndexedOrderedMap& operator=(IndexedOrderedMap&& other) noexcept = default;
  friend void swap(IndexedOrderedMap& a, IndexedOrderedMap& b) noexcept {
    a.Container::swap(b);
    a.index_.swap(b.index_);
  }

  // ------------------------------------------------------------ lookup

  iterator find(const key_type& key) { return this->begin() + static_cast<std::ptrdiff_t>(locate(key)); }
  const_iterator find(const key_type& key) const {
    return this->cbegin() + static_cast<std::ptrdiff_t>(locate_const(key));
  }
  template <class KeyType, std::enable_if_t<is_key_like<KeyType>, int> = 0>
  iterator find(KeyType&& key) {
    return this->begin() + static_cast<std::ptrdiff_t>(locate(std::string_view(key)));
  }
  template <class KeyType, std::enable_if_t<is_key_like<KeyType>, int> = 0>
  const_iterator find(KeyType&& key) const {
    return this->cbegin() + static_cast<std::ptrdiff_t>(locate_const(std::string_view(key)));
  }

  size_type count(const key_type& key) const { return locate_const(key) < this->size() ? 1 : 0; }
  template <class KeyType, std::enable_if_t<is_key_like<KeyType>, int> = 0>
  size_type count(KeyType&& key) const {
    return locate_const(std::string_view(key)) < this->size() ? 1 : 0;
  }

  T& at(const key_type& key) { return checked(locate(key)).second; }
  const T& at(const key_type& key) const { return checked(locate_const(key)).second; }
  template <class KeyType, std::enable_if_t<is_key_like<KeyType>, int> = 0>
  T& at(KeyType&& key) {
    return checked(locate(std::string_view(key))).second;
  }
  template <class KeyType, std::enable_if_t<is_key_like<KeyType>, int> = 0>
  const T& at(KeyType&& key) const {
    return checked(locate_const(std::string_view(key))).second;
  }

  // ------------------------------------------------------------ adding

  // Appends (key, t) unless the key is present; an existing member keeps its place.
  std::pair<iterator, bool> emplace(const key_type& key, T&& t) { return add(key, std::move(t)); }
  template <class KeyType, std::enable_if_t<is_key_like<KeyType>, int> = 0>
  std::pair<iterator, bool> emplace(KeyType&& key, T&& t) {
    return add(std::string_view(key), std::move(t));
  }

  T& operator[](const key_type& key) { return add(key, T{}).first->second; }
  template <class KeyType, std::enable_if_t<is_key_like<KeyType>, int> = 0>
  T& operator[](KeyType&& key) {
    return add(std::string_view(key), T{}).first->second;
  }
  const T& operator[](const key_type& key) const { return at(key); }
  template <class KeyType, std::enable_if_t<is_key_like<KeyType>, int> = 0>
  const T& operator[](KeyType&& key) const {
    return at(std::forward<KeyType>(key));
  }

  std::pair<iterator, bool> insert(value_type&& value) { return add(value.first, std::move(value.second)); }
  std::pair<iterator, bool> insert(const value_type& value) { return add(value.first, T(value.second)); }
  template <class InputIt, class = nlohmann::detail::enable_if_t<std::is_convertible<
                               typename std::iterator_traits<InputIt>::iterator_category, std::input_iterator_tag>::value>>
  void insert(InputIt first, InputIt last) {
    for (; first != last; ++first) insert(*first);
  }

  // ------------------------------------------------------------ removing

  size_type erase(const key_type& key) { return erase_at(locate(key)); }
  template <class KeyType, std::enable_if_t<is_key_like<KeyType>, int> = 0>
  size_type erase(KeyType&& key) {
    return erase_at(locate(std::string_view(key)));
  }
  iterator erase(iterator pos) {
    index_.reset();
    return Base::erase(pos);
  }
  iterator erase(iterator first, iterator last) {
    index_.reset();
    return Base::erase(first, last);
  }
  void clear() noexcept {
    index_.reset();
    Container::clear();
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>()(s); }
  };
  using Index = std::unordered_map<std::string, size_t, Hash, std::equal_to<>>;

  bool index_current() const { return index_ && index_->size() == this->size(); }

  void rebuild() {
    auto idx = std::make_unique<Index>();
    idx->reserve(this->size() * 2);
    for (size_t i = 0; i < this->size(); ++i) idx->emplace(Container::operator[](i).first, i);
    index_ = std::move(idx);
  }

  size_t linear(std::string_view key) const {
    for (size_t i = 0; i < this->size(); ++i)
      if (std::string_view(Container::operator[](i).first) == key) return i;
    return this->size();
  }

  // The member's position, size() when absent.
  size_t locate_const(std::string_view key) const {
    if (!index_current()) return linear(key);
    auto it = index_->find(key);
    return it == index_->end() ? this->size() : it->second;
  }
  size_t locate(std::string_view key) {
    if (this->size() >= kIndexFrom && !index_current()) rebuild();
    return locate_const(key);
  }

  value_type& checked(size_t i) {
    if (i >= this->size()) throw std::out_of_range("key not found");
    return Container::operator[](i);
  }
  const value_type& checked(size_t i) const {
    if (i >= this->size()) throw std::out_of_range("key not found");
    return Container::operator[](i);
  }

  template <class K>
  std::pair<iterator, bool> add(const K& key, T&& t) {
    size_t i = locate(std::string_view(key));
    if (i < this->size()) return {this->begin() + static_cast<std::ptrdiff_t>(i), false};
    const bool keep = index_current();
    Container::emplace_back(key_type(key), std::move(t));
    if (keep) index_->emplace(this->back().first, this->size() - 1);
    return {std::prev(this->end()), true};
  }

  size_type erase_at(size_t i) {
    if (i >= this->size()) return 0;
    index_.reset();
    Base::erase(this->begin() + static_cast<std::ptrdiff_t>(i));
    return 1;
  }

  std::unique_ptr<Index> index_;
};

}  // namespace quereus::jsonv
