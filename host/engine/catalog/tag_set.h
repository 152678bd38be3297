// TagSet: the metadata tags of one schema object (WITH TAGS, sql-ddl.md §2.6.3; see
// docs/tags.md) as the catalog holds them — keys in byte order, each with a scalar value
// (null, boolean, integer, real or string; the parser admits only literals). The
// canonical JSON object text is a view of it (introspection's `tags` columns); the DDL
// text a catalog entry is stored as spells it as a WITH TAGS clause.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace quereus {

using TagValue = std::variant<std::monostate, bool, int64_t, double, std::string>;

class TagSet {
 public:
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  const std::map<std::string, TagValue, std::less<>>& entries() const { return entries_; }

  bool contains(std::string_view key) const { return entries_.find(key) != entries_.end(); }
  // The value under `key` (exact match), or null when absent.
  const TagValue* find(std::string_view key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : &it->second;
  }
  // True when the set holds `key` = true.
  bool is_true(std::string_view key) const {
    const TagValue* v = find(key);
    return v && std::holds_alternative<bool>(*v) && std::get<bool>(*v);
  }
  // Sets (or replaces) one tag.
  void set(std::string key, TagValue value) { entries_[std::move(key)] = std::move(value); }
  // Removes `key`; false when it was absent.
  bool erase(std::string_view key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return false;
    entries_.erase(it);
    return true;
  }

  // The canonical JSON object text (keys sorted, numbers as JSON prints them); "" when
  // the set is empty.
  std::string to_json() const;

  friend bool operator==(const TagSet&, const TagSet&) = default;

 private:
  std::map<std::string, TagValue, std::less<>> entries_;
};

// A value as text: a string as itself, true / false, null, a number as JSON prints it.
std::string tag_text(const TagValue& v);
// A value as JSON text (a string quoted).
std::string tag_json(const TagValue& v);

}  // namespace quereus
