// The reserved `quereus.*` tag registry (docs/tags.md; the reference's reserved-tags
// registry): which reserved keys exist, where each may sit and what shape its value has.
// One source of truth for every path that authors or reads tags — DDL (ddl/tags.h builds
// on it), the lens compiler, the declarative differ, and the lazy check of a view's
// stored tags on the first write through it (rewrite/).
#pragma once

#include <optional>
#include <string_view>

#include "catalog/tag_set.h"
#include "common/status.h"

namespace quereus {

// Where a tag list is written: the reserved keys legal at each differ.
enum class TagSite {
  kPhysicalTable,       // CREATE TABLE … WITH TAGS, ALTER TABLE … TAGS
  kPhysicalColumn,      // a column (and an unnamed inline constraint's trailing tags)
  kPhysicalConstraint,  // a table-level constraint, or a named inline one
  kPhysicalIndex,       // CREATE INDEX, ALTER INDEX
  kViewDdl,             // ALTER [MATERIALIZED] VIEW
  kLogicalTable,        // a table of a logical schema declaration
  kLogicalColumn,
  kLogicalConstraint,
  kDmlStatement,        // INSERT / UPDATE / DELETE … WITH TAGS
};

// Refuses a reserved (`quereus.`-prefixed) `key` that the registry does not know
// ("Unknown reserved tag …"), that is not legal at `site` ("… is not allowed on …"), or
// whose value has the wrong shape (`value` null: the key was written with no value).
// A free-form key passes untouched. `where` locates the error.
void validate_reserved_tag(std::string_view key, const TagValue* value, TagSite site,
                           std::optional<SourceSite> where = std::nullopt);

// Every key of a stored set (a view's tags, checked lazily on the first write through it).
void validate_reserved_tags(const TagSet& tags, TagSite site);

}  // namespace quereus
