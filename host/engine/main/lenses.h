// Logical schemas and lenses (docs/lenses.md; spec/lens.md). A logical schema declares
// tables with no storage; a lens maps each logical table onto basis tables. APPLY SCHEMA
// of a logical schema is a compile step: every table's effective body is composed (the
// default mapper, a module advertisement read from `quereus.lens.decomp.*` tags, and the
// author's sparse override), the prover checks that the body realizes the logical
// declaration, and only then — all tables at once — the logical tables are registered as
// views carrying their lens slot (catalog/lens.h). Nothing of a lens runs at query time:
// reads are view reads, writes are view writes (rewrite/view_writes.h), which carry the
// logical constraints down as attached CHECKs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "catalog/ddl_origin.h"
#include "catalog/lens.h"
#include "catalog/tag_set.h"
#include "parser/ast.h"
#include "runtime/executable.h"

namespace quereus {

class DatabaseImpl;
class Registry;
struct ViewEntry;

namespace ast {
struct CreateTableStmt;
struct DeclareLensStmt;
struct DeclareSchemaStmt;
}  // namespace ast

// DECLARE LENS FOR x OVER y { VIEW t AS … }: records the block (replacing x's previous
// one; it is read again at every APPLY SCHEMA x) and persists it.
void declare_lens(DatabaseImpl& db, const ast::DeclareLensStmt& s, DdlOrigin origin = DdlOrigin::kStatement);
std::unique_ptr<Executable> plan_declare_lens(DatabaseImpl& db, const ast::DeclareLensStmt& s);

// APPLY SCHEMA x where x is a declared logical schema: compile, prove, deploy. Atomic: a
// blocked deploy (any lens.* error) changes nothing. From the stored catalog (reopen) the
// deploy is rebuilt without being persisted again.
void apply_logical_schema(DatabaseImpl& db, const std::string& name, DdlOrigin origin = DdlOrigin::kStatement);
// The stored form of an apply: the logical declaration and the lens block as they were
// applied, then `apply schema x` — so a reopen rebuilds exactly what was deployed, even
// when a later DECLARE was not applied. `statements` is that text parsed.
void replay_logical_apply(DatabaseImpl& db, const std::vector<ast::StatementPtr>& statements);
// After a logical apply's schema change is durable: hands the deployment snapshot to
// every module the database has opened (SDK 1.6 notify_lens_deployment), in name order,
// recording how many basis relations each backs. A module's error propagates; the lens
// stays deployed (a later apply notifies again).
void notify_lens_deployment(DatabaseImpl& db, const std::string& name);

// quereus_effective_lens(schema, table), quereus_lens_advisories(schema).
void register_lens_functions(Registry& r);

// ---- the compiler (main/lens_compiler.cc)

// The entries of a tag set, values as text (tag_text).
std::vector<std::pair<std::string, std::string>> tag_entries(const TagSet& tags);
// `s` split at `sep`, each part trimmed of spaces and tabs, empty parts dropped.
std::vector<std::string> split_trim(const std::string& s, char sep);

// One table's compile: the view to register (its slot attached) and what the prover
// found, errors included (the deploy aggregates them before changing anything).
struct CompiledLensTable {
  std::shared_ptr<ViewEntry> view;
  std::vector<LensAdvisory> diagnostics;
};

// Compiles table `table` (an item of `logical`) over `basis`. Throws for a lens that
// cannot be composed at all (a column with no basis backing, a body that escapes its
// basis, a malformed advertisement); the prover's verdicts are returned as diagnostics.
CompiledLensTable compile_lens_table(DatabaseImpl& db, const ast::DeclareSchemaStmt& logical,
                                     const ast::CreateTableStmt& table, const ast::DeclareLensStmt* lens,
                                     const std::string& basis);

}  // namespace quereus
