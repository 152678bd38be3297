// The shell's parts on their own: where a statement ends (sql_input), display widths and the
// output modes (output), dump literals reading back as the same value (dump), the hints, and
// a Shell over a real database (dot-commands, errors with lines, .dump of a table).
#include <gtest/gtest.h>

#include <sstream>

#include "cli/dump.h"
#include "cli/hints.h"
#include "cli/output.h"
#include "cli/shell.h"
#include "cli/sql_input.h"
#include "plugin/plugin_loader.h"

namespace quereus {
namespace {

TEST(SqlInput, StatementEndsWhereTheLexerSaysSo) {
  EXPECT_EQ(input_state("select 1;"), InputState::kComplete);
  EXPECT_EQ(input_state("select 1"), InputState::kIncomplete);
  EXPECT_EQ(input_state("select 'a;b'"), InputState::kIncomplete);
  EXPECT_EQ(input_state("select 'a;"), InputState::kIncomplete);  // an open string
  EXPECT_EQ(input_state("select \"a;"), InputState::kIncomplete);  // an open quoted name
  EXPECT_EQ(input_state("select 1 /* ; */"), InputState::kIncomplete);
  EXPECT_EQ(input_state("select 1 /* ;"), InputState::kIncomplete);  // an open comment
  EXPECT_EQ(input_state("select 1 -- ;\n"), InputState::kIncomplete);
  EXPECT_EQ(input_state("select 1; -- done\n"), InputState::kComplete);  // a comment after the ;
  EXPECT_EQ(input_state("select 1; select 2;"), InputState::kComplete);
  EXPECT_EQ(input_state("  \n-- only a comment\n"), InputState::kEmpty);
  EXPECT_EQ(input_state(";;"), InputState::kEmpty);
  EXPECT_EQ(input_state("declare schema s { table t (a integer primary key) }"), InputState::kComplete);
  EXPECT_EQ(input_state("declare schema s { table t (a integer primary key);"), InputState::kIncomplete);
  // A character the lexer rejects ends the input, so that running it reports the error.
  EXPECT_EQ(input_state("select @"), InputState::kComplete);
}

TEST(Output, DisplayWidthCountsTerminalColumns) {
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("漢字"), 4u);
  EXPECT_EQ(display_width("🙂"), 2u);
  EXPECT_EQ(display_width("e\xcc\x81"), 1u);  // e + combining acute accent
  EXPECT_EQ(display_width("\xff"), 1u);       // invalid UTF-8: one column
  EXPECT_EQ(display_width(""), 0u);
}

std::string print(const OutputSettings& s, const std::vector<std::string>& names, const std::vector<Row>& rows) {
  std::ostringstream out;
  ResultPrinter p(out, s, names);
  for (const Row& r : rows) p.add(r);
  p.finish();
  return out.str();
}

TEST(Output, NullAndTheTextNullDiffer) {
  OutputSettings s;
  const std::string out = print(s, {"a", "b"}, {{Value(), Value::Text("NULL")}});
  EXPECT_EQ(out, " a    | b\n------+--------\n NULL | 'NULL'\n(1 row)\n");
  s.mode = OutputMode::kCsv;
  EXPECT_EQ(print(s, {"a", "b"}, {{Value(), Value::Text("")}}), "a,b\n,\"\"\n");
  s.mode = OutputMode::kJsonl;
  EXPECT_EQ(print(s, {"a", "b"}, {{Value(), Value::Text("NULL")}}), "{\"a\":null,\"b\":\"NULL\"}\n");
}

TEST(Output, EveryMode) {
  const std::vector<std::string> names{"n", "t"};
  const std::vector<Row> rows{{Value::Integer(1), Value::Text("a,b")}, {Value::Real(2.5), Value::Text("x\ty")}};
  OutputSettings s;
  s.mode = OutputMode::kCsv;
  EXPECT_EQ(print(s, names, rows), "n,t\n1,\"a,b\"\n2.5,x\ty\n");
  s.mode = OutputMode::kTsv;
  EXPECT_EQ(print(s, names, rows), "n\tt\n1\ta,b\n2.5\tx\\ty\n");
  s.mode = OutputMode::kJson;
  EXPECT_EQ(print(s, names, rows), "[{\"n\":1,\"t\":\"a,b\"},\n{\"n\":2.5,\"t\":\"x\\ty\"}]\n");
  EXPECT_EQ(print(s, names, {}), "[]\n");
  s.mode = OutputMode::kMarkdown;
  EXPECT_EQ(print(s, names, rows), "| n   | t    |\n|-----|------|\n|   1 | a,b  |\n| 2.5 | x\\ty |\n");
  s.mode = OutputMode::kLine;
  EXPECT_EQ(print(s, names, rows), "n = 1\nt = a,b\n\nn = 2.5\nt = x\\ty\n");
  s.mode = OutputMode::kBox;
  EXPECT_EQ(print(s, {"n"}, {{Value::Integer(7)}}), "┌───┐\n│ n │\n├───┤\n│ 7 │\n└───┘\n(1 row)\n");
  s.mode = OutputMode::kTable;
  s.headers = false;
  EXPECT_EQ(print(s, {"n"}, {{Value::Integer(7)}}), " 7\n(1 row)\n");
}

TEST(Output, AlignedModesStreamAfterTheSample) {
  // Rows past kAlignSample are printed as they come, in the widths of the sample.
  OutputSettings s;
  std::ostringstream out;
  ResultPrinter p(out, s, {"v"});
  for (size_t i = 0; i < ResultPrinter::kAlignSample; ++i) p.add({Value::Text("a")});
  const size_t after_sample = out.str().size();
  EXPECT_GT(after_sample, 0u);
  p.add({Value::Text("wider than the sample")});
  EXPECT_GT(out.str().size(), after_sample);
  p.finish();
  EXPECT_NE(out.str().find("(1001 rows)"), std::string::npos);
}

TEST(Output, ModeNames) {
  for (const char* name : {"table", "box", "csv", "tsv", "json", "jsonl", "markdown", "line"}) {
    OutputMode m;
    ASSERT_TRUE(parse_output_mode(name, &m)) << name;
    EXPECT_EQ(output_mode_name(m), name);
  }
  OutputMode m;
  EXPECT_FALSE(parse_output_mode("html", &m));
}

class WithDatabase : public ::testing::Test {
 protected:
  void SetUp() override {
    auto registry = std::make_shared<Registry>();
    loader_ = std::make_unique<PluginLoader>(registry, std::vector<std::string>{QUEREUS_PLUGIN_DIR});
    PluginSpec spec;
    spec.path = "mem";
    ASSERT_TRUE(loader_->load(spec).ok());
    ASSERT_TRUE(Database::Open(registry, {}, &db_).ok());
  }
  Value eval(const std::string& expr) {
    std::vector<std::unique_ptr<Statement>> stmts;
    EXPECT_TRUE(db_->prepare("select " + expr, &stmts).ok());
    bool has = false;
    EXPECT_TRUE(stmts[0]->step(&has).ok());
    return has ? stmts[0]->row()[0] : Value();
  }
  std::unique_ptr<PluginLoader> loader_;
  std::unique_ptr<Database> db_;
};

TEST_F(WithDatabase, DumpLiteralsReadBackAsTheSameValue) {
  const std::vector<Value> values{Value(),
                                  Value::Integer(0),
                                  Value::Integer(-9223372036854775807LL - 1),
                                  Value::Real(1.0),
                                  Value::Real(-0.5),
                                  Value::Real(1e300),
                                  Value::Real(0.1),
                                  Value::Text("it's; \"quoted\"\nline"),
                                  Value::Text("漢字"),
                                  Value::Blob(std::string("\x00\xff", 2)),
                                  Value::Blob(""),
                                  Value::Boolean(true),
                                  Value::Boolean(false)};
  for (const Value& v : values) {
    const std::string lit = dump_literal(v);
    const Value back = eval(lit);
    EXPECT_EQ(back.type(), v.type()) << lit;
    EXPECT_EQ(back.to_text(), v.to_text()) << lit;
  }
  EXPECT_EQ(dump_literal(Value::Real(2.0)), "2.0");
}

TEST_F(WithDatabase, ShellRunsDotCommandsAndReportsLines) {
  std::ostringstream out, err;
  ShellOptions options;
  options.output.mode = OutputMode::kCsv;
  Shell shell(*db_, {}, options, out, err);
  EXPECT_TRUE(shell.run_text("create table t (a integer primary key);\n.headers off\n"
                             "insert into t values (1),\n (2);\nselect a from t;\n")
                  .ok());
  EXPECT_EQ(out.str(), "1\n2\n");
  out.str("");
  Status s = shell.run_text("select 1;\n\nselect nosuch\n  from t;\nselect 3;\n", "x.sql");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(out.str(), "1\n");  // stopped at the error
  EXPECT_NE(err.str().find("x.sql:3"), std::string::npos) << err.str();
  EXPECT_FALSE(shell.run_text(".nosuch").ok());
  EXPECT_TRUE(shell.run_text(".quit\nselect 4;").ok());
  EXPECT_TRUE(shell.quit_requested());
}

TEST_F(WithDatabase, CompletionOffersKeywordsTablesColumnsAndCommands) {
  ASSERT_TRUE(db_->exec("create table widgets (id integer primary key, label text)").ok());
  std::ostringstream out, err;
  Shell shell(*db_, {}, {}, out, err);
  auto has = [](const std::vector<std::string>& v, const std::string& w) {
    return std::find(v.begin(), v.end(), w) != v.end();
  };
  auto c = shell.completions("sel", "sel");
  EXPECT_TRUE(has(c, "select"));
  c = shell.completions("select * from wid", "wid");
  EXPECT_TRUE(has(c, "widgets"));
  c = shell.completions("select lab", "lab");
  EXPECT_TRUE(has(c, "label"));
  c = shell.completions("select widgets.i", "widgets.i");
  EXPECT_TRUE(has(c, "id"));
  c = shell.completions(".sch", ".sch");
  EXPECT_TRUE(has(c, ".schema"));
}

TEST(Hints, ForHabitsFromOtherEngines) {
  const Status error(StatusCode::kError, "x");
  EXPECT_NE(hint_for("pragma table_info(t)", error).find("table_info('t')"), std::string::npos);
  EXPECT_NE(hint_for("describe t", error).find("table_info('t')"), std::string::npos);
  EXPECT_NE(hint_for("show tables", error).find(".tables"), std::string::npos);
  EXPECT_NE(hint_for("select * from sqlite_master", error).find("schema()"), std::string::npos);
  EXPECT_NE(hint_for("insert into t values (null)",
                     Status(StatusCode::kConstraint, "NOT NULL constraint failed: t.b"))
                .find("`b <type> null`"),
            std::string::npos);
  // A `with context` variable is named as such, not as a column called "mutation".
  const std::string context_hint =
      hint_for("insert into t (id) values (1) with context (x = null)",
               Status(StatusCode::kConstraint, "NOT NULL constraint failed: mutation context variable t.x"));
  EXPECT_NE(context_hint.find("`x <type> null` in the table's `with context"), std::string::npos);
  EXPECT_EQ(context_hint.find("mutation <type>"), std::string::npos);
  EXPECT_EQ(hint_for("select 1", error), "");
}

}  // namespace
}  // namespace quereus
