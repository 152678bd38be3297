// Column lineage: where each output column of a plan comes from, on top of the
// relational properties (properties.h). The one service the update-site model (view
// writes, view_info(), column_info()), materialized-view delta rules and the lens prover
// read — docs/design-lineage.md.
//
// derive_lineage() walks a logical plan (as the planner builds it, before the optimizer
// reorders joins) bottom-up. Lineage survives only the structure-preserving operators —
// scans, filters, projections, joins, sorts and semi joins; an aggregate, DISTINCT, a set
// operation, a window, LIMIT, VALUES or a table function makes every column computed and
// hides the scans below it (the reference's "surface authority").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "planner/properties.h"
#include "planner/rel_node.h"
#include "types/value.h"

namespace quereus {

struct TableEntry;

// One step of an inverse: applied to a value written through the column, in order, the
// steps give the value to store in the base column (vu-inverses.md, the built-in
// profiles: ±k, negation, identity casts and collations; and the profiles functions
// declare — ScalarFunction::invertibility, from plugins through the SDK).
struct InverseStep {
  enum class Op {
    kSubtract,      // v - k   (the column reads base + k)
    kAdd,           // v + k   (the column reads base - k)
    kFromConstant,  // k - v   (the column reads k - base)
    kNegate,        // -v      (the column reads -base)
    kFunction,      // g(v, a…) (the column reads f(…, base, …) and f declares inverse g)
  };
  Op op = Op::kNegate;
  Value constant;  // k
  // kFunction: g's name and f's other arguments, in order (constants at the view).
  std::string function;
  std::vector<Value> args;
};

struct ColumnLineage {
  enum class Kind {
    kBase,       // a base column of one scan, through an invertible chain (empty: identity)
    kComputed,   // anything else: read-only
    kExistence,  // an outer join's existence flag (`exists right as hasB`)
  };
  Kind kind = Kind::kComputed;
  int scan = -1;    // kBase: index into RelLineage::scans; kExistence: the flagged side's first scan
  int column = -1;  // kBase: the column of that scan's table
  std::vector<InverseStep> inverse;
  bool null_extended = false;  // its scan is the null-padded side of an outer join
  const ScalarExpr* expr = nullptr;  // the projecting expression (null for a bare pass-through)
};

// One table scan under the node, in left-to-right (FROM) order.
struct ScanLineage {
  std::shared_ptr<TableEntry> table;
  // Output position of each of the table's columns (-1: projected away).
  std::vector<int> positions;
  // Its columns' positions in the row below the plan's outermost projection (the source
  // row, where no column of a top-level scan has been projected away yet).
  std::vector<int> source_positions;
  bool padded = false;  // the null-extended side of an outer join
  // The table's keys in its own column numbering: the primary key first, then every
  // non-partial UNIQUE index over NOT NULL columns.
  std::vector<std::vector<int>> keys;
};

// Two scan columns an ON clause equates (`a.x = b.y`), from every join, outer joins
// included — the columns a write through the join keeps equal.
struct JoinEquality {
  int left_scan = -1, left_column = -1;
  int right_scan = -1, right_column = -1;
};

// What the plan's outermost projection reads for one output column: a slot of the source
// row (the projection's input) through its own invertible chain, or nothing (-1) when the
// term is computed there. Without an outermost projection, output i reads slot i.
struct SourceRead {
  int slot = -1;
  std::vector<InverseStep> inverse;
};

struct RelLineage {
  RelProperties properties;         // of the output
  // Of the source row (see ScanLineage::source_positions), over the match relation (outer
  // joins counted as inner: derive_match_properties) — for the pairwise key questions.
  RelProperties source_properties;
  std::vector<ColumnLineage> columns;  // one per output column
  std::vector<ScanLineage> scans;
  std::vector<JoinEquality> join_equalities;
  std::vector<SourceRead> reads;  // one per output column

  // True when every row of scan `owner` meets at most one value of scan `partner`'s
  // column `partner_column` (the pairwise "joins at most one" of a key-preserving write):
  // in the source row, some key of the owner determines that column.
  bool owner_determines(int owner, int partner, int partner_column) const;
  // True when the output rows correspond one-to-one with rows of scan `s`: one of its keys
  // is unique in the source row.
  bool key_preserved(int s) const;
  // A compact JSON rendering, for query_plan().
  std::string to_json() const;
};

RelLineage derive_lineage(const RelNode& root);

}  // namespace quereus
