// Runtime: the single DML write path (see dml_writer.h).
#include "runtime/dml_writer.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "planner/scalar_expr.h"

namespace quereus {

DmlWriter::DmlWriter(DatabaseImpl& db, std::shared_ptr<TableEntry> table) : db_(db), table_(std::move(table)) {
  db_.join(*table_);
}

Value DmlWriter::coerce(const Value& v, const ColumnSchema& col, const TableSchema& table) {
  if (v.is_null()) return v;
  auto mismatch = [&]() -> Error {
    return Error(StatusCode::kMismatch, "Type conversion failed: cannot store " + std::string(value_type_name(v.type())) +
                                            " value '" + v.to_text() + "' in " + (col.type_name.empty() ? "ANY" : col.type_name) +
                                            " column " + table.name + "." + col.name);
  };
  switch (col.logical_type) {
    case QRS_LT_ANY: return v;
    case QRS_LT_INTEGER:
      switch (v.type()) {
        case ValueType::kInteger: return v;
        case ValueType::kBoolean: return Value::Integer(v.as_int());
        case ValueType::kReal: {
          double d = v.as_real();
          if (std::floor(d) == d && std::fabs(d) < 9.2e18) return Value::Integer(static_cast<int64_t>(d));
          return v;  // keeps its fraction, like SQLite's INTEGER affinity
        }
        case ValueType::kText: {
          Value n = parse_number(v.str(), false);
          if (n.is_null()) throw mismatch();
          return coerce(n, col, table);
        }
        default: throw mismatch();
      }
    case QRS_LT_REAL:
      switch (v.type()) {
        case ValueType::kReal: return v;
        case ValueType::kInteger:
        case ValueType::kBoolean: return Value::Real(static_cast<double>(v.as_int()));
        case ValueType::kText: {
          Value n = parse_number(v.str(), false);
          if (n.is_null()) throw mismatch();
          return Value::Real(n.to_double());
        }
        default: throw mismatch();
      }
    case QRS_LT_NUMERIC:
      switch (v.type()) {
        case ValueType::kReal:
        case ValueType::kInteger: return v;
        case ValueType::kBoolean: return Value::Integer(v.as_int());
        case ValueType::kText: {
          Value n = parse_number(v.str(), false);
          if (n.is_null()) throw mismatch();
          return n;
        }
        default: throw mismatch();
      }
    case QRS_LT_TEXT:
      if (v.type() == ValueType::kText) return v;
      if (v.type() == ValueType::kBlob) throw mismatch();
      return Value::Text(v.to_text());
    case QRS_LT_BLOB:
      if (v.type() == ValueType::kBlob) return v;
      throw mismatch();
    case QRS_LT_BOOLEAN:
      try {
        return cast_value(v, QRS_LT_BOOLEAN);
      } catch (const Error&) {
        throw mismatch();
      }
    case QRS_LT_JSON: {
      if (v.type() == ValueType::kJson) return v;
      if (v.type() == ValueType::kText) {
        auto j = nlohmann::json::parse(v.str(), nullptr, false);
        if (j.is_discarded()) {
          // A bare string is a JSON string scalar.
          return Value::Json(nlohmann::json(v.str()).dump());
        }
        return Value::Json(j.dump());
      }
      if (v.type() == ValueType::kInteger) return Value::Json(std::to_string(v.as_int()));
      if (v.type() == ValueType::kReal) return Value::Json(format_real(v.as_real()));
      if (v.type() == ValueType::kBoolean) return Value::Json(v.as_bool() ? "true" : "false");
      throw mismatch();
    }
    default:
      if (v.type() == ValueType::kText) return v;
      return Value::Text(v.to_text());
  }
}

void DmlWriter::prepare_row(Row& row) {
  const TableSchema& ts = table_->schema;
  if (row.size() != ts.columns.size()) throw Error(StatusCode::kInternal, "row width mismatch");
  for (size_t i = 0; i < row.size(); ++i) {
    const ColumnSchema& col = ts.columns[i];
    row[i] = coerce(row[i], col, ts);
    if (row[i].is_null() && col.not_null)
      throw Error(StatusCode::kConstraint, "NOT NULL constraint failed: " + ts.name + "." + col.name);
  }
}

Row DmlWriter::key_of(const Row& row) const {
  Row key;
  for (auto& k : table_->schema.primary_key) key.push_back(row[k.column]);
  return key;
}

std::string DmlWriter::unique_message() const {
  const TableSchema& ts = table_->schema;
  std::string cols;
  for (auto& k : ts.primary_key) {
    if (!cols.empty()) cols += ", ";
    cols += ts.name + "." + ts.columns[k.column].name;
  }
  return "UNIQUE constraint failed: " + (cols.empty() ? ts.name : cols);
}

std::optional<Row> DmlWriter::handle(const UpdateResult& r, ConflictAction action) {
  switch (r.outcome) {
    case UpdateResult::Outcome::kOk: return r.row ? r.row : std::optional<Row>(Row{});
    case UpdateResult::Outcome::kNoop: return std::nullopt;
    case UpdateResult::Outcome::kConstraint:
      if (action == ConflictAction::kIgnore) return std::nullopt;
      switch (r.constraint_kind) {
        case QRS_CONSTRAINT_UNIQUE: throw Error(StatusCode::kConstraint, unique_message());
        case QRS_CONSTRAINT_NOT_NULL: throw Error(StatusCode::kConstraint, "NOT NULL constraint failed: " + table_->schema.name);
        case QRS_CONSTRAINT_CHECK: throw Error(StatusCode::kConstraint, "CHECK constraint failed: " + table_->schema.name);
        default: throw Error(StatusCode::kConstraint, "FOREIGN KEY constraint failed: " + table_->schema.name);
      }
  }
  return std::nullopt;
}

std::optional<Row> DmlWriter::insert(Row row, ConflictAction action) {
  prepare_row(row);
  UpdateResult r = table_->table->update(RowOp::kInsert, row, {}, action);
  auto out = handle(r, action);
  if (out && out->empty()) return row;
  return out;
}

std::optional<Row> DmlWriter::update(const Row& old_row, Row new_row, ConflictAction action) {
  prepare_row(new_row);
  Row key = key_of(old_row);
  UpdateResult r = table_->table->update(RowOp::kUpdate, new_row, key, action);
  auto out = handle(r, action);
  if (out && out->empty()) return new_row;
  return out;
}

std::optional<Row> DmlWriter::remove(const Row& old_row) {
  Row key = key_of(old_row);
  UpdateResult r = table_->table->update(RowOp::kDelete, {}, key, ConflictAction::kAbort);
  auto out = handle(r, ConflictAction::kAbort);
  if (out) return old_row;
  return out;
}

}  // namespace quereus
