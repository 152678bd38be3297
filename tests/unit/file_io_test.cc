// Data files from SQL: read_csv, read_jsonl, COPY … TO and COPY … FROM
// (docs/sql-dialect.md "Files").
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "mem_db_test.h"

namespace quereus {
namespace {

namespace fs = std::filesystem;

class FileIoTest : public MemDbTest {
 protected:
  void SetUp() override {
    MemDbTest::SetUp();
    dir_ = fs::temp_directory_path() / ("quereus-file-io-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(path(name), std::ios::binary) << content;
    return path(name);
  }
  std::string read(const std::string& name) const {
    std::ifstream in(path(name), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // The rows of `sql` as "a|b|c" lines (NULL as ∅).
  std::string rows(const std::string& sql) {
    std::string out;
    for (const Row& r : query(sql)) {
      for (size_t i = 0; i < r.size(); ++i) out += (i ? "|" : "") + (r[i].is_null() ? std::string("∅") : r[i].to_text());
      out += "\n";
    }
    return out;
  }
  // Files left in the directory besides `keep`.
  size_t litter(std::initializer_list<const char*> keep) const {
    size_t n = 0;
    for (auto& e : fs::directory_iterator(dir_)) {
      bool kept = false;
      for (const char* k : keep) kept = kept || e.path().filename() == k;
      n += kept ? 0 : 1;
    }
    return n;
  }

  fs::path dir_;
};

TEST_F(FileIoTest, ReadCsvLearnsColumnsAndTypesFromTheFile) {
  const std::string f = write("a.csv",
                              "\xEF\xBB\xBF" "id,name,price,ok,zip\n"
                              "1,apple,1.5,true,00123\n"
                              "2,\"pear, \"\"green\"\"\nsecond line\",2,false,04000\n"
                              "\n"
                              "3,,3.25,TRUE,\"\"\n");
  EXPECT_EQ(rows("select id, name, price, ok, zip from read_csv('" + f + "')"),
            "1|apple|1.5|true|00123\n2|pear, \"green\"\nsecond line|2|false|04000\n3|∅|3.25|true|\n");
  EXPECT_EQ(rows("select typeof(id), typeof(name), typeof(price), typeof(zip) from read_csv('" + f + "') limit 1"),
            "integer|text|real|text\n");
  // An empty unquoted field is NULL, a quoted one the empty text.
  EXPECT_EQ(rows("select name is null, zip = '' from read_csv('" + f + "') where id = 3"), "true|true\n");
  // Columns are ordinary: filter, join, aggregate, insert.
  exec("create table fruit (id integer primary key, name text null)");
  exec("insert into fruit select id, name from read_csv('" + f + "') where price < 3");
  EXPECT_EQ(rows("select count(*) from fruit"), "2\n");
}

TEST_F(FileIoTest, ReadCsvOptions) {
  const std::string f = write("semi.txt", "# exported\nx;y\n1;NA\n2;b\n");
  EXPECT_EQ(rows("select x, y from read_csv('" + f + "', '{\"delimiter\": \";\", \"skip\": 1, \"null\": \"NA\"}')"),
            "1|∅\n2|b\n");
  const std::string g = write("plain.csv", "1,2\n3,4\n");
  EXPECT_EQ(rows("select c1 + c2 from read_csv('" + g + "', '{\"header\": false}')"), "3\n7\n");
  EXPECT_EQ(rows("select typeof(c1) from read_csv('" + g + "', '{\"header\": false, \"infer\": false}') limit 1"),
            "text\n");
  const std::string t = write("t.tsv", "a\tb\n1\tx y\n");
  EXPECT_EQ(rows("select a, b from read_csv('" + t + "')"), "1|x y\n");  // .tsv: tab-separated
  // Repeated and empty header names are made unique.
  const std::string d = write("dup.csv", "a,a,\n1,2,3\n");
  EXPECT_EQ(rows("select a, a_2, c3 from read_csv('" + d + "')"), "1|2|3\n");
}

TEST_F(FileIoTest, ReadCsvErrorsNameFileLineAndWhatToDo) {
  const std::string bad = write("bad.csv", "a,b\n1,2\n3\n");
  fails("select * from read_csv('" + bad + "')", StatusCode::kFormat, "bad.csv:3: expected 2 fields, found 1");
  const std::string late = write("late.csv", "a\n1\n2\nx\n");
  fails("select * from read_csv('" + late + "', '{\"sample\": 2}')", StatusCode::kFormat,
        "late.csv:4: 'x' in column 'a' is not INTEGER");
  EXPECT_EQ(rows("select count(*) from read_csv('" + late + "')"), "3\n");  // the default sample sees it: text
  fails("select * from read_csv('" + path("none.csv") + "')", StatusCode::kCantOpen, "No such file");
  fails("select * from read_csv('" + dir_.string() + "')", StatusCode::kCantOpen, "directory");
  fails("select * from read_csv('" + bad + "', '{\"header\": 1}')", StatusCode::kError, "'header' must be true or false");
  fails("select * from read_csv('" + bad + "', '{\"colums\": []}')", StatusCode::kError, "unknown option 'colums'");
  fails("select * from read_csv(123)", StatusCode::kError, "first argument must be the file's path");
  exec("create table paths (p text primary key)");
  fails("select * from paths cross join lateral read_csv(paths.p)", StatusCode::kError, "must be a constant");
  const std::string open_quote = write("q.csv", "a\n\"never closed\n");
  fails("select * from read_csv('" + open_quote + "')", StatusCode::kFormat, "q.csv:2:");
  const std::string stray = write("stray.csv", "a,b\n1,5\" screen\n");
  fails("select * from read_csv('" + stray + "')", StatusCode::kFormat, "stray.csv:2:");
  EXPECT_EQ(rows("select b from read_csv('" + stray + "', '{\"quote\": \"|\"}')"), "5\" screen\n");
  const std::string empty = write("empty.csv", "");
  fails("select * from read_csv('" + empty + "')", StatusCode::kFormat, "no records");
}

TEST_F(FileIoTest, ReadJsonlTakesKeysInFirstSeenOrder) {
  const std::string f = write("b.jsonl",
                              "{\"id\": 1, \"tags\": [\"x\"], \"v\": 1, \"s\": \"a\"}\n"
                              "\n"
                              "{\"id\": 2, \"v\": 2.5, \"s\": null, \"extra\": true, \"mixed\": 1}\n"
                              "{\"id\": 3, \"mixed\": \"one\"}\n");
  EXPECT_EQ(rows("select id, tags, v, s, extra, mixed from read_jsonl('" + f + "') order by id"),
            "1|[\"x\"]|1|a|∅|∅\n2|∅|2.5|∅|true|1\n3|∅|∅|∅|∅|one\n");
  EXPECT_EQ(rows("select typeof(v), typeof(tags), json_extract(tags, '$[0]') from read_jsonl('" + f + "') where id = 1"),
            "integer|json|x\n");  // 1.0 is an integral number, as in the reference
  EXPECT_EQ(rows("select typeof(v) from read_jsonl('" + f + "') where id = 2"), "real\n");
  const std::string late = write("late.jsonl", "{\"a\": 1}\n{\"a\": 2, \"b\": 3}\n");
  fails("select * from read_jsonl('" + late + "', '{\"sample\": 1}')", StatusCode::kFormat,
        "late.jsonl:2: key 'b' is not among the columns");
  const std::string bad = write("bad.jsonl", "{\"a\": 1}\n{\"a\": \n");
  fails("select * from read_jsonl('" + bad + "')", StatusCode::kFormat, "bad.jsonl:2: not valid JSON");
  const std::string arr = write("arr.jsonl", "[1, 2]\n");
  fails("select * from read_jsonl('" + arr + "')", StatusCode::kFormat, "arr.jsonl:1: a line must be a JSON object");
}

TEST_F(FileIoTest, CopyToWritesEveryFormat) {
  exec("create table t (id integer primary key, name text null, price real null, ok boolean null)");
  exec("insert into t values (1, 'plain', 1.5, true), (2, 'with, comma \"q\"', null, false), (3, '', 2, null)");
  EXPECT_EQ(rows("copy t to '" + path("t.csv") + "'"), "3\n");
  EXPECT_EQ(read("t.csv"), "id,name,price,ok\n1,plain,1.5,true\n2,\"with, comma \"\"q\"\"\",,false\n3,\"\",2,\n");
  exec("copy (select id, name from t where id < 3 order by id desc) to '" + path("q.tsv") + "' (header false, null 'NA')");
  EXPECT_EQ(read("q.tsv"), "2\t\"with, comma \"\"q\"\"\"\n1\tplain\n");
  exec("copy t (id, price) to '" + path("t.jsonl") + "'");
  EXPECT_EQ(read("t.jsonl"), "{\"id\":1,\"price\":1.5}\n{\"id\":2,\"price\":null}\n{\"id\":3,\"price\":2.0}\n");
  exec("copy (select id from t where id = 1) to '" + path("t.json") + "'");
  EXPECT_EQ(read("t.json"), "[\n{\"id\":1}\n]\n");
  exec("copy (select id from t where id > 9) to '" + path("none.json") + "'");
  EXPECT_EQ(read("none.json"), "[]\n");
  exec("copy t to '" + path("t.dat") + "' (format jsonl)");
  EXPECT_EQ(read("t.dat").substr(0, 23), "{\"id\":1,\"name\":\"plain\",");
  fails("copy t to '" + path("x.csv") + "' (format xml)", StatusCode::kError, "expected csv, tsv, jsonl or json");
  fails("copy t to '" + path("x.csv") + "' (header maybe)", StatusCode::kError, "expected true or false");
  fails("copy t to '" + path("x.csv") + "' (skip 1)", StatusCode::kError, "unknown COPY option 'skip'");
  fails("copy t to '" + path("no/such/dir/x.csv") + "'", StatusCode::kCantOpen, "cannot write");
  fails("copy nope to '" + path("x.csv") + "'", StatusCode::kNotFound, "nope");
}

TEST_F(FileIoTest, AFailedCopyToLeavesTheTargetAsItWas) {
  exec("create table t (id integer primary key)");
  exec("insert into t values (1), (2), (3), (4)");
  write("out.csv", "old\n");
  // The third row's scalar subquery returns two rows: the statement fails part-way.
  fails("copy (select id, (select 1 union all select 2 where t.id = 3) as x from t order by id) to '" + path("out.csv") +
            "'",
        StatusCode::kError, "");
  EXPECT_EQ(read("out.csv"), "old\n");
  EXPECT_EQ(litter({"out.csv"}), 0u);  // no temporary file left
  exec("copy t to '" + path("out.csv") + "'");
  EXPECT_EQ(read("out.csv"), "id\n1\n2\n3\n4\n");
  EXPECT_EQ(litter({"out.csv"}), 0u);
}

TEST_F(FileIoTest, CopyFromRoundTripsWhatCopyToWrote) {
  exec("create table t (id integer primary key, name text null, price real null, ok boolean null, note text null)");
  exec("insert into t values (1, 'plain', 1.5, true, 'é ü 漢字 🙂'), (2, 'with, comma \"q\"', null, false, 'two\nlines'),"
       " (3, '', -2.25e10, null, ' spaces ')");
  for (const char* file : {"rt.csv", "rt.tsv", "rt.jsonl"}) {
    SCOPED_TRACE(file);
    exec("copy t to '" + path(file) + "'");
    exec("create table u (id integer primary key, name text null, price real null, ok boolean null, note text null)");
    EXPECT_EQ(rows("copy u from '" + path(file) + "'"), "3\n");
    EXPECT_EQ(rows("select count(*) from (select * from t except select * from u)"), "0\n");
    EXPECT_EQ(rows("select count(*) from u"), "3\n");
    exec("drop table u");
  }
  // Without a header the fields fill the columns in order; a column list picks them.
  write("pos.csv", "10,ten\n11,eleven\n");
  exec("create table p (id integer primary key, name text, extra text null)");
  exec("copy p (id, name) from '" + path("pos.csv") + "' (header false)");
  EXPECT_EQ(rows("select id, name, extra from p order by id"), "10|ten|∅\n11|eleven|∅\n");
}

TEST_F(FileIoTest, AFailedCopyFromKeepsNothingAndNamesTheLine) {
  exec("create table t (id integer primary key, n integer null)");
  exec("insert into t values (3, 0)");
  write("in.csv", "id,n\n1,10\n2,20\n3,30\n4,40\n");
  fails("copy t from '" + path("in.csv") + "'", StatusCode::kConstraint, "in.csv:4: UNIQUE constraint failed");
  EXPECT_EQ(rows("select id from t"), "3\n");
  write("typed.csv", "id,n\n5,50\n6,many\n");
  fails("copy t from '" + path("typed.csv") + "'", StatusCode::kMismatch, "typed.csv:3:");
  EXPECT_EQ(rows("select id from t"), "3\n");
  write("cols.csv", "id,nope\n1,2\n");
  fails("copy t from '" + path("cols.csv") + "'", StatusCode::kError, "nope");
  // Inside a transaction the rows are the transaction's: a rollback takes them back.
  exec("begin");
  exec("copy t from '" + path("typed.csv") + "' (skip 0, null 'many')");
  EXPECT_EQ(rows("select id, n from t order by id"), "3|0\n5|50\n6|∅\n");
  exec("rollback");
  EXPECT_EQ(rows("select id from t"), "3\n");
  fails("copy t from '" + path("x.json") + "'", StatusCode::kError, "csv, tsv or jsonl");
}

// Found by review: each of these lost or changed data, or crashed.
TEST_F(FileIoTest, RoundTripsTheEdgeCases) {
  // A NULL in a one-column file is a blank line, and reads back as NULL.
  exec("create table one (s text null)");
  exec("insert into one values ('a'), (null), ('b'), ('')");
  exec("copy one to '" + path("one.csv") + "'");
  exec("create table one2 (s text null)");
  EXPECT_EQ(rows("copy one2 from '" + path("one.csv") + "'"), "4\n");
  EXPECT_EQ(rows("select count(*), count(s), sum(s = '') from one2"), "4|3|1\n");
  // Tabs and spaces at a field's edges are kept, written or read.
  exec("create table edges (id integer primary key, s text)");
  exec("insert into edges values (1, char(9) || 'tab' || char(9)), (2, '  two  ')");
  exec("copy edges to '" + path("edges.csv") + "'");
  exec("create table edges2 (id integer primary key, s text)");
  exec("copy edges2 from '" + path("edges.csv") + "'");
  EXPECT_EQ(rows("select count(*) from (select * from edges except select * from edges2)"), "0\n");
  const std::string spaced = write("spaced.csv", "a,b\n1,  y  \n");
  EXPECT_EQ(rows("select '[' || b || ']' from read_csv('" + spaced + "')"), "[  y  ]\n");
  // The NULL text is never written for a real value, and an empty one adds nothing.
  exec("create table na (id integer primary key, s text null)");
  exec("insert into na values (1, 'NA'), (2, null)");
  fails("copy na to '" + path("na.csv") + "' (null 'NA')", StatusCode::kError, "the text chosen for NULL");
  EXPECT_FALSE(fs::exists(path("na.csv")));
  const std::string empty_null = write("en.csv", "a,b\n1,\"\"\n2,\n");
  EXPECT_EQ(rows("select b is null from read_csv('" + empty_null + "', '{\"null\": \"\"}') order by a"),
            "false\ntrue\n");
  // Hexadecimal is text, not a number; integers past int64 stay exact.
  const std::string hex = write("hex.csv", "code,big\n0x1A,99999999999999999999\n0x10,1\n");
  EXPECT_EQ(rows("select code, typeof(code) from read_csv('" + hex + "') order by code"), "0x10|text\n0x1A|text\n");
  EXPECT_EQ(rows("select count(*) from read_csv('" + hex + "') where big = 99999999999999999999"), "1\n");
  // Header names made unique never collide, in either reader.
  const std::string dup = write("dup3.csv", "a,a,a_2\n1,2,3\n");
  EXPECT_EQ(rows("select a, a_2, a_2_2 from read_csv('" + dup + "')"), "1|2|3\n");
  const std::string keys = write("keys.jsonl", "{\"a\": 1, \"A\": 2, \"\": 3}\n");
  EXPECT_EQ(rows("select a, a_2, c3 from read_jsonl('" + keys + "')"), "1|2|3\n");
  // Deep nesting is refused, not a crash.
  const std::string deep = write("deep.jsonl", "{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}\n");
  fails("select * from read_jsonl('" + deep + "')", StatusCode::kFormat, "nested deeper than 1000");
}

TEST_F(FileIoTest, CopyToWritesOnlyRegularFilesAndNeverThroughALink) {
  exec("create table t (a integer primary key)");
  exec("insert into t values (1)");
  write("victim.txt", "precious\n");
  fs::create_symlink(path("victim.txt"), path("link.csv"));
  fails("copy t to '" + path("link.csv") + "'", StatusCode::kCantOpen, "symbolic link");
  EXPECT_EQ(read("victim.txt"), "precious\n");
  fails("copy t to ''", StatusCode::kCantOpen, "empty");
  // A target keeps its permissions.
  write("kept.csv", "old\n");
  fs::permissions(path("kept.csv"), fs::perms::owner_read | fs::perms::owner_write);
  exec("copy t to '" + path("kept.csv") + "'");
  EXPECT_EQ(fs::status(path("kept.csv")).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(read("kept.csv"), "a\n1\n");
  fails("copy t to '" + path("x.csv") + "' (delimiter '\"')", StatusCode::kError, "cannot be a quote");
  // Reading needs a regular file: it is read once for the columns and again for the rows.
  ASSERT_EQ(::mkfifo(path("fifo.csv").c_str(), 0600), 0);
  fails("select * from read_csv('" + path("fifo.csv") + "')", StatusCode::kCantOpen, "not a regular file");
}

TEST_F(FileIoTest, FileAccessIsADeploymentChoice) {
  const std::string f = write("a.csv", "a\n1\n");
  for (auto access : {DatabaseOptions::FileAccess::kNone, DatabaseOptions::FileAccess::kRead}) {
    DatabaseOptions options;
    options.file_access = access;
    std::unique_ptr<Database> db;
    Status opened = Database::Open(registry_, options, &db);
    ASSERT_TRUE(opened.ok()) << opened.to_string();
    ASSERT_TRUE(db->exec("create table t (a integer primary key)").ok());
    Status copy_to = db->exec("copy t to '" + path("b.csv") + "'");
    EXPECT_FALSE(copy_to.ok());
    EXPECT_NE(copy_to.message().find("file_access"), std::string::npos) << copy_to.to_string();
    Status read = db->exec("select * from read_csv('" + f + "')");
    Status copy_from = db->exec("copy t from '" + f + "'");
    EXPECT_EQ(read.ok(), access == DatabaseOptions::FileAccess::kRead) << read.to_string();
    EXPECT_EQ(copy_from.ok(), access == DatabaseOptions::FileAccess::kRead) << copy_from.to_string();
  }
  EXPECT_FALSE(fs::exists(path("b.csv")));
}

TEST_F(FileIoTest, CopySyntaxErrors) {
  exec("create table t (id integer primary key)");
  fails("copy t", StatusCode::kSyntax, "Expected TO or FROM");
  fails("copy t to 42", StatusCode::kSyntax, "Expected the file's path as a string");
  fails("copy (select 1) from 'x.csv'", StatusCode::kSyntax, "Expected TO");
  fails("copy t to 'x.csv' (format", StatusCode::kSyntax, "");
}

}  // namespace
}  // namespace quereus
