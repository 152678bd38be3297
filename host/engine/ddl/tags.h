// Metadata tags (WITH TAGS, sql-ddl.md §2.6.3 and sql-alter.md): the catalog form of a
// tag list, its check against the reserved `quereus.*` registry (catalog/reserved_tags.h)
// and the catalog-only tag verbs (ALTER … {SET|ADD|DROP} TAGS). See docs/tags.md.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "parser/ast.h"
#include "catalog/ddl_origin.h"
#include "catalog/reserved_tags.h"
#include "catalog/tag_set.h"

namespace quereus {

class DdlContext;
struct IndexSchema;
struct TableEntry;
struct TableSchema;

// Refuses the first reserved (`quereus.`-prefixed) key of `tags` that the registry does
// not know ("Unknown reserved tag …"), that is not legal at `site` ("… is not allowed
// on …"), or whose value has the wrong shape. Free-form keys pass untouched.
void validate_reserved_tags(const ast::TagList& tags, TagSite site);

// The catalog form of a tag list (later keys win over earlier ones).
TagSet tag_set(const ast::TagList& tags);

// `current` after ALTER … {SET|ADD|DROP} TAGS `tags`: SET replaces the whole set, ADD
// merges (an empty list changes nothing), DROP removes keys and refuses with NOTFOUND,
// changing nothing, when one is absent. `what` names the target for that message.
TagSet apply_tag_verb(const TagSet& current, ast::TagVerb verb, const ast::TagList& tags, const std::string& what);

// A UNIQUE constraint whose tags set "quereus.expose_implicit_index" = true: its backing
// structure is shown and tag-addressable as an index (its lifecycle stays the
// constraint's).
bool exposes_implicit_index(const IndexSchema& ix);

// CREATE TABLE: validates every tag site in the reference's order (table, then each
// column and its named inline constraints, then the table-level constraints). Runs
// before anything else, IF NOT EXISTS included.
void validate_create_table_tags(const ast::CreateTableStmt& s);

// CREATE TABLE: stores the statement's tags on `ts`, built from `s` (columns,
// PRIMARY KEY, CHECKs, FOREIGN KEYs and UNIQUE constraints in declaration order).
void attach_create_table_tags(const ast::CreateTableStmt& s, TableSchema& ts);

// ALTER TABLE … ADD COLUMN: validates the column's tags and its named inline
// constraints'.
void validate_column_tags(const ast::ColumnDef& cd);

// ALTER TABLE … ADD COLUMN: stores the column's tags and its named inline constraints'
// on `ts`, where column `column` and its constraints have just been added.
void attach_column_tags(const ast::ColumnDef& cd, TableSchema& ts, int column);

// The declarative differ: whether a live tag set differs from a declared list, ignoring the rename hints `quereus.id` / `quereus.previous_name` (they drive
// rename detection, not state).
bool tags_drift(const TagSet& live, const ast::TagList& declared);

// ALTER TABLE … {SET|ADD|DROP} TAGS on the table, a column or a named constraint.
// Catalog-only: the module is not called.
void alter_table_tags(DdlContext& db, TableEntry& table, const ast::AlterTableStmt& s);

// ALTER VIEW | MATERIALIZED VIEW | INDEX … {SET|ADD|DROP} TAGS. Catalog-only.
void alter_object_tags(DdlContext& db, const ast::AlterTagsStmt& s, DdlOrigin origin = DdlOrigin::kStatement);

}  // namespace quereus
