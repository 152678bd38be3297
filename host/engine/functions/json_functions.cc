// Built-in functions: the json family — json(), json_valid, json_schema, json_type,
// json_extract, json_quote, json_array, json_object, json_array_length, json_insert,
// json_replace, json_set, json_remove, json_patch (RFC 6902), the json_group_array /
// json_group_object aggregates and the json_each / json_tree table functions.
//
// JSON results are Value::Json holding their text, objects in member order
// (types/json_value.h: built objects keep insertion order); a JSON
// null result is SQL NULL. Scalars extracted from a document come back as SQL scalars.
//
// Determinism: everything here is deterministic and replicable (pure text processing),
// except json_patch, which the reference declares non-deterministic; that is kept so the
// same CHECK / DEFAULT / generated-column bodies are accepted and refused.
#include <optional>

#include "common/status.h"
#include "catalog/registry.h"
#include "functions/builtins.h"
#include "functions/function_util.h"
#include "functions/json_schema.h"
#include "types/json_value.h"

namespace quereus {

namespace {

using fnutil::Args;
using fnutil::add_aggregate;
using fnutil::add_scalar;
using jsonv::Json;

// ---------------------------------------------------------------- scalars

Value json_conversion(Args a) {
  const Value& v = a[0];
  switch (v.type()) {
    case ValueType::kNull: return Value();
    case ValueType::kJson: return v;
    case ValueType::kInteger:
    case ValueType::kReal:
    case ValueType::kBoolean:
    case ValueType::kBigInt: return jsonv::to_value(jsonv::from_sql_element(v));
    case ValueType::kText: {
      // The document keeps its key order (jsonv::document_value).
      auto doc = jsonv::document_value(v.str());
      if (!doc)
        throw Error(StatusCode::kMismatch,
                    "Cannot convert to JSON: Cannot convert '" + v.str() + "' to JSON: invalid JSON syntax");
      return *doc;
    }
    case ValueType::kBlob: break;
  }
  throw Error(StatusCode::kMismatch, "Cannot convert to JSON: Cannot convert object to JSON");
}

Value json_valid(Args a) {
  const Value& v = a[0];
  switch (v.type()) {
    case ValueType::kNull:
    case ValueType::kBlob: return Value::Boolean(false);
    case ValueType::kText: return Value::Boolean(jsonv::parse(v.str()).has_value());
    default: return Value::Boolean(true);
  }
}

Value json_schema(Args a) {
  if (a[1].type() != ValueType::kText) return Value::Boolean(false);
  auto data = jsonv::from_sql_document(a[0]);
  if (!data) return Value::Boolean(false);
  auto schema = jsonv::Schema::compile(a[1].str());
  if (!schema) return Value::Boolean(false);
  return Value::Boolean(schema->matches(*data));
}

Value json_type(Args a) {
  if (a.empty()) return Value();
  auto data = jsonv::from_sql_document(a[0]);
  if (!data) return Value();
  if (a.size() > 1 && !a[1].is_null()) {
    if (a[1].type() != ValueType::kText) return Value::Text("null");
    auto t = jsonv::resolve(*data, a[1].str());
    if (!t || !t->value) return Value();
    return Value::Text(jsonv::type_name(*t->value));
  }
  return Value::Text(jsonv::type_name(*data));
}

Value json_extract(Args a) {
  if (a.empty()) return Value();
  auto data = jsonv::from_sql_document(a[0]);
  if (!data || a.size() < 2) return Value();
  for (size_t i = 1; i < a.size(); ++i) {
    if (a[i].type() != ValueType::kText) return Value();
    auto t = jsonv::resolve(*data, a[i].str());
    if (t && t->value) return jsonv::to_sql_scalar(*t->value);
  }
  return Value();
}

Value json_quote(Args a) {
  const Value& v = a[0];
  switch (v.type()) {
    case ValueType::kNull: return Value::Text("null");
    case ValueType::kBlob: return Value();
    case ValueType::kText: return Value::Text(jsonv::canonical(Json(v.str())));
    case ValueType::kJson: return Value::Text(v.str());
    default: return Value::Text(jsonv::text(jsonv::from_sql_element(v)));
  }
}

Value json_array(Args a) {
  Json arr = Json::array();
  for (const Value& v : a) arr.push_back(jsonv::from_sql_element(v));
  return jsonv::to_value(arr);
}

Value json_object(Args a) {
  if (a.size() % 2 != 0) return Value();
  Json obj = Json::object();
  for (size_t i = 0; i < a.size(); i += 2) {
    if (a[i].type() != ValueType::kText) return Value();
    obj[a[i].str()] = jsonv::from_sql_element(a[i + 1]);
  }
  return jsonv::to_value(obj);
}

Value json_array_length(Args a) {
  if (a.empty()) return Value();
  auto data = jsonv::from_sql_document(a[0]);
  if (!data) return Value();
  const Json* target = &*data;
  if (a.size() > 1 && !a[1].is_null()) {
    if (a[1].type() != ValueType::kText) return Value::Integer(0);
    auto t = jsonv::resolve(*data, a[1].str());
    target = t ? t->value : nullptr;
  }
  return Value::Integer(target && target->is_array() ? static_cast<int64_t>(target->size()) : 0);
}

// json_insert / json_replace / json_set: (doc, path, value, path, value, …).
enum class Modify { kInsert, kReplace, kSet };

Value json_modify(Args a, Modify mode) {
  if (a.empty()) return Value();
  auto data = jsonv::from_sql_document(a[0]);
  if (!data) return Value();
  size_t pairs = a.size() - 1;
  if (pairs == 0 || pairs % 2 != 0) return Value();
  Json doc = *data;
  for (size_t i = 1; i < a.size(); i += 2) {
    if (a[i].type() != ValueType::kText) return Value();
    Json value = jsonv::from_sql_element(a[i + 1]);
    auto t = jsonv::resolve(doc, a[i].str());
    if (!t) continue;
    if (t->is_root) {
      if (mode != Modify::kInsert) doc = std::move(value);
      continue;
    }
    bool exists = t->value != nullptr;
    Json* parent = t->parent;
    if (parent == nullptr) continue;
    if (mode == Modify::kInsert && exists) continue;
    if (mode == Modify::kReplace && !exists) continue;
    if (parent->is_object() && std::holds_alternative<std::string>(t->key)) {
      (*parent)[std::get<std::string>(t->key)] = std::move(value);
    } else if (parent->is_array() && std::holds_alternative<size_t>(t->key)) {
      size_t idx = std::get<size_t>(t->key);
      if (idx < parent->size()) {
        (*parent)[idx] = std::move(value);
      } else if (mode == Modify::kInsert) {
        if (idx == parent->size()) parent->push_back(std::move(value));
      } else if (mode == Modify::kSet) {
        while (parent->size() < idx) parent->push_back(Json(nullptr));
        parent->push_back(std::move(value));
      }
    }
  }
  return jsonv::to_value(doc);
}

Value json_remove(Args a) {
  if (a.empty()) return Value();
  auto data = jsonv::from_sql_document(a[0]);
  if (!data) return Value();
  Json doc = *data;
  for (size_t i = 1; i < a.size(); ++i) {
    if (a[i].type() != ValueType::kText) return Value();
    auto t = jsonv::resolve(doc, a[i].str());
    if (!t || !t->value || t->parent == nullptr) continue;
    Json* parent = t->parent;
    if (parent->is_array() && std::holds_alternative<size_t>(t->key)) {
      size_t idx = std::get<size_t>(t->key);
      if (idx < parent->size()) parent->erase(idx);
    } else if (parent->is_object() && std::holds_alternative<std::string>(t->key)) {
      parent->erase(std::get<std::string>(t->key));
    }
  }
  return jsonv::to_value(doc);
}

// ---------------------------------------------------------------- json_patch (RFC 6902)

struct PointerError {};

std::vector<std::string> pointer_tokens(const std::string& path) {
  std::vector<std::string> tokens;
  if (path.empty()) return tokens;
  if (path[0] != '/') throw PointerError{};
  size_t i = 1;
  while (true) {
    size_t slash = path.find('/', i);
    std::string raw = path.substr(i, slash == std::string::npos ? std::string::npos : slash - i);
    std::string tok;
    for (size_t k = 0; k < raw.size(); ++k) {
      if (raw[k] == '~' && k + 1 < raw.size() && (raw[k + 1] == '0' || raw[k + 1] == '1')) {
        tok += raw[k + 1] == '0' ? '~' : '/';
        ++k;
      } else {
        tok += raw[k];
      }
    }
    tokens.push_back(tok);
    if (slash == std::string::npos) break;
    i = slash + 1;
  }
  return tokens;
}

std::optional<size_t> array_index(const std::string& tok) {
  if (tok.empty() || tok.size() > 15) return std::nullopt;
  for (char c : tok)
    if (c < '0' || c > '9') return std::nullopt;
  if (tok.size() > 1 && tok[0] == '0') return std::nullopt;
  return static_cast<size_t>(std::stoull(tok));
}

// The container holding the pointer's last token; throws when the path does not resolve.
Json& pointer_parent(Json& doc, const std::vector<std::string>& tokens) {
  Json* cur = &doc;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (cur->is_object()) {
      auto it = cur->find(tokens[i]);
      if (it == cur->end()) throw PointerError{};
      cur = &*it;
    } else if (cur->is_array()) {
      auto idx = array_index(tokens[i]);
      if (!idx || *idx >= cur->size()) throw PointerError{};
      cur = &(*cur)[*idx];
    } else {
      throw PointerError{};
    }
  }
  return *cur;
}

Json pointer_get(Json& doc, const std::string& path) {
  auto tokens = pointer_tokens(path);
  if (tokens.empty()) return doc;
  Json& parent = pointer_parent(doc, tokens);
  const std::string& last = tokens.back();
  if (parent.is_object()) {
    auto it = parent.find(last);
    if (it == parent.end()) throw PointerError{};
    return *it;
  }
  if (parent.is_array()) {
    auto idx = array_index(last);
    if (!idx || *idx >= parent.size()) throw PointerError{};
    return parent[*idx];
  }
  throw PointerError{};
}

void pointer_add(Json& doc, const std::string& path, Json value) {
  auto tokens = pointer_tokens(path);
  if (tokens.empty()) { doc = std::move(value); return; }
  Json& parent = pointer_parent(doc, tokens);
  const std::string& last = tokens.back();
  if (parent.is_object()) {
    parent[last] = std::move(value);
  } else if (parent.is_array()) {
    if (last == "-") { parent.push_back(std::move(value)); return; }
    auto idx = array_index(last);
    if (!idx || *idx > parent.size()) throw PointerError{};
    parent.insert(parent.begin() + static_cast<std::ptrdiff_t>(*idx), std::move(value));
  } else {
    throw PointerError{};
  }
}

void pointer_remove(Json& doc, const std::string& path) {
  auto tokens = pointer_tokens(path);
  if (tokens.empty()) throw PointerError{};
  Json& parent = pointer_parent(doc, tokens);
  const std::string& last = tokens.back();
  if (parent.is_object()) {
    if (parent.erase(last) == 0) throw PointerError{};
  } else if (parent.is_array()) {
    auto idx = array_index(last);
    if (!idx || *idx >= parent.size()) throw PointerError{};
    parent.erase(*idx);
  } else {
    throw PointerError{};
  }
}

void pointer_replace(Json& doc, const std::string& path, Json value) {
  auto tokens = pointer_tokens(path);
  if (tokens.empty()) { doc = std::move(value); return; }
  Json& parent = pointer_parent(doc, tokens);
  const std::string& last = tokens.back();
  if (parent.is_object()) {
    auto it = parent.find(last);
    if (it == parent.end()) throw PointerError{};
    *it = std::move(value);
  } else if (parent.is_array()) {
    auto idx = array_index(last);
    if (!idx || *idx >= parent.size()) throw PointerError{};
    parent[*idx] = std::move(value);
  } else {
    throw PointerError{};
  }
}

Value json_patch(Args a) {
  auto data = jsonv::from_sql_document(a[0]);
  auto patch = jsonv::from_sql_document(a[1]);
  if (!data || !patch || !patch->is_array()) return Value();
  for (const Json& op : *patch)
    if (!op.is_object() || !op.contains("op") || !op.contains("path")) return Value();
  Json doc = *data;
  try {
    for (const Json& op : *patch) {
      if (!op["op"].is_string() || !op["path"].is_string()) return Value();
      const std::string& name = op["op"].get_ref<const std::string&>();
      const std::string& path = op["path"].get_ref<const std::string&>();
      auto value = [&]() -> Json {
        auto it = op.find("value");
        if (it == op.end()) throw PointerError{};
        return *it;
      };
      auto from = [&]() -> std::string {
        auto it = op.find("from");
        if (it == op.end() || !it->is_string()) throw PointerError{};
        return it->get<std::string>();
      };
      if (name == "add") {
        pointer_add(doc, path, value());
      } else if (name == "remove") {
        pointer_remove(doc, path);
      } else if (name == "replace") {
        pointer_replace(doc, path, value());
      } else if (name == "move") {
        std::string src = from();
        if (path.compare(0, src.size(), src) == 0 && path.size() > src.size() && path[src.size()] == '/')
          throw PointerError{};
        Json moved = pointer_get(doc, src);
        if (src != path) {
          pointer_remove(doc, src);
          pointer_add(doc, path, std::move(moved));
        }
      } else if (name == "copy") {
        pointer_add(doc, path, pointer_get(doc, from()));
      } else if (name == "test") {
        if (jsonv::compare(pointer_get(doc, path), value()) != 0) return Value();
      } else {
        return Value();
      }
    }
  } catch (const PointerError&) {
    return Value();
  }
  return jsonv::to_value(doc);
}

// ---------------------------------------------------------------- aggregates

class JsonGroupArrayState : public AggregateState {
 public:
  void step(Args a) override { items_.push_back(jsonv::from_sql_element(a[0])); }
  Value final() override { return items_.empty() ? Value() : jsonv::to_value(items_); }

 private:
  Json items_ = Json::array();
};

class JsonGroupObjectState : public AggregateState {
 public:
  void step(Args a) override {
    if (a[0].is_null()) return;
    obj_[fnutil::js_string(a[0])] = jsonv::from_sql_element(a[1]);
  }
  Value final() override { return obj_.empty() ? Value() : jsonv::to_value(obj_); }

 private:
  Json obj_ = Json::object();
};

// ---------------------------------------------------------------- json_each / json_tree

// The reference's simplified root-path walk for the table functions: `$`, `$.a.b`, `[n]`.
const Json* eval_basic_path(const Json& data, const std::string& path) {
  if (path.empty() || path == "$") return &data;
  std::string rest = path.rfind("$.", 0) == 0 ? path.substr(2) : (path[0] == '$' ? path.substr(1) : path);
  const Json* cur = &data;
  size_t start = 0;
  while (true) {
    size_t dot = rest.find('.', start);
    std::string part = rest.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (cur == nullptr || cur->is_null()) return nullptr;
    std::string trimmed = part;
    while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.front()))) trimmed.erase(0, 1);
    while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back()))) trimmed.pop_back();
    bool is_index = trimmed.size() > 2 && trimmed.front() == '[' && trimmed.back() == ']' &&
                    trimmed.find_first_not_of("0123456789", 1) == trimmed.size() - 1;
    if (is_index) {
      size_t idx = std::stoull(trimmed.substr(1, trimmed.size() - 2));
      if (!cur->is_array() || idx >= cur->size()) return nullptr;
      cur = &(*cur)[idx];
    } else if (cur->is_object() && cur->contains(part)) {
      cur = &(*cur)[part];
    } else {
      return nullptr;
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur;
}

Value column_value(const Json& j) {
  if (j.is_array() || j.is_object()) return Value::Text(jsonv::text(j));
  return jsonv::to_sql_scalar(j);
}

Value column_atom(const Json& j) {
  if (j.is_array() || j.is_object()) return Value();
  return jsonv::to_sql_scalar(j);
}

Json table_input(std::span<const Value> args, const char* fn) {
  auto data = jsonv::from_sql_document(args[0]);
  if (!data) throw Error(StatusCode::kError, std::string("Error: Invalid JSON provided to ") + fn);
  return *data;
}

const Json* table_root(const Json& data, std::span<const Value> args) {
  if (args.size() > 1 && args[1].type() == ValueType::kText && !args[1].str().empty())
    return eval_basic_path(data, args[1].str());
  return &data;
}

// The JSON path of the walk's root: `$`, or the path argument (fullkey / path columns
// are JSON paths, as in json_extract: `$.users[0].name`).
std::string table_base_path(std::span<const Value> args) {
  if (args.size() > 1 && args[1].type() == ValueType::kText && !args[1].str().empty()) return args[1].str();
  return "$";
}

// The path of a node's parent: its fullkey without the last `.key` / `[i]` step.
std::string parent_path(const std::string& fullkey) {
  size_t cut = fullkey.find_last_of(".[");
  return cut == std::string::npos || cut == 0 ? fullkey.substr(0, 1) : fullkey.substr(0, cut);
}

std::vector<Row> json_each_rows(std::span<const Value> args) {
  if (args.empty() || args[0].is_null()) return {};  // SQL NULL: no document, no rows (SQLite)
  Json data = table_input(args, "json_each");
  const Json* root = table_root(data, args);
  const std::string base = table_base_path(args);
  std::vector<Row> rows;
  if (!root) return rows;
  int64_t id = 0;
  if (root->is_array()) {
    for (size_t i = 0; i < root->size(); ++i) {
      const Json& c = (*root)[i];
      rows.push_back({Value::Integer(static_cast<int64_t>(i)), column_value(c), Value::Text(jsonv::type_name(c)),
                      column_atom(c), Value::Integer(id++), Value(), Value::Text(base + "[" + std::to_string(i) + "]"),
                      Value::Text(base)});
    }
  } else if (root->is_object()) {
    for (auto it = root->begin(); it != root->end(); ++it) {
      const Json& c = it.value();
      rows.push_back({Value::Text(it.key()), column_value(c), Value::Text(jsonv::type_name(c)), column_atom(c),
                      Value::Integer(id++), Value(), Value::Text(base + "." + it.key()), Value::Text(base)});
    }
  } else {
    rows.push_back({Value(), jsonv::to_sql_scalar(*root), Value::Text(jsonv::type_name(*root)),
                    jsonv::to_sql_scalar(*root), Value::Integer(id++), Value(), Value::Text(base),
                    Value::Text(parent_path(base))});
  }
  return rows;
}

// parent_id 0: the walk's root, whose `parent` is NULL.
void tree_walk(const Json& v, const Value& key, const std::string& path, int64_t parent_id, int64_t* next_id,
               std::vector<Row>& rows) {
  int64_t id = ++*next_id;
  std::string fullkey = path;
  if (key.type() == ValueType::kInteger) fullkey += "[" + std::to_string(key.as_int()) + "]";
  else if (key.type() == ValueType::kText) fullkey += "." + key.str();
  // The root row's path is its own parent's (`$` for the whole document).
  const std::string parent = key.is_null() ? parent_path(path) : path;
  rows.push_back({key, column_value(v), Value::Text(jsonv::type_name(v)), column_atom(v), Value::Integer(id),
                  parent_id == 0 ? Value() : Value::Integer(parent_id), Value::Text(fullkey), Value::Text(parent)});
  if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i)
      tree_walk(v[i], Value::Integer(static_cast<int64_t>(i)), fullkey, id, next_id, rows);
  } else if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) tree_walk(it.value(), Value::Text(it.key()), fullkey, id, next_id, rows);
  }
}

std::vector<Row> json_tree_rows(std::span<const Value> args) {
  if (args.empty() || args[0].is_null()) return {};  // SQL NULL: no document, no rows (SQLite)
  Json data = table_input(args, "json_tree");
  const Json* root = table_root(data, args);
  std::vector<Row> rows;
  if (!root) return rows;
  int64_t next_id = 0;
  tree_walk(*root, Value(), table_base_path(args), 0, &next_id, rows);
  return rows;
}

void add_json_table(Registry& r, const char* name, std::vector<Row> (*rows)(std::span<const Value>)) {
  TableFunction f;
  f.name = name;
  f.num_args = 2;
  f.min_args = 1;
  f.flags = fnutil::kPure;
  f.columns = {{"key", QRS_LT_ANY, true},       {"value", QRS_LT_ANY, true},  {"type", QRS_LT_TEXT, false},
               {"atom", QRS_LT_ANY, true},      {"id", QRS_LT_INTEGER, false}, {"parent", QRS_LT_INTEGER, true},
               {"fullkey", QRS_LT_TEXT, false}, {"path", QRS_LT_TEXT, false}};
  f.keys = {{4}};  // `id`: each node of the walked document once
  f.rows = [rows](DatabaseImpl&, std::span<const Value> args) { return rows(args); };
  r.add_table_function(std::move(f), "builtin");
}

}  // namespace

void register_json_functions(Registry& r) {
  add_scalar(r, "json", 1, json_conversion).returns(QRS_LT_JSON);
  add_scalar(r, "json_valid", 1, json_valid).returns(QRS_LT_BOOLEAN);
  add_scalar(r, "json_schema", 2, json_schema);
  add_scalar(r, "json_type", -1, json_type).returns(QRS_LT_TEXT);
  add_scalar(r, "json_extract", -1, json_extract);
  add_scalar(r, "json_quote", 1, json_quote).returns(QRS_LT_TEXT);
  add_scalar(r, "json_array", -1, json_array).returns(QRS_LT_JSON);
  add_scalar(r, "json_object", -1, json_object).returns(QRS_LT_JSON);
  add_scalar(r, "json_array_length", -1, json_array_length).returns(QRS_LT_INTEGER);
  add_scalar(r, "json_insert", -1, [](Args a) { return json_modify(a, Modify::kInsert); }).returns(QRS_LT_JSON);
  add_scalar(r, "json_replace", -1, [](Args a) { return json_modify(a, Modify::kReplace); }).returns(QRS_LT_JSON);
  add_scalar(r, "json_set", -1, [](Args a) { return json_modify(a, Modify::kSet); }).returns(QRS_LT_JSON);
  add_scalar(r, "json_remove", -1, json_remove).returns(QRS_LT_JSON);
  add_scalar(r, "json_patch", 2, json_patch, 0).returns(QRS_LT_JSON);  // non-deterministic in the reference
  add_aggregate(r, "json_group_array", 1, [] { return std::make_unique<JsonGroupArrayState>(); }, fnutil::kPure, QRS_LT_JSON);
  add_aggregate(r, "json_group_object", 2, [] { return std::make_unique<JsonGroupObjectState>(); }, fnutil::kPure, QRS_LT_JSON);
  add_json_table(r, "json_each", json_each_rows);
  add_json_table(r, "json_tree", json_tree_rows);
}

}  // namespace quereus
