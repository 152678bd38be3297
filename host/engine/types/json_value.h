// JSON helpers shared by the json_* functions and available to the rest of the engine:
// the text and canonical (hash-key) forms of Value::Json, SQL value ↔ JSON conversions with the
// reference's rules, JSON paths, and the structural comparison of JSON values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "types/json_object_map.h"
#include "types/value.h"

namespace quereus::jsonv {

// Objects keep their members in insertion order, as the reference's native objects do:
// a parsed document in the order written, a built one in the order its keys were first
// set (IndexedOrderedMap). Equality, order and hashing never depend on that order:
// compare() and canonical() sort the keys.
using Json = nlohmann::basic_json<IndexedOrderedMap>;

// Parses JSON source text (RFC 8259, what JSON.parse accepts) and normalizes numbers the
// way a JavaScript engine sees them: an integral float within ±2^53 becomes an integer,
// so `1.0` and `1` are the same value. nullopt when the text is not JSON, or when its
// arrays and objects nest deeper than kMaxDepth (SQLite's JSON_MAX_DEPTH): every JSON
// value the functions see is parsed here, so no deeper value is ever built.
inline constexpr int kMaxDepth = 1000;
std::optional<Json> parse(std::string_view text);

// The canonical text of a JSON value: no whitespace, object keys sorted, numbers printed
// as JavaScript prints them (1, 0.1, 1e+21), non-finite numbers as null. Two values are
// structurally equal exactly when their canonical texts are equal: it is the hash key,
// never what a user sees. A Value::Json's text is not canonical (it keeps key order):
// compare and hash structurally.
std::string canonical(const Json& j);

// The text of a JSON value as stored and displayed (JSON.stringify): canonical() except
// that object members keep their order.
std::string text(const Json& j);

// A JSON result as an SQL value: JSON null → NULL, anything else → Value::Json(text).
Value to_value(const Json& j);

// JSON source text as the document a JSON column or json() holds: its objects keep the
// keys in the order written (types.md, "Value to text": storage and display keep the
// document's own order; equality and order stay structural), numbers as canonical()
// prints them. JSON null → NULL; nullopt when the text is not JSON.
std::optional<Value> document_value(std::string_view source);

// The JSON document an SQL argument denotes for the json_* functions (coerceToJsonValue):
// NULL → JSON null; TEXT → parsed source (nullopt when not JSON); JSON → itself;
// numbers and booleans → themselves (an integer past int64 → the string of its digits, as
// the reference keeps a bigint); BLOB → nullopt.
std::optional<Json> from_sql_document(const Value& v);

// An SQL value stored into a JSON container (prepareJsonValue): TEXT that parses as JSON
// becomes that JSON, other TEXT a string; BLOB, NaN and ±Infinity become null; an integer
// past int64 becomes the string of its digits.
Json from_sql_element(const Value& v);

// An extracted JSON value handed back to SQL: null → NULL, boolean → BOOLEAN, numbers
// → INTEGER/REAL, strings → TEXT, arrays/objects → Value::Json.
Value to_sql_scalar(const Json& j);

// SQLite's json_type names: null, true, false, integer, real, text, array, object.
const char* type_name(const Json& j);

// Deep comparison, the reference's JSON ordering: null < boolean < number < string <
// array < object; arrays element-wise then by length; objects by sorted key list, then
// by values in key order (member order is not significant). Returns -1, 0 or 1.
int compare(const Json& a, const Json& b);
// compare() over canonical texts (for Value::Json operands); texts that do not parse
// compare bytewise.
int compare_text(std::string_view a, std::string_view b);

// ---------------------------------------------------------------- paths

// Where a path points inside a document (resolveJsonPathForModify).
struct PathTarget {
  Json* parent = nullptr;               // null for the root
  std::variant<std::string, size_t> key;  // object key or array index; "" for the root
  Json* value = nullptr;                // null when the target does not exist
  bool is_root = false;
};

// Resolves `$`, `$.a.b`, `$."a.b"`, `$[0]`, `$.a[1].b` (a leading `$` is optional;
// `[#]` and `[#-N]` count from the end of an array). nullopt for a malformed path or
// one that runs through a missing / null container.
std::optional<PathTarget> resolve(Json& doc, std::string_view path);

}  // namespace quereus::jsonv
