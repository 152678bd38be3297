// Column lineage (planner/lineage.h) over logical plans: base columns, invertible chains,
// computed terms, joins (inner, outer, self), existence flags and the operators lineage
// does not survive; and the key questions view writes ask of it.
#include <gtest/gtest.h>

#include "mem_db_test.h"

#include "catalog/catalog.h"
#include "main/database_impl.h"
#include "parser/parser.h"
#include "planner/lineage.h"
#include "planner/planner.h"

namespace quereus {
namespace {

using Kind = ColumnLineage::Kind;
using Op = InverseStep::Op;

class LineageTest : public MemDbTest {
 protected:
  void SetUp() override {
    MemDbTest::SetUp();
    ASSERT_TRUE(db_->exec("create table p (id integer primary key, name text, code text not null unique)").ok());
    ASSERT_TRUE(db_->exec("create table c (cid integer primary key, pid integer, qty integer, tag text unique)").ok());
  }
  RelLineage lineage(const std::string& sql) {
    auto stmts = Parser::parse(sql);
    Planner planner(static_cast<DatabaseImpl&>(*db_));
    QueryPlan qp = planner.plan_select(*static_cast<const ast::SelectStmt&>(*stmts[0]).select, nullptr);
    return derive_lineage(*qp.root);
  }
  static std::string table(const RelLineage& l, int scan) { return l.scans.at(scan).table->schema.name; }
};

TEST_F(LineageTest, BareColumnsAreBaseColumnsOfTheirScan) {
  RelLineage l = lineage("select name, id from p");
  ASSERT_EQ(l.columns.size(), 2u);
  ASSERT_EQ(l.scans.size(), 1u);
  EXPECT_EQ(table(l, 0), "p");
  EXPECT_EQ(l.columns[0].kind, Kind::kBase);
  EXPECT_EQ(l.columns[0].column, 1);
  EXPECT_TRUE(l.columns[0].inverse.empty());
  EXPECT_EQ(l.columns[1].column, 0);
  // The projection moves the scan's columns: id is output 1, name 0, code projected away.
  EXPECT_EQ(l.scans[0].positions, (std::vector<int>{1, 0, -1}));
  // Below the projection every column is there.
  EXPECT_EQ(l.scans[0].source_positions, (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(l.key_preserved(0));
}

TEST_F(LineageTest, InvertibleTermsComposeTheirInverseOutermostFirst) {
  RelLineage l = lineage("select qty + 1 as a, -qty as b, 10 - qty as c, -(qty - 2) as d, qty collate nocase as e from c");
  ASSERT_EQ(l.columns.size(), 5u);
  for (auto& c : l.columns) {
    EXPECT_EQ(c.kind, Kind::kBase);
    EXPECT_EQ(c.column, 2);
  }
  ASSERT_EQ(l.columns[0].inverse.size(), 1u);
  EXPECT_EQ(l.columns[0].inverse[0].op, Op::kSubtract);
  EXPECT_EQ(l.columns[0].inverse[0].constant.as_int(), 1);
  ASSERT_EQ(l.columns[1].inverse.size(), 1u);
  EXPECT_EQ(l.columns[1].inverse[0].op, Op::kNegate);
  ASSERT_EQ(l.columns[2].inverse.size(), 1u);
  EXPECT_EQ(l.columns[2].inverse[0].op, Op::kFromConstant);
  EXPECT_EQ(l.columns[2].inverse[0].constant.as_int(), 10);
  // d = -(qty - 2): undo the negation, then the subtraction.
  ASSERT_EQ(l.columns[3].inverse.size(), 2u);
  EXPECT_EQ(l.columns[3].inverse[0].op, Op::kNegate);
  EXPECT_EQ(l.columns[3].inverse[1].op, Op::kAdd);
  EXPECT_EQ(l.columns[3].inverse[1].constant.as_int(), 2);
  EXPECT_TRUE(l.columns[4].inverse.empty());
}

TEST_F(LineageTest, NonInvertibleTermsAndForeignCastsAreComputed) {
  RelLineage l = lineage("select qty * 2, upper(tag), cast(qty as text), cast(qty as integer), qty + pid from c");
  ASSERT_EQ(l.columns.size(), 5u);
  EXPECT_EQ(l.columns[0].kind, Kind::kComputed);
  EXPECT_NE(l.columns[0].expr, nullptr);
  EXPECT_EQ(l.columns[1].kind, Kind::kComputed);
  EXPECT_EQ(l.columns[2].kind, Kind::kComputed);  // a cast to another type
  EXPECT_EQ(l.columns[3].kind, Kind::kBase);      // a cast to the column's own type
  EXPECT_EQ(l.columns[4].kind, Kind::kComputed);
}

TEST_F(LineageTest, InnerJoinConcatenatesScansAndRecordsTheOnEqualities) {
  RelLineage l = lineage("select c.qty, p.name, c.cid from c join p on c.pid = p.id");
  ASSERT_EQ(l.scans.size(), 2u);
  EXPECT_EQ(table(l, 0), "c");
  EXPECT_EQ(table(l, 1), "p");
  EXPECT_EQ(l.columns[0].scan, 0);
  EXPECT_EQ(l.columns[1].scan, 1);
  EXPECT_FALSE(l.columns[1].null_extended);
  // The ON equality, as scan columns, although both are projected away.
  ASSERT_EQ(l.join_equalities.size(), 1u);
  EXPECT_EQ(l.join_equalities[0].left_scan, 0);
  EXPECT_EQ(l.join_equalities[0].left_column, 1);
  EXPECT_EQ(l.join_equalities[0].right_scan, 1);
  EXPECT_EQ(l.join_equalities[0].right_column, 0);
  // The outermost projection reads source slots 2 (c.qty), 5 (p.name) and 0 (c.cid).
  ASSERT_EQ(l.reads.size(), 3u);
  EXPECT_EQ(l.reads[0].slot, 2);
  EXPECT_EQ(l.reads[1].slot, 5);
  EXPECT_EQ(l.reads[2].slot, 0);
  // Each c row meets one p (p's key is pinned by the join): c determines p.name; a p row
  // meets many c rows, so p does not determine c.qty.
  EXPECT_TRUE(l.owner_determines(0, 1, 1));
  EXPECT_FALSE(l.owner_determines(1, 0, 2));
  EXPECT_TRUE(l.key_preserved(0));
  EXPECT_FALSE(l.key_preserved(1));
}

TEST_F(LineageTest, AUniqueIndexPinnedByTheJoinDeterminesItsTable) {
  // c.tag = p.code: code is NOT NULL UNIQUE, so each c row meets at most one p.
  RelLineage l = lineage("select c.cid, p.name from c join p on c.tag = p.code");
  EXPECT_TRUE(l.owner_determines(0, 1, 1));
  // p.code = c.tag with c.tag nullable UNIQUE: still at most one c per p among matches.
  EXPECT_TRUE(l.owner_determines(1, 0, 2));
  EXPECT_FALSE(lineage("select c.cid, p.name from c join p on c.qty = p.id").owner_determines(1, 0, 0));
}

TEST_F(LineageTest, OuterJoinMarksThePaddedSide) {
  RelLineage l = lineage("select p.id, c.qty, c.cid from p left join c on c.pid = p.id");
  ASSERT_EQ(l.scans.size(), 2u);
  EXPECT_FALSE(l.scans[0].padded);
  EXPECT_TRUE(l.scans[1].padded);
  EXPECT_FALSE(l.columns[0].null_extended);
  EXPECT_TRUE(l.columns[1].null_extended);
  EXPECT_EQ(l.columns[1].kind, Kind::kBase);
  // Pairwise questions read the match relation: each c row meets at most one p.
  EXPECT_TRUE(l.owner_determines(1, 0, 1));
  EXPECT_FALSE(l.owner_determines(0, 1, 2));
  RelLineage r = lineage("select * from c right join p on c.pid = p.id");
  EXPECT_TRUE(r.scans[0].padded);
  EXPECT_FALSE(r.scans[1].padded);
  ASSERT_EQ(r.join_equalities.size(), 1u);
  EXPECT_EQ(r.join_equalities[0].left_scan, 0);
  EXPECT_EQ(r.join_equalities[0].left_column, 1);
  EXPECT_EQ(r.join_equalities[0].right_scan, 1);
}

TEST_F(LineageTest, ExistenceFlagsAreTheirOwnKind) {
  RelLineage l = lineage("select * from p left join c on c.pid = p.id exists right as has_c");
  ASSERT_EQ(l.columns.size(), 8u);
  EXPECT_EQ(l.columns[7].kind, Kind::kExistence);
  EXPECT_EQ(l.columns[7].scan, 1);
}

TEST_F(LineageTest, SelfJoinKeepsItsScansApart) {
  RelLineage l = lineage("select a.name, b.name from p as a join p as b on a.id = b.id");
  ASSERT_EQ(l.scans.size(), 2u);
  EXPECT_EQ(l.columns[0].scan, 0);
  EXPECT_EQ(l.columns[1].scan, 1);
  EXPECT_TRUE(l.key_preserved(0));
  EXPECT_TRUE(l.key_preserved(1));
}

TEST_F(LineageTest, FiltersAndSortsPassLineageAndAddTheirFacts) {
  RelLineage l = lineage("select name, id from p where id = 3 order by name");
  EXPECT_EQ(l.columns[0].kind, Kind::kBase);
  EXPECT_TRUE(l.properties.is_unique({}, 2));  // the key is pinned: one row at most
}

TEST_F(LineageTest, AggregatesDistinctSetOperationsAndLimitsHideTheScans) {
  for (const char* sql : {"select pid, count(*) from c group by pid", "select distinct name from p",
                          "select name from p union select tag from c", "select name from p limit 3",
                          "select * from (values (1), (2))"}) {
    RelLineage l = lineage(sql);
    EXPECT_TRUE(l.scans.empty()) << sql;
    for (auto& c : l.columns) EXPECT_EQ(c.kind, Kind::kComputed) << sql;
  }
}

TEST_F(LineageTest, AWindowKeepsItsInputColumnsAndComputesItsCalls) {
  RelLineage l = lineage("select id, name, row_number() over (order by id) as r from p where id > 1");
  ASSERT_EQ(l.scans.size(), 1u);
  ASSERT_EQ(l.columns.size(), 3u);
  EXPECT_EQ(l.columns[0].kind, Kind::kBase);
  EXPECT_EQ(l.columns[1].kind, Kind::kBase);
  EXPECT_EQ(l.columns[2].kind, Kind::kComputed);
}

TEST_F(LineageTest, OutermostReadsStopAtTheProjection) {
  ASSERT_TRUE(db_->exec("create view cv as select cid, qty + 1 as q1, tag from c").ok());
  // Over a view: the reads name the view's columns (slot 1 is q1), with only the outer
  // projection's own inverse; the column lineage composes through to the base column.
  RelLineage l = lineage("select q1 - 1 as q, upper(tag) from cv");
  ASSERT_EQ(l.reads.size(), 2u);
  EXPECT_EQ(l.reads[0].slot, 1);
  ASSERT_EQ(l.reads[0].inverse.size(), 1u);
  EXPECT_EQ(l.reads[0].inverse[0].op, Op::kAdd);
  EXPECT_EQ(l.reads[1].slot, -1);
  EXPECT_EQ(l.columns[0].kind, Kind::kBase);
  EXPECT_EQ(l.columns[0].column, 2);
  EXPECT_EQ(l.columns[0].inverse.size(), 2u);
}

TEST_F(LineageTest, ViewsExpandToTheirBaseScans) {
  ASSERT_TRUE(db_->exec("create view pv as select id, name || '!' as loud, code from p").ok());
  RelLineage l = lineage("select code, loud from pv");
  ASSERT_EQ(l.scans.size(), 1u);
  EXPECT_EQ(table(l, 0), "p");
  EXPECT_EQ(l.columns[0].kind, Kind::kBase);
  EXPECT_EQ(l.columns[0].column, 2);
  EXPECT_EQ(l.columns[1].kind, Kind::kComputed);
}

TEST_F(LineageTest, JsonNamesColumnsAndScans) {
  std::string j = lineage("select qty + 1, name from c left join p on c.pid = p.id").to_json();
  EXPECT_NE(j.find("\"kind\":\"inverse\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"nullExtended\":true"), std::string::npos) << j;
  EXPECT_NE(j.find("\"table\":\"main.p\""), std::string::npos) << j;
}

}  // namespace
}  // namespace quereus
