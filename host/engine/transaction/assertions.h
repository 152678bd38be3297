// CREATE ASSERTION: database-wide integrity rules (docs/foreign-keys.md, "Assertions").
// An assertion is a catalog object beside tables and views: a CHECK expression over the
// whole database, evaluated at COMMIT (at the end of an autocommit statement) when the
// transaction wrote a table its body reads (or always, for a body that reads none).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "parser/ast.h"
#include "catalog/ddl_origin.h"
#include "planner/rel_node.h"

namespace quereus {

class TransactionContext;
struct ExecContext;
struct TableEntry;
struct TableSchema;

// A relation an assertion body reaches, with the views it goes through on the way.
// A view or maintained table a reference passes through.
struct PathStep {
  bool maintained = false;  // a maintained table (its derivation's body), else a view
  std::string schema;
  std::string name;
};

// A violated assertion, collected instead of thrown (docs/mv-ingestion.md, report mode):
// its name and up to five rows of its violation query.
struct AssertionViolation {
  std::string assertion;
  std::vector<std::vector<Value>> samples;
};

struct AssertionReference {
  bool is_view = false;
  std::string schema;  // lower-case
  std::string name;    // catalog spelling
  std::vector<std::string> through;  // e.g. "view 'v1'", outermost first
  // The views and maintained tables on that path, outermost first.
  std::vector<PathStep> path = {};
};

// Plans the body of every view and maintained table on `r`'s path (throws what planning
// throws): a change that breaks one breaks what reads through it.
void plan_path_bodies(TransactionContext& db, const AssertionReference& r);

// " through view 'a' -> view 'b'" for a reference reached through views; "" otherwise.
std::string describe_view_chain(const AssertionReference& r);

// The relations expression `e` (owned by schema `home`) reaches — directly and through
// view bodies — as an assertion body's are collected.
std::vector<AssertionReference> expression_references(TransactionContext& db, const ast::Expr& e,
                                                      const std::string& home);

// The most direct reference of `refs` to table `schema`.`name` (fewest views on the way);
// null when none reaches it.
const AssertionReference* table_reference(const std::vector<AssertionReference>& refs, const std::string& schema,
                                          const std::string& name);

// Runs `plan` while `t` is narrowed to `narrowed` (ALTER TABLE … DROP COLUMN), restoring
// the live schema whatever happens. Returns the planning error's message, "" when `plan`
// succeeded: a dependent that no longer plans against the narrowed table reads the column
// (as scope-aware as name resolution itself).
std::string plan_failure_when_narrowed(TableEntry& t, const TableSchema& narrowed, const std::function<void()>& plan);

struct AssertionEntry {
  std::string schema_name;  // lower-case
  std::string name;
  std::shared_ptr<const ast::Expr> check;  // the CHECK expression, owned
  std::string violation_sql;               // select 1 where not (<check>)
  std::vector<AssertionReference> references;  // direct and through views
  // The violation query, planned against the current schema (re-planned when it moves).
  RelPtr plan;
  uint64_t planned_version = 0;
  std::string qualified_name() const { return schema_name + "." + name; }
};

// The statement that creates `a` as it stands (schema-qualified, canonical): what the
// catalog stores and what the schema event carries.
std::string assertion_ddl(const AssertionEntry& a);

// Plans (and optimizes) the assertion's violation query against the current schema.
RelPtr plan_assertion_violation(TransactionContext& db, const AssertionEntry& a);

class Assertions {
 public:
  void create(TransactionContext& db, const ast::CreateAssertionStmt& s, DdlOrigin origin = DdlOrigin::kStatement);
  void drop(TransactionContext& db, const ast::DropStmt& s);
  // Throws "Integrity assertion failed: <name>" for the first assertion that does not
  // hold; `written` are the tables the transaction wrote.
  // `collect` non-null (the ingestion seam's report mode): every violated assertion is
  // appended to it instead of the first throwing.
  void check(TransactionContext& db, const std::vector<TableEntry*>& written,
             std::vector<AssertionViolation>* collect = nullptr);
  // Refuses to drop a table / view an assertion reads (directly or through views).
  void guard_drop(const std::string& kind, const std::string& schema, const std::string& name) const;
  // Refuses to narrow `t` to `narrowed` (ALTER TABLE … DROP COLUMN `column`) when an
  // assertion reaching `t` (directly or through views) would no longer plan against it:
  // each such body is planned against the narrowed table, so the check is exactly as
  // scope-aware as name resolution itself.
  void guard_column_drop(TransactionContext& db, TableEntry& t, const TableSchema& narrowed,
                         const std::string& column) const;
  // Replaces an assertion's CHECK expression (a RENAME rewrote it): the violation query
  // and the relations it reaches follow, and it is planned again when next checked.
  void set_check(TransactionContext& db, AssertionEntry& a, std::unique_ptr<ast::Expr> check);
  const std::vector<std::shared_ptr<AssertionEntry>>& list() const { return list_; }
  // Removes an assertion without the checks of DROP (a failed statement's reload).
  void forget(const std::string& schema, const std::string& name);

 private:
  std::shared_ptr<AssertionEntry> find(const std::string& schema, const std::string& name) const;
  std::vector<std::shared_ptr<AssertionEntry>> list_;
};

}  // namespace quereus
