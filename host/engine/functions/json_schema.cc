// json_schema(): a small recursive-descent parser for TypeScript-like type expressions
// and the matcher that checks JSON values against them.
#include "functions/json_schema.h"

#include <cctype>
#include <cmath>
#include <string>
#include <vector>

namespace quereus::jsonv {

class SchemaType {
 public:
  enum class Kind {
    kAny, kNever, kNumber, kString, kBoolean, kNull, kUndefined, kObjectAny,
    kLiteral, kArray, kTuple, kObject, kUnion, kIntersection,
  };
  struct Member {
    std::string key;
    bool optional = false;
    std::shared_ptr<const SchemaType> type;
  };

  Kind kind = Kind::kAny;
  Json literal;                                        // kLiteral
  std::vector<std::shared_ptr<const SchemaType>> parts;  // kArray (1), kTuple, kUnion, kIntersection
  std::vector<Member> members;                         // kObject
  std::shared_ptr<const SchemaType> index_value;       // kObject: { [k: string]: T }

  // `value` null means "absent" (an optional member that is missing).
  bool matches(const Json* value) const {
    switch (kind) {
      case Kind::kAny: return true;
      case Kind::kNever: return false;
      case Kind::kUndefined: return value == nullptr;
      case Kind::kUnion:
        for (auto& p : parts)
          if (p->matches(value)) return true;
        return false;
      case Kind::kIntersection:
        for (auto& p : parts)
          if (!p->matches(value)) return false;
        return true;
      default: break;
    }
    if (value == nullptr) return false;
    const Json& v = *value;
    switch (kind) {
      case Kind::kNumber: return v.is_number();
      case Kind::kString: return v.is_string();
      case Kind::kBoolean: return v.is_boolean();
      case Kind::kNull: return v.is_null();
      case Kind::kObjectAny: return v.is_object() || v.is_array();
      case Kind::kLiteral: return compare(v, literal) == 0;
      case Kind::kArray:
        if (!v.is_array()) return false;
        for (const auto& e : v)
          if (!parts[0]->matches(&e)) return false;
        return true;
      case Kind::kTuple:
        if (!v.is_array() || v.size() != parts.size()) return false;
        for (size_t i = 0; i < parts.size(); ++i)
          if (!parts[i]->matches(&v[i])) return false;
        return true;
      case Kind::kObject: {
        if (!v.is_object()) return false;
        for (const Member& m : members) {
          auto it = v.find(m.key);
          if (it == v.end()) {
            if (!m.optional && !m.type->matches(nullptr)) return false;
            continue;
          }
          if (!m.type->matches(&*it)) return false;
        }
        if (index_value)
          for (auto it = v.begin(); it != v.end(); ++it) {
            bool declared = false;
            for (const Member& m : members) declared |= m.key == it.key();
            if (!declared && !index_value->matches(&it.value())) return false;
          }
        return true;
      }
      default: return false;
    }
  }
};

namespace {

using TypePtr = std::shared_ptr<const SchemaType>;
using Kind = SchemaType::Kind;

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  TypePtr parse_all() {
    TypePtr t = parse_union();
    skip();
    if (!t || pos_ != s_.size()) return nullptr;
    return t;
  }

 private:
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) { ++pos_; return true; }
    return false;
  }
  bool peek(char c) {
    skip();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  std::string identifier() {
    skip();
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' || s_[pos_] == '$'))
      ++pos_;
    if (pos_ > start && std::isdigit(static_cast<unsigned char>(s_[start]))) { pos_ = start; return ""; }
    return std::string(s_.substr(start, pos_ - start));
  }
  bool string_literal(std::string* out) {
    skip();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return false;
    char q = s_[pos_++];
    std::string v;
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
      v += s_[pos_++];
    }
    if (pos_ >= s_.size()) return false;
    ++pos_;
    *out = v;
    return true;
  }

  static TypePtr make(Kind k) {
    auto t = std::make_shared<SchemaType>();
    t->kind = k;
    return t;
  }

  // Nesting (parentheses, object members, array suffixes) is bounded like JSON values
  // (jsonv::kMaxDepth): matching and destroying a type recurse per level.
  struct Nest {
    int& depth;
    bool ok;
    explicit Nest(int& d) : depth(d), ok(++d <= jsonv::kMaxDepth) {}
    ~Nest() { --depth; }
  };

  TypePtr parse_union() {
    Nest nest(depth_);
    if (!nest.ok) return nullptr;
    eat('|');
    TypePtr first = parse_intersection();
    if (!first) return nullptr;
    if (!peek('|')) return first;
    auto u = std::make_shared<SchemaType>();
    u->kind = Kind::kUnion;
    u->parts.push_back(first);
    while (eat('|')) {
      TypePtr next = parse_intersection();
      if (!next) return nullptr;
      u->parts.push_back(next);
    }
    return u;
  }

  TypePtr parse_intersection() {
    TypePtr first = parse_postfix();
    if (!first) return nullptr;
    if (!peek('&')) return first;
    auto u = std::make_shared<SchemaType>();
    u->kind = Kind::kIntersection;
    u->parts.push_back(first);
    while (eat('&')) {
      TypePtr next = parse_postfix();
      if (!next) return nullptr;
      u->parts.push_back(next);
    }
    return u;
  }

  TypePtr parse_postfix() {
    TypePtr t = parse_primary();
    if (!t) return nullptr;
    int suffixes = 0;
    while (true) {
      size_t save = pos_;
      if (eat('[') && eat(']')) {
        if (++suffixes + depth_ > jsonv::kMaxDepth) return nullptr;
        auto a = std::make_shared<SchemaType>();
        a->kind = Kind::kArray;
        a->parts.push_back(t);
        t = a;
      } else {
        pos_ = save;
        return t;
      }
    }
  }

  TypePtr parse_primary() {
    skip();
    if (pos_ >= s_.size()) return nullptr;
    char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      TypePtr t = parse_union();
      if (!t || !eat(')')) return nullptr;
      return t;
    }
    if (c == '{') return parse_object();
    if (c == '[') {
      ++pos_;
      auto t = std::make_shared<SchemaType>();
      t->kind = Kind::kTuple;
      if (eat(']')) return t;
      while (true) {
        TypePtr e = parse_union();
        if (!e) return nullptr;
        t->parts.push_back(e);
        if (eat(']')) return t;
        if (!eat(',')) return nullptr;
        if (eat(']')) return t;
      }
    }
    if (c == '\'' || c == '"') {
      std::string v;
      if (!string_literal(&v)) return nullptr;
      auto t = std::make_shared<SchemaType>();
      t->kind = Kind::kLiteral;
      t->literal = Json(v);
      return t;
    }
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      if (c == '-') ++pos_;
      while (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.')) ++pos_;
      auto j = parse(s_.substr(start, pos_ - start));
      if (!j || !j->is_number()) return nullptr;
      auto t = std::make_shared<SchemaType>();
      t->kind = Kind::kLiteral;
      t->literal = *j;
      return t;
    }
    std::string id = identifier();
    if (id.empty()) return nullptr;
    if (id == "number") return make(Kind::kNumber);
    if (id == "string") return make(Kind::kString);
    if (id == "boolean") return make(Kind::kBoolean);
    if (id == "null") return make(Kind::kNull);
    if (id == "undefined" || id == "void") return make(Kind::kUndefined);
    if (id == "any" || id == "unknown") return make(Kind::kAny);
    if (id == "never") return make(Kind::kNever);
    if (id == "object") return make(Kind::kObjectAny);
    if (id == "true" || id == "false") {
      auto t = std::make_shared<SchemaType>();
      t->kind = Kind::kLiteral;
      t->literal = Json(id == "true");
      return t;
    }
    if (id == "Array" || id == "ReadonlyArray") {
      if (!eat('<')) return nullptr;
      TypePtr e = parse_union();
      if (!e || !eat('>')) return nullptr;
      auto t = std::make_shared<SchemaType>();
      t->kind = Kind::kArray;
      t->parts.push_back(e);
      return t;
    }
    return nullptr;  // unknown type name
  }

  TypePtr parse_object() {
    if (!eat('{')) return nullptr;
    auto t = std::make_shared<SchemaType>();
    t->kind = Kind::kObject;
    while (true) {
      if (eat('}')) return t;
      if (peek('[')) {
        // Index signature: [k: string]: T
        eat('[');
        if (identifier().empty() || !eat(':') || identifier() != "string" || !eat(']') || !eat(':')) return nullptr;
        TypePtr v = parse_union();
        if (!v) return nullptr;
        t->index_value = v;
      } else {
        SchemaType::Member m;
        if (!string_literal(&m.key)) {
          m.key = identifier();
          if (m.key.empty()) return nullptr;
        }
        if (eat('?')) m.optional = true;
        if (!eat(':')) return nullptr;
        m.type = parse_union();
        if (!m.type) return nullptr;
        t->members.push_back(std::move(m));
      }
      if (eat(',') || eat(';')) continue;
      if (eat('}')) return t;
      return nullptr;
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

std::optional<Schema> Schema::compile(std::string_view source) {
  TypePtr t = Parser(source).parse_all();
  if (!t) return std::nullopt;
  Schema s;
  s.root_ = t;
  return s;
}

bool Schema::matches(const Json& value) const { return root_->matches(&value); }

}  // namespace quereus::jsonv
