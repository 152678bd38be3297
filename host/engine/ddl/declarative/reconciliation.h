// Open-time structural reconciliation, the policy half (shared/spec/schema-reconciliation.md,
// docs/reconciliation.md): given the tables the store holds, the tables the deployment
// declares, the recorded structural history and the operator's intents (YAML `migrate:`),
// decide what happens to every table — or refuse, naming the table and the YAML lines
// that would authorize each choice. Nothing here touches a database: main/reconciliation.cc
// carries the plan out inside one schema-change scope.
//
// Vocabulary: a table's *identity* is its `quereus.id` tag (none when untagged); a *prior*
// table is one the store holds in a schema the declaration or the history covers; a
// *dormant* table is one an earlier open preserved (rows kept, invisible).
#pragma once

#include <set>
#include <string>
#include <vector>

namespace quereus {

// Where an intent was written: "config/app.yaml:14" and its key path
// ("databases.main.migrate.rename.legacy"), for errors.
struct IntentOrigin {
  std::string where;
  std::string key;
};

// The structural migration intents of one database (YAML `databases.<name>.migrate`).
// Table references are "table" (schema main) or "schema.table", compared case-blind.
struct StructuralIntent {
  struct Rename {
    std::string from, to;  // a prior table → the declared table that continues it
    IntentOrigin origin;
  };
  struct Named {
    std::string table;
    IntentOrigin origin;
  };
  struct Retag {
    std::string table;        // the declared (current) name
    std::string previous_id;  // the identity the stored table carries now
    IntentOrigin origin;
  };
  // A data repair run once (by name) after the current tables exist and before the
  // declared indexes and constraints are materialized.
  struct Prepare {
    std::string name;
    std::string sql;
    IntentOrigin origin;
  };
  std::vector<Rename> renames;
  std::vector<Named> drops, preserves;
  std::vector<Retag> retags;
  std::vector<Prepare> prepare_constraints;
  // The YAML file holding the block ("" when given through the API), and its line.
  std::string file;
  std::string where;

  bool empty() const {
    return renames.empty() && drops.empty() && preserves.empty() && retags.empty() && prepare_constraints.empty();
  }
};

// One schema file of a database (YAML `databases.<name>.schema`): DECLARE SCHEMA /
// DECLARE LENS statements applied at open.
struct DeclaredSchemaFile {
  std::string path;    // as resolved (for messages)
  std::string text;    // its contents
  std::string origin;  // where the YAML names it ("config/app.yaml:9")
};

// A table as reconciliation sees it (names lower-case).
struct TableIdentity {
  std::string schema, name;
  std::string id;  // the quereus.id tag; "" when untagged
  std::string qualified() const { return schema + "." + name; }
};

// What the store records about its declared shape, written last by every reconciling open
// (catalog entry "structure:history", invisible to queries).
struct StructuralHistory {
  std::vector<TableIdentity> active;   // the declared tables as of the last reconciliation
  std::vector<TableIdentity> dormant;  // preserved tables
  std::set<std::string> schemas;       // the declared schemas (lower-case)
  std::set<std::string> prepared;      // prepare_constraints steps that ran
  std::vector<std::string> applied;    // intents carried out, canonical ("rename main.a main.b")

  std::string encode() const;
  // Throws CORRUPT naming the problem when `text` is not a history this build reads.
  static StructuralHistory decode(const std::string& text);
};

struct ReconcileInputs {
  std::string database;                  // the database's name (for YAML paths)
  std::vector<TableIdentity> live;       // stored (active) plain tables in the covered schemas
  std::vector<TableIdentity> dormant;    // preserved tables (their catalog entries)
  std::vector<TableIdentity> declared;   // the declared plain tables
  std::set<std::string> declared_schemas;
  const StructuralHistory* history = nullptr;  // null: none recorded yet
  const StructuralIntent* intent = nullptr;    // null: no migrate block
};

struct ReconcilePlan {
  struct Rename {
    TableIdentity from;
    std::string to;  // the declared name (same schema)
  };
  struct Retag {
    TableIdentity table;  // as stored (after a rename: under its new name)
    std::string id;       // the declared identity
  };
  std::vector<Rename> renames;
  std::vector<TableIdentity> drops, preserves, reactivations;
  std::vector<Retag> retags;  // authorized identity changes, and first taggings
  std::vector<const StructuralIntent::Prepare*> prepare;  // steps to run, in YAML order
  std::vector<std::string> applied;  // canonical intents carried out by this open
  bool empty() const {
    return renames.empty() && drops.empty() && preserves.empty() && reactivations.empty() && retags.empty() &&
           prepare.empty();
  }
};

// Decides. Throws Error CONFIG for an intent that is contradictory or does not match the
// structural diff (naming its YAML file, line and key), SCHEMA for a difference that needs
// an intent the YAML does not give (naming the table and the YAML lines that would
// authorize each choice). Intents an earlier open already carried out (recorded in the
// history) are accepted as done.
ReconcilePlan plan_reconciliation(const ReconcileInputs& in);

// A table reference as the YAML migrate: block writes it: `t` → {"main", "t"}, `s.t` →
// {"s", "t"}, lower-cased; either part may be in SQL double quotes (`"my.table"`,
// `s."odd name"`, `""` for a quote inside) to hold a dot or other punctuation.
std::pair<std::string, std::string> split_table_ref(const std::string& ref);
// Its dot-separated parts, unquoted (one part: an unqualified name).
std::vector<std::string> table_ref_parts(const std::string& ref);

}  // namespace quereus
