// Plan-time logical types (qrs_logical_type): the classifications the planner's typing
// and comparison coercion read (docs: types, types-inference).
#pragma once

#include "quereus/abi.h"

namespace quereus {

// The type's SQL name: "INTEGER", "REAL", …; "ANY" for ANY and unknown tags.
inline const char* logical_type_name(uint32_t t) {
  switch (t) {
    case QRS_LT_INTEGER: return "INTEGER";
    case QRS_LT_REAL: return "REAL";
    case QRS_LT_TEXT: return "TEXT";
    case QRS_LT_BLOB: return "BLOB";
    case QRS_LT_BOOLEAN: return "BOOLEAN";
    case QRS_LT_JSON: return "JSON";
    case QRS_LT_NUMERIC: return "NUMERIC";
    case QRS_LT_DATE: return "DATE";
    case QRS_LT_TIME: return "TIME";
    case QRS_LT_DATETIME: return "DATETIME";
    case QRS_LT_TIMESPAN: return "TIMESPAN";
    default: return "ANY";
  }
}

inline bool is_numeric_type(qrs_logical_type t) {
  return t == QRS_LT_INTEGER || t == QRS_LT_REAL || t == QRS_LT_NUMERIC;
}

// Numeric, or not known until a value is seen (ANY, which also types NULL).
inline bool is_numeric_or_unknown_type(qrs_logical_type t) { return is_numeric_type(t) || t == QRS_LT_ANY; }

inline bool is_temporal_type(qrs_logical_type t) {
  return t == QRS_LT_DATE || t == QRS_LT_TIME || t == QRS_LT_DATETIME || t == QRS_LT_TIMESPAN;
}

// The type of a position fed by two branches with neither converted (CASE arms, set
// operations, coalesce): identical types keep theirs, two numerics merge to NUMERIC,
// anything else is ANY.
inline qrs_logical_type merge_branch_types(qrs_logical_type a, qrs_logical_type b) {
  if (a == b) return a;
  if (is_numeric_type(a) && is_numeric_type(b)) return QRS_LT_NUMERIC;
  return QRS_LT_ANY;
}

}  // namespace quereus
