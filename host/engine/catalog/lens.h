// A logical table's lens slot (docs/lenses.md, spec/lens.md "The Lens Slot"): what the
// lens compiler decided for one table of a logical schema — the effective body over the
// basis (registered as the logical table's view), how each logical column is mapped, the
// logical constraints attached to the basis writes, and the prover's verdicts. Built once
// per APPLY SCHEMA of the logical schema (rewrite/lens_compiler.h); immutable after.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace quereus {

namespace ast {
struct CreateTableStmt;
struct Expr;
}  // namespace ast

// The deployment snapshot (spec/lens.md "The lens deployment snapshot"): per logical
// table the compiled get body, the logical columns, and per basis relation the (basis
// column → logical column) pairs it backs. Handed to every module after a logical apply
// (SDK 1.6 notify_lens_deployment) and diffed by quereus_basis_backfill().
struct LensRelationBacking {
  std::string schema;  // lower-case
  std::string table;
  std::vector<std::pair<std::string, std::string>> columns;  // basis column → logical column
};
struct LensTableSnapshot {
  std::string logical_table;
  std::string get_body;
  std::vector<std::string> logical_columns;
  std::vector<LensRelationBacking> relations;
};
struct LensDeploymentSnapshot {
  std::string logical_schema;
  std::string basis_schema;
  std::string basis_hash;
  std::vector<LensTableSnapshot> tables;
};

// One logical column's resolved disposition (quereus_effective_lens()).
struct LensColumn {
  std::string name;     // the logical column, declaration casing
  bool covered = false; // 'override' (the lens body names it) or 'default' (gap-filled)
  enum class Inverse { kInferred, kAuthored, kNone } inverse = Inverse::kNone;
  std::string member;   // the advertised basis member backing it ("" without an advertisement)
  // The basis column it writes (identity or an invertible term), "" when computed.
  std::string basis_table;  // lower-case "schema.table" of that column's relation
  std::string basis_column;
};

// A logical constraint carried down to a basis write: a CHECK the lowered write on
// `table` evaluates over its written row (`new.<basis column>`), alongside the basis
// table's own. A subquery inside defers it to COMMIT like any CHECK with one.
struct LensCheck {
  std::string table;  // lower-case "schema.table" of the basis relation whose writes carry it
  std::string name;   // the logical constraint's name, quoted in the violation message
  std::string text;   // the logical expression as declared (the message's text)
  std::shared_ptr<const ast::Expr> expr;  // over the basis row: new.<col> / old.<col>
  bool on_insert = true;
  bool on_update = true;
  bool on_delete = false;
  // The count enforcing a logical PRIMARY KEY / UNIQUE nothing in the basis answers
  // (lens.no-backing-index): it runs at COMMIT and can only abort, so an INSERT asking to
  // resolve a conflict on this key (OR IGNORE / OR REPLACE / REPLACE INTO, an upsert whose
  // target is the key or absent) is refused when planned (rewrite/view_writes.cc).
  bool commit_time_key = false;
  std::vector<std::string> key_columns;  // the key's logical columns (empty: `primary key ()`)
  // A logical foreign key's check (child side: the parent exists; parent side: no child
  // is left referencing): planned only while pragma foreign_keys is on, as a physical
  // key is enforced (lens.md "Foreign key").
  bool foreign_key = false;
};

// A propagating parent-side action of a logical foreign key (ON DELETE / ON UPDATE
// CASCADE, SET NULL, SET DEFAULT) whose parent is this slot's table: a write through the
// logical parent issues the propagating write against the logical child (rewrite/
// view_writes.cc), so the child's own lens constraints and its own cascades apply.
//
// kRestrict: the logical key is NO ACTION / RESTRICT but a basis foreign key onto the
// parent's member propagates the write (a divergent basis action): the children are
// checked before the parent's writes, so the basis cascade cannot hide them from the
// logical check (the logical action wins).
struct LensCascade {
  enum class Action { kNone, kCascade, kSetNull, kSetDefault, kRestrict };
  std::string child;                        // the logical child table, declaration casing
  std::vector<std::string> child_columns;   // pairwise with parent_columns
  std::vector<std::string> parent_columns;
  Action on_delete = Action::kNone;
  Action on_update = Action::kNone;
  std::vector<std::string> defaults;        // per child column: its DEFAULT as SQL ("": NULL)
  bool self = false;                        // the child is the parent table itself
};

struct LensSlot {
  std::string logical_schema;  // lower-case
  std::string table;           // declaration casing
  std::string basis_schema;    // lower-case
  std::shared_ptr<const ast::CreateTableStmt> spec;  // the logical declaration
  std::vector<LensColumn> columns;  // declaration order
  std::string anchor;           // the advertised decomposition's anchor ("" when none)
  // The decomposition's entity-attribute-value members: read as correlated subqueries,
  // their triples go with the anchor row on DELETE.
  struct EavMember {
    std::string schema, table;         // the pivot relation
    std::string entity, attribute;     // its entity and attribute columns
    std::string value;                 // its value column
    std::string anchor_key;            // the anchor column the entity column stitches to
    std::vector<std::string> columns;  // the logical columns (= attributes) it backs
    // A surrogate shared key: the entity is the anchor's surrogate, not the logical key.
    // A write finds it through the anchor column that backs the one-column logical key
    // (`key_backing`; empty: the logical key is not on the anchor, writes are refused).
    bool surrogate = false;
    std::string anchor_schema, anchor_table, key_backing;
  };
  std::vector<EavMember> eav;
  // Auxiliary access (spec/lens.md "Auxiliary-access read-path routing";
  // docs/decompositions.md): a read-only structure an auxiliary-access advertisement
  // names, keyed like the anchor, answering predicates of `forms` over logical `column`.
  // A read whose WHERE holds such a predicate starts from the auxiliary (Planner::plan_view).
  struct AuxRoute {
    std::string id;                // the advertisement's id (several match: the least id)
    std::string schema, table;     // the auxiliary relation
    std::string column;            // the logical column
    std::string aux_column;        // its column in the auxiliary
    std::vector<std::string> forms;  // lower-case form names
    std::vector<std::pair<std::string, std::string>> key;  // auxiliary key column → anchor key column
    std::string anchor_qualifier;  // the anchor's qualifier in the body
  };
  std::vector<AuxRoute> aux_routes;
  // The inclusion dependencies the decomposition's advertisement implies (spec/lens.md
  // "The existence-anchor inclusion-dependency contract"): every anchor key has a row of
  // each mandatory member, keyed 1:1. One per mandatory non-anchor member (optional and
  // EAV members, and the keyless singleton, imply none). A read that uses none of such a
  // member's columns skips its join (Planner::plan_view).
  struct InclusionDependency {
    std::string qualifier;             // the member's qualifier in the body
    std::string schema, table;         // the member relation
    std::vector<std::string> key;      // its shared-key columns
    std::vector<std::string> anchor_key;
    std::vector<std::string> columns;  // the logical columns it backs
  };
  std::vector<InclusionDependency> inds;
  std::string effective_sql;    // the compiled body, basis-qualified
  // Writes are refused (the primary key is not reconstructible at the boundary): why.
  std::string read_only;
  std::vector<LensCheck> checks;
  std::vector<LensCascade> cascades;
  // Logical keys the prover proved that the body's own facts do not show (a key over a
  // column read through a bijective authored inverse): the logical columns (all NOT
  // NULL), the basis table the proof read and its facts then (key_proof_facts: columns,
  // nullability, key, CHECKs). A read through the table asserts a key only while the
  // basis still has those facts (spec/lens.md "FD contribution to the optimizer";
  // Planner::plan_view).
  struct AssertedKey {
    std::vector<std::string> columns;
    std::string basis_schema, basis_table;
    std::string facts;
  };
  std::vector<AssertedKey> asserted_keys;
  LensTableSnapshot snapshot;  // this table's part of the deployment snapshot
};

// One finding of the lens prover (spec/lens.md "Coverage checklist"): coded, sited, an
// error (blocks the deploy) or an advisory (a warning, governed by acknowledgement tags
// and the table's escalation policy).
struct LensAdvisory {
  std::string table;       // the logical table
  std::string code;        // lens.*
  std::string constraint;  // the constraint's name ("primary key", "unique" when unnamed); "" when none
  std::string column;      // "" when none
  std::string message;
  bool error = false;
  std::string facts;        // what the fingerprint digests
  // Governance (advisories only): active | re-surfaced | acknowledged |
  // acknowledged-unconditional, the ack's rationale, and the fingerprints.
  std::string status = "active";
  std::string rationale;
  std::string fingerprint;
  std::string recorded;
};

// The last successful APPLY SCHEMA of one logical schema.
struct LensDeployment {
  std::string basis;  // lower-case
  std::vector<std::shared_ptr<const LensSlot>> slots;  // declaration order
  std::vector<LensAdvisory> advisories;  // warnings only (errors block the deploy)
  std::shared_ptr<const LensDeployment> previous;  // the deploy before it (one level)
  // What was applied, as stored: the declarations' text and `apply schema x`.
  std::string applied_text;
  LensDeploymentSnapshot snapshot;
  // Per module notified (registration order): how many snapshot relations it backs.
  std::vector<std::pair<std::string, uint32_t>> notified;
};

}  // namespace quereus
