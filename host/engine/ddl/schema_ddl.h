// The DDL that recreates a catalog object exactly: what a persistent module's catalog
// stores (docs/persistence.md) and what a reopened database replays.
//
// create_table_ddl renders the whole table as it is now — after any ALTER — with every
// column attribute, the primary key, UNIQUE / CHECK / FOREIGN KEY constraints by name,
// the module clause and WITH CONTEXT. Executing it in an empty database gives a table
// whose create_table_ddl is the same text (a fixed point; tests/unit/schema_ddl_test.cc).
#pragma once

#include <string>
#include <vector>

#include "catalog/table_schema.h"

namespace quereus {

std::string create_table_ddl(const TableSchema& table);
// The table's definition as named parts, each with its text as create_table_ddl spells it:
// "col:<name>" per column, "pk" (empty when no key is declared), "uniq:<name>",
// "check:<name>" (an unnamed CHECK: "check:" and its text), "fk:<name>", "tail" (WITH
// CONTEXT, MAINTAINED AS, WITH TAGS) and "idx:<name>" per user index (its CREATE INDEX).
// create_table_ddl is "create table S.N (" + the non-empty parts before "tail", joined by
// ", " + ") using M(options)" + tail. The module clause is not a part: it is local.
// Schema replication merges tables part by part (docs/sync-store.md "Schema replication").
std::vector<std::pair<std::string, std::string>> table_objects(const TableSchema& table);
// CREATE [UNIQUE] INDEX for a user index (not a UNIQUE constraint's structure).
std::string create_index_ddl(const TableSchema& table, const IndexSchema& index);
// The table and its user indexes, one statement per line: a catalog entry.
std::string table_bundle(const TableSchema& table);
// A Value as an SQL literal ('text', 12, 1.5, true, null, x'00ff').
std::string sql_literal(const Value& v);

}  // namespace quereus
