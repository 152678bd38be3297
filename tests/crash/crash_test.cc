// quereus-crash-test: kills a writer process with SIGKILL at random moments, many times,
// and checks the reopened store against the writer's log of acknowledged commits
// (issue 6, point 3; docs/store.md "Crash safety").
//
//   quereus-crash-test --plugin-dir DIR [--runs 200] [--dir PATH] [--seed N]
//                      [--min-ms 5] [--max-ms 120]
//
// Each run forks a writer that opens the database (store module, sync on commit) and
// commits transactions in a loop: transaction i inserts row i into table a and row i into
// table b (same payload), updates counter row 0 of table c to i, and deletes row i-10 of
// table b. After COMMIT returns the writer appends i to the ack log and fsyncs it. The
// parent kills the writer after a random delay, reopens the database and verifies:
//   - durability: every acknowledged i is present in a, b (unless deleted later by an
//     acknowledged transaction) and c's counter is >= the last acknowledged i;
//   - atomicity: for every i in a, the rest of transaction i is there too (b has i or a
//     later transaction deleted it; c's counter >= i); no i in b without a;
//   - at most one unacknowledged transaction is visible (committed, killed before the ack);
//     the verifier then acknowledges it, as it is durable from then on.
// Prints the number of runs and of violations; exits 1 when any violation was found.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "crash_db.h"

namespace fs = std::filesystem;
using namespace quereus;

namespace {

struct Options {
  std::string plugin_dir;
  std::string dir;
  int runs = 200;
  unsigned seed = 0;
  int min_ms = 5;
  int max_ms = 120;
};

Status open_db(const Options& o, std::shared_ptr<Registry>* registry, std::unique_ptr<Database>* db) {
  return crash::open_store_db(o.plugin_dir, o.dir, registry, db);
}

std::vector<Row> rows(Database& db, const std::string& sql, Status* st) { return crash::query_rows(db, sql, st); }

// The 200 rows of table d, as a VALUES list.
std::string d_rows() {
  std::string v;
  for (int k = 1; k <= 200; ++k) v += (k > 1 ? ", (" : "(") + std::to_string(k) + ", 'w" + std::to_string(k) + "')";
  return v;
}

// The child: commits forever (until killed), acknowledging each commit in the log.
[[noreturn]] void writer(const Options& o) {
  std::shared_ptr<Registry> registry;
  std::unique_ptr<Database> db;
  Status st = open_db(o, &registry, &db);
  if (!st.ok()) {
    std::cerr << "writer: " << st.to_string() << "\n";
    _exit(3);
  }
  st = db->exec(
      "create table if not exists a (id integer primary key, payload text);"
      "create table if not exists b (id integer primary key, payload text);"
      "create table if not exists c (k integer primary key, n integer);"
      "insert or ignore into c values (0, 0);"
      "create table if not exists d (k integer primary key, w text unique);"
      "insert or ignore into d (k, w) values " + d_rows() + ";"
      // Materialized views maintained inside every transaction, one per strategy: an
      // inverse projection of b, a join of a and b (join residual) and a grouping of b by
      // an expression (full rebuild). They live in the store and are adopted, not
      // refilled, when the database reopens: the verifier compares each with its body.
      "create materialized view if not exists mv_b as select id, payload from b where id % 3 = 0;"
      "create materialized view if not exists mv_ab as select a.id, b.payload from a join b on a.id = b.id;"
      "create materialized view if not exists mv_g as select id % 5 as g, count(*) as n, max(id) as hi from b "
      "group by id % 5;"
      // A group view folded by arithmetic (inserts, deletes and updates alike).
      "create table if not exists gs (id integer primary key, g integer not null, v integer not null);"
      "create materialized view if not exists mv_gs as select g, count(*) as n, sum(v) as t, avg(v) as av from gs "
      "group by g;"
      // A lateral fan-out (prefix delete): each gs row's slice replaced per change.
      "create materialized view if not exists mv_fan as select gs.id, f.value from gs cross join lateral "
      "generate_series(0, gs.g) f");
  if (!st.ok()) {
    std::cerr << "writer: setup: " << st.to_string() << "\n";
    _exit(3);
  }
  auto last = rows(*db, "select coalesce(max(id), 0) from a", &st);
  if (!st.ok()) {
    std::cerr << "writer: " << st.to_string() << "\n";
    _exit(3);
  }
  int64_t i = last[0][0].as_int();
  int log = ::open((o.dir + "/acks.log").c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (log < 0) _exit(3);
  std::string pad(200, 'x');
  for (;;) {
    ++i;
    std::string n = std::to_string(i), p = "'" + n + "-" + pad + "'";
    st = db->exec("begin; insert into a values (" + n + ", " + p + "); insert into b values (" + n + ", " + p +
                  "); update c set n = " + n + " where k = 0; delete from b where id = " + std::to_string(i - 10) +
                  "; insert into gs values (" + n + ", " + std::to_string(i % 4) + ", " + n +
                  "); update gs set v = v + 1, g = (g + 1) % 4 where id = " + std::to_string(i - 5) +
                  "; delete from gs where id = " + std::to_string(i - 12) + "; commit");
    if (!st.ok()) {
      std::cerr << "writer: transaction " << n << ": " << st.to_string() << "\n";
      _exit(4);
    }
    // Every seventh transaction is followed by a DDL statement (its own crash-atomic
    // schema change): an index, a view and a column come and go.
    if (i % 7 == 0) {
      std::string ddl;
      switch ((i / 7) % 6) {
        case 0: ddl = "create index if not exists ia on a (payload)"; break;
        case 1: ddl = "drop index if exists ia"; break;
        case 2: ddl = "create view if not exists v as select id, payload from a where id > 5"; break;
        case 3: ddl = "drop view if exists v"; break;
        default: {
          bool has_e = !rows(*db, "select name from table_info('d') where name = 'e'", &st).empty();
          if (!st.ok()) break;
          ddl = has_e ? "alter table d drop column e" : "alter table d add column e text null default 'x'";
        }
      }
      if (st.ok() && !ddl.empty()) st = db->exec(ddl);
      if (!st.ok()) {
        std::cerr << "writer: DDL after transaction " << n << ": " << st.to_string() << "\n";
        _exit(4);
      }
    }
    std::string line = n + "\n";
    if (::write(log, line.data(), line.size()) != static_cast<ssize_t>(line.size()) || ::fsync(log) != 0) _exit(5);
  }
}

std::vector<int64_t> read_acks(const std::string& path) {
  std::vector<int64_t> acks;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) acks.push_back(std::stoll(line));  // a torn last line cannot parse past digits
  return acks;
}

// Verifies the reopened database; returns the violations found (printed).
int verify(const Options& o, int run) {
  std::shared_ptr<Registry> registry;
  std::unique_ptr<Database> db;
  Status st = open_db(o, &registry, &db);
  auto report = [&](const std::string& what) {
    std::cerr << "run " << run << ": VIOLATION: " << what << "\n";
    return 1;
  };
  if (!st.ok()) return report("reopen failed: " + st.to_string());
  std::vector<int64_t> acks = read_acks(o.dir + "/acks.log");
  int64_t acked = acks.empty() ? 0 : acks.back();
  // Killed during the writer's first setup (three CREATE TABLEs, each its own statement,
  // before any commit was acknowledged): a table may be missing; the next writer makes it.
  auto read = [&](const std::string& sql, const char* what, std::vector<Row>* out) {
    *out = rows(*db, sql, &st);
    if (st.ok()) return true;
    if (!acks.empty()) report(std::string("reading ") + what + ": " + st.to_string());
    return false;
  };
  std::vector<Row> a_rows, b_rows, c_rows;
  if (!read("select id, payload from a order by id", "a", &a_rows) ||
      !read("select id, payload from b order by id", "b", &b_rows) ||
      !read("select n from c where k = 0", "c", &c_rows))
    return acks.empty() ? 0 : 1;
  // Killed between creating c and inserting its counter row: the setup did not finish and
  // nothing was acknowledged (the next writer completes it).
  if (c_rows.empty() && acks.empty() && a_rows.empty() && b_rows.empty()) return 0;
  int violations = 0;
  std::set<int64_t> a_ids, b_ids;
  for (auto& r : a_rows) a_ids.insert(r[0].as_int());
  for (auto& r : b_rows) b_ids.insert(r[0].as_int());
  int64_t max_a = a_ids.empty() ? 0 : *a_ids.rbegin();
  int64_t counter = c_rows.empty() ? -1 : c_rows[0][0].as_int();
  // Durability: every acknowledged transaction is there.
  for (int64_t i : acks)
    if (!a_ids.count(i)) violations += report("acknowledged transaction " + std::to_string(i) + " lost (a)");
  if (counter < acked) violations += report("counter " + std::to_string(counter) + " behind ack " + std::to_string(acked));
  // At most the one transaction in flight when killed is visible unacknowledged.
  if (max_a > acked + 1) violations += report("transaction " + std::to_string(max_a) + " visible, last ack " + std::to_string(acked));
  // Atomicity: each transaction entirely or not at all.
  if (!a_ids.empty() && counter != max_a)
    violations += report("counter " + std::to_string(counter) + " but last row of a " + std::to_string(max_a));
  for (int64_t i : a_ids) {
    bool deleted_later = a_ids.count(i + 10) != 0;  // transaction i+10 deleted b's row i
    if (!deleted_later && !b_ids.count(i)) violations += report("transaction " + std::to_string(i) + " half there (b)");
    if (deleted_later && b_ids.count(i)) violations += report("transaction " + std::to_string(i + 10) + " half there (b delete)");
  }
  for (int64_t i : b_ids)
    if (!a_ids.count(i)) violations += report("b has " + std::to_string(i) + " without a");
  // The DDL of the workload: whatever schema the kill left, it is whole and consistent.
  std::vector<Row> ic = rows(*db, "pragma integrity_check", &st);
  if (!st.ok()) violations += report("integrity_check: " + st.to_string());
  for (const Row& r : ic)
    if (r[0].to_text() != "ok") violations += report("integrity: " + r[0].to_text());
  // The materialized view equals its body over the recovered b.
  std::vector<Row> mv = rows(*db, "select id, payload from mv_b order by id", &st);
  if (st.ok()) {
    std::vector<Row> body = rows(*db, "select id, payload from b where id % 3 = 0 order by id", &st);
    if (st.ok() && mv != body)
      violations += report("mv_b has " + std::to_string(mv.size()) + " rows, its body " + std::to_string(body.size()));
  } else if (!acks.empty()) {
    violations += report("reading mv_b: " + st.to_string());
  }
  for (auto [view, body] : {std::pair<const char*, const char*>{"select id, payload from mv_ab order by id",
                                                                 "select a.id, b.payload from a join b on a.id = b.id "
                                                                 "order by a.id"},
                            {"select g, n, hi from mv_g order by g",
                             "select id % 5, count(*), max(id) from b group by id % 5 order by 1"},
                            {"select g, n, t, av from mv_gs order by g",
                             "select g, count(*), sum(v), avg(v) from gs group by g order by g"},
                            {"select id, value from mv_fan order by id, value",
                             "select gs.id, f.value from gs cross join lateral generate_series(0, gs.g) f "
                             "order by 1, 2"}}) {
    std::vector<Row> got = rows(*db, view, &st);
    if (!st.ok()) {
      if (!acks.empty()) violations += report(std::string("reading ") + view + ": " + st.to_string());
      continue;
    }
    std::vector<Row> want = rows(*db, body, &st);
    if (st.ok() && got != want)
      violations += report(std::string(view) + " gives " + std::to_string(got.size()) + " rows, its body " +
                           std::to_string(want.size()));
  }
  std::vector<Row> d_count = rows(*db, "select count(*) from d", &st);
  if (st.ok() && !d_count.empty() && d_count[0][0].as_int() != 200 && !acks.empty())
    violations += report("d has " + d_count[0][0].to_text() + " rows, not 200");
  if (st.ok() && !acks.empty() && db->exec("insert into d (k, w) values (-1, 'w7')").code() != StatusCode::kConstraint)
    violations += report("a duplicate of d's UNIQUE w was not refused");
  // The commit that landed but was killed before its acknowledgement is durable now (it
  // survived the reopen): acknowledge it, so the next run's writer, which continues after
  // it, is judged against it.
  if (violations == 0 && max_a == acked + 1) {
    std::ofstream log(o.dir + "/acks.log", std::ios::app);
    log << max_a << "\n";
  }
  return violations;
}

int usage(const std::string& why) {
  std::cerr << "quereus-crash-test: " << why
            << "\nusage: quereus-crash-test --plugin-dir DIR [--runs N] [--dir PATH] [--seed N] [--min-ms N] [--max-ms N]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);  // no per-open "loaded plugin" lines
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--plugin-dir") o.plugin_dir = value();
    else if (a == "--dir") o.dir = value();
    else if (a == "--runs") o.runs = std::atoi(value().c_str());
    else if (a == "--seed") o.seed = static_cast<unsigned>(std::strtoul(value().c_str(), nullptr, 10));
    else if (a == "--min-ms") o.min_ms = std::atoi(value().c_str());
    else if (a == "--max-ms") o.max_ms = std::atoi(value().c_str());
    else return usage("unknown argument " + a);
  }
  if (o.plugin_dir.empty()) return usage("--plugin-dir is required");
  if (o.runs <= 0 || o.min_ms < 0 || o.max_ms < o.min_ms) return usage("bad --runs / --min-ms / --max-ms");
  bool own_dir = o.dir.empty();
  if (own_dir) {
    std::string tmpl = (fs::temp_directory_path() / "quereus-crash-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) return usage("cannot make a temporary directory");
    o.dir = tmpl;
  }
  fs::create_directories(o.dir);
  if (o.seed == 0) o.seed = static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count());
  std::mt19937 rng(o.seed);
  std::uniform_int_distribution<int> delay(o.min_ms, o.max_ms);
  std::cout << "crash test: " << o.runs << " runs in " << o.dir << " (seed " << o.seed << ")" << std::endl;
  int violations = 0, writer_errors = 0;
  for (int run = 1; run <= o.runs; ++run) {
    pid_t pid = fork();
    if (pid < 0) return usage("fork failed");
    if (pid == 0) writer(o);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay(rng)));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) {  // the writer stopped on its own: an error before the kill
      ++writer_errors;
      std::cerr << "run " << run << ": writer exited with status " << WEXITSTATUS(status) << "\n";
    }
    violations += verify(o, run);
    if (run % 20 == 0 || run == o.runs)
      std::cout << "  " << run << "/" << o.runs << " runs, " << read_acks(o.dir + "/acks.log").size()
                << " acknowledged commits, " << violations << " violations" << std::endl;
  }
  std::cout << o.runs << " runs, " << violations << " violations, " << writer_errors << " writer errors" << std::endl;
  if (own_dir) fs::remove_all(o.dir);
  return violations == 0 && writer_errors == 0 ? 0 : 1;
}
