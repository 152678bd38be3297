// Metadata tags: the catalog form and tag verbs (ddl/tags.h), the reserved registry,
// the parser's placement of a trailing WITH TAGS, and the status codes end to end.
#include <gtest/gtest.h>

#include "common/status.h"
#include "ddl/tags.h"
#include "mem_db_test.h"
#include "parser/ast_printer.h"
#include "parser/parser.h"

namespace quereus {
namespace {

// The tag list of `alter view v <verb> tags (…)`, kept alive with its statement.
struct Tags {
  explicit Tags(const std::string& list, const char* verb = "set") {
    auto stmts = Parser::parse(std::string("alter view v ") + verb + " tags " + list);
    stmt = std::move(stmts.front());
  }
  const ast::TagList& list() const { return static_cast<const ast::AlterTagsStmt&>(*stmt).tags; }
  ast::StatementPtr stmt;
};

StatusCode code_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.code();
  }
  return StatusCode::kOk;
}

TEST(TagsTest, CatalogFormIsCanonicalJsonAndEmptyIsNone) {
  TagSet set = tag_set(Tags("(b = 'x', a = 1, c = -2.5, d = true, e = null, a = 7)").list());
  EXPECT_EQ(set.to_json(), R"({"a":7,"b":"x","c":-2.5,"d":true,"e":null})");  // the later `a` wins
  ASSERT_NE(set.find("a"), nullptr);
  EXPECT_EQ(std::get<int64_t>(*set.find("a")), 7);
  EXPECT_EQ(std::get<double>(*set.find("c")), -2.5);
  EXPECT_TRUE(set.is_true("d"));
  EXPECT_FALSE(set.is_true("a"));  // 7 is not true
  EXPECT_TRUE(std::holds_alternative<std::monostate>(*set.find("e")));
  EXPECT_EQ(set.find("A"), nullptr);  // keys are exact
  EXPECT_TRUE(tag_set(Tags("()").list()).empty());
  EXPECT_EQ(tag_set(Tags("()").list()).to_json(), "");
}

TEST(TagsTest, VerbsReplaceMergeAndDropAtomically) {
  const TagSet current = tag_set(Tags("(a = 1, b = 2)").list());
  auto json = [](const TagSet& t) { return t.to_json(); };
  EXPECT_EQ(json(apply_tag_verb(current, ast::TagVerb::kSet, Tags("(c = 3)").list(), "t")), R"({"c":3})");
  EXPECT_EQ(json(apply_tag_verb(current, ast::TagVerb::kSet, Tags("()").list(), "t")), "");
  EXPECT_EQ(json(apply_tag_verb(current, ast::TagVerb::kAdd, Tags("(b = 9, c = null)").list(), "t")),
            R"({"a":1,"b":9,"c":null})");
  EXPECT_EQ(json(apply_tag_verb(current, ast::TagVerb::kAdd, Tags("()").list(), "t")), json(current));
  EXPECT_EQ(json(apply_tag_verb(current, ast::TagVerb::kDrop, Tags("(a, a)", "drop").list(), "t")), R"({"b":2})");
  EXPECT_EQ(json(apply_tag_verb(current, ast::TagVerb::kDrop, Tags("(a, b)", "drop").list(), "t")), "");
  // An absent key: NOTFOUND naming it, and nothing is returned to store.
  try {
    apply_tag_verb(current, ast::TagVerb::kDrop, Tags("(a, zz)", "drop").list(), "table 't'");
    FAIL() << "dropping an absent key succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("tag 'zz' not found"), std::string::npos) << e.what();
  }
}

TEST(TagsTest, ReservedKeysAreCheckedForSiteAndShape) {
  EXPECT_EQ(code_of([] { validate_reserved_tags(Tags("(display = 'x', \"quereus.id\" = 'a')").list(),
                                                TagSite::kPhysicalTable); }),
            StatusCode::kOk);
  EXPECT_EQ(code_of([] { validate_reserved_tags(Tags("(\"quereus.bogus\" = 1)").list(), TagSite::kPhysicalTable); }),
            StatusCode::kError);
  EXPECT_EQ(code_of([] { validate_reserved_tags(Tags("(\"quereus.lens.writable\" = true)").list(),
                                                TagSite::kPhysicalColumn); }),
            StatusCode::kError);
  EXPECT_EQ(code_of([] { validate_reserved_tags(Tags("(\"quereus.lens.writable\" = true)").list(),
                                                TagSite::kLogicalColumn); }),
            StatusCode::kOk);
  EXPECT_EQ(code_of([] { validate_reserved_tags(Tags("(\"quereus.expose_implicit_index\" = 1)").list(),
                                                TagSite::kPhysicalConstraint); }),
            StatusCode::kError);
  EXPECT_EQ(code_of([] { validate_reserved_tags(Tags("(\"quereus.id\" = 'x')").list(), TagSite::kDmlStatement); }),
            StatusCode::kError);
  // The retired quereus.update.* family is unknown now.
  EXPECT_EQ(code_of([] { validate_reserved_tags(Tags("(\"quereus.update.target\" = 'x')").list(),
                                                TagSite::kViewDdl); }),
            StatusCode::kError);
}

TEST(TagsTest, DriftIgnoresRenameHints) {
  EXPECT_FALSE(tags_drift(tag_set(Tags("(a = 1)").list()), Tags("(a = 1, \"quereus.id\" = 'x')").list()));
  EXPECT_TRUE(tags_drift(tag_set(Tags("(a = 1)").list()), Tags("(a = 2)").list()));
  EXPECT_TRUE(tags_drift(TagSet{}, Tags("(a = 1)").list()));
}

TEST(TagsTest, TrailingTagsGoToANamedInlineConstraintElseToTheColumn) {
  auto stmts = Parser::parse(
      "create table t (a int constraint u unique with tags (k = 1), b int check (b > 0) with tags (k = 2))");
  const auto& ct = static_cast<const ast::CreateTableStmt&>(*stmts.front());
  EXPECT_EQ(ct.columns[0].constraints[0].tags.size(), 1u);
  EXPECT_TRUE(ct.columns[0].tags.empty());
  EXPECT_TRUE(ct.columns[1].constraints[0].tags.empty());
  EXPECT_EQ(ct.columns[1].tags.size(), 1u);
  // The canonical text keeps each list where it was.
  auto again = Parser::parse(statement_to_string(ct));
  const auto& ct2 = static_cast<const ast::CreateTableStmt&>(*again.front());
  EXPECT_EQ(ct2.columns[0].constraints[0].tags.size(), 1u);
  EXPECT_EQ(ct2.columns[1].tags.size(), 1u);
}

class TagsDbTest : public MemDbTest {};

TEST_F(TagsDbTest, StatusCodesOfTheTagVerbs) {
  exec("create table t (id integer primary key, x integer, constraint c check (x > 0)) with tags (a = 1)");
  fails("alter table t drop tags (nope)", StatusCode::kNotFound, "tag 'nope' not found");
  fails("alter table t alter column nope set tags (a = 1)", StatusCode::kNotFound, "Column 'nope' not found");
  fails("alter table t alter constraint nope set tags (a = 1)", StatusCode::kNotFound, "Constraint 'nope' not found");
  fails("alter view nope set tags (a = 1)", StatusCode::kNotFound, "View 'nope' not found");
  fails("alter index nope set tags (a = 1)", StatusCode::kNotFound, "Index 'nope' not found");
  fails("alter table t set tags (\"quereus.nope\" = 1)", StatusCode::kError, "Unknown reserved tag 'quereus.nope'");
  exec("alter table t alter constraint c set tags (why = 'positive')");
  auto rows = query("select tags from check_constraint_info('t')");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].to_text(), R"({"why":"positive"})");
  rows = query("select tags from schema() where type = 'table' and name = 't'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].to_text(), R"({"a":1})");
}

}  // namespace
}  // namespace quereus
