// quereus-difftest: random schemas, rows and queries run on Quereus and on SQLite, the
// results compared as multisets (as lists where the query's ORDER BY fixes the order).
// The generator (sql_generator.h) keeps to the subset where the two engines document the
// same semantics; docs/conformance.md, "Differential testing against SQLite", lists the
// differences it avoids and why.
//
//   quereus-difftest [--seed N] [--queries N | --seconds S] [--per-database N] [--databases N]
//                    [--plugin-dir DIR] [--keep-going] [--verbose]
//
// Each database i of a run is generated from seed + i, so a finding is reproduced by
// `--seed <seed + i>` alone. On a disagreement (different rows, an error on one side only,
// an INTERNAL error or an exception out of our engine) the run prints the seed and a
// minimal SQL script — the schema, the rows that still matter after shrinking, the query
// and both results — and exits 1. Exit 2: usage or setup errors.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "config/host_setup.h"
#include "config/logging.h"
#include "diff_engine.h"
#include "plugin/plugin_loader.h"
#include "sql_generator.h"

namespace {

using namespace quereus;
using namespace quereus::difftest;

std::string g_module = "memory";  // set once by main() before any database opens

constexpr const char* kUsage =
    "Usage: quereus-difftest [options]\n"
    "  --seed N           the first database's seed (default: from the clock; printed)\n"
    "  --queries N        stop after N compared queries (default: 2000)\n"
    "  --seconds S        stop after S seconds instead\n"
    "  --per-database N   queries against each generated database (default: 60)\n"
    "  --databases N      stop after N databases\n"
    "  --module NAME      where our tables live: memory (default) or store (a fresh\n"
    "                     LevelDB directory per database, commits not synced)\n"
    "  --plugin-dir DIR   where mem.so / store.so are found (default: <exe dir>/../lib/quereus)\n"
    "  --keep-going       report every disagreement, continue with the next database\n"
    "  --verbose          print every query and its row count\n";

// ---------------------------------------------------------------- results

// `digits`: the significant digits a REAL keeps (see same_rows).
std::string canonical(const Cell& c, CollName fold, int digits = 12) {
  char buf[64];
  switch (c.kind) {
    case Cell::Kind::kNull:
      return "NULL";
    case Cell::Kind::kInt:
      return "N:" + std::to_string(c.i);
    case Cell::Kind::kReal:
      // A sliding window frame leaves SQLite's sums with rounding residue (it subtracts the
      // rows that leave the frame; 8.3e-17 where the exact sum is 0).
      if (std::fabs(c.r) < 1e-9) return "N:0";
      // By value: an integral REAL equals the INTEGER of the same value.
      if (std::isfinite(c.r) && c.r == std::floor(c.r) && std::fabs(c.r) < 1e15)
        return "N:" + std::to_string(static_cast<long long>(c.r));
      std::snprintf(buf, sizeof buf, "N:%.*g", digits, c.r);
      return buf;
    case Cell::Kind::kText: {
      std::string s = c.s;
      if (fold == CollName::kNocase)
        for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (fold == CollName::kRtrim)
        while (!s.empty() && s.back() == ' ') s.pop_back();
      return "T:" + s;
    }
    case Cell::Kind::kBlob: {
      std::string out = "B:";
      for (unsigned char ch : c.s) {
        std::snprintf(buf, sizeof buf, "%02x", ch);
        out += buf;
      }
      return out;
    }
  }
  return "?";
}

using Rows = std::vector<std::vector<std::string>>;

Rows canonical_rows(const QueryResult& r, const GeneratedQuery& q, int digits = 12) {
  Rows out;
  for (const auto& row : r.rows) {
    std::vector<std::string> line;
    for (size_t i = 0; i < row.size(); ++i)
      line.push_back(canonical(row[i], i < q.columns.size() ? q.columns[i].fold : CollName::kBinary, digits));
    out.push_back(std::move(line));
  }
  if (!q.ordered) std::sort(out.begin(), out.end());
  return out;
}

// Equal at 12 significant digits, or failing that at 9: a running or sliding sum that
// cancels down to a small value keeps the rounding residue of the order it added in
// (SQLite's running sum -0.0208333333334, ours -0.0208333333333), which is no semantic
// difference.
bool same_rows(const QueryResult& a, const QueryResult& b, const GeneratedQuery& q) {
  return canonical_rows(a, q) == canonical_rows(b, q) || canonical_rows(a, q, 9) == canonical_rows(b, q, 9);
}

std::string show_rows(const QueryResult& r, const GeneratedQuery& q) {
  if (!r.ok) return "  error: " + r.error + "\n";
  Rows rows = canonical_rows(r, q);
  std::string out;
  size_t shown = 0;
  for (const auto& row : rows) {
    if (++shown > 30) {
      out += "  … " + std::to_string(rows.size() - 30) + " more\n";
      break;
    }
    out += " ";
    for (const std::string& v : row) out += " " + v;
    out += "\n";
  }
  return out + "  (" + std::to_string(rows.size()) + " rows)\n";
}

// ---------------------------------------------------------------- one comparison

enum class Verdict { kSame, kBothRefused, kSqliteBug, kTooLarge, kDiffer };

// Results past this many rows (a cross product of views), or that SQLite does not finish
// in 10 s, are not compared: SQLite answers first, and such a query is skipped and counted,
// to keep a run's time bounded.
constexpr size_t kRowLimit = 100000;

// SQLite 3.40.1 errors that are its own bugs (fixed in later releases) or limits, met on
// queries valid in both dialects: such a query is skipped and counted, not compared.
bool known_sqlite_bug(const std::string& error) {
  // A false "ON clause references tables to its right" when a RIGHT / FULL JOIN sits in
  // a flattened subquery or beside an ON clause holding a subquery or a constant.
  // "parser stack overflow": a limit of SQLite's parser on deeply nested statements.
  // "database disk image is malformed" from an in-memory database: SQLite's ephemeral
  // index meeting collation-equal keys apart — an IN list of three RTRIM-equal values
  // (`c1 in (' ', '', ' ')` over an RTRIM column, seed 990301901); the covering-index
  // form of it is avoided by turning that scan off (diff_engine.cc).
  return error.find("ON clause references tables to its right") != std::string::npos ||
         error.find("parser stack overflow") != std::string::npos ||
         error.find("database disk image is malformed") != std::string::npos;
}

struct Outcome {
  Verdict verdict = Verdict::kSame;
  std::string what;  // for kDiffer
  QueryResult ours, theirs;
};

// Loads `schema` (with only `rows`, then the data changes of `history`) into both
// engines; a load failure is a disagreement, except kSqliteBugOnLoad: a view SQLite
// refuses for a known bug of its own (a parser stack overflow, seed 990611442), whose
// database is skipped and counted.
const char* const kSqliteBugOnLoad = "a known SQLite bug";

struct Pair {
  std::unique_ptr<DiffEngine> ours, theirs;
};

std::string load(Pair& p, const std::shared_ptr<Registry>& registry, const GeneratedSchema& schema,
                 const std::vector<std::string>& rows, const std::vector<std::string>& history) {
  std::string dir;
  if (g_module != "memory") {
    dir = (std::filesystem::temp_directory_path() / "quereus-difftest-XXXXXX").string();
    if (!mkdtemp(dir.data())) return "cannot make a temporary directory";
  }
  p.ours = open_quereus(registry, g_module, dir);
  p.theirs = open_sqlite();
  if (!p.ours) return "cannot open a Quereus database on module " + g_module;
  for (const std::string& ddl : schema.quereus_ddl)
    if (QueryResult r = p.ours->exec(ddl); !r.ok) return "Quereus refused `" + ddl + "`: " + r.error;
  for (const std::string& ddl : schema.sqlite_ddl)
    if (QueryResult r = p.theirs->exec(ddl); !r.ok) return "SQLite refused `" + ddl + "`: " + r.error;
  for (const std::string& view : schema.view_ddl) {
    QueryResult a = p.ours->exec(view), b = p.theirs->exec(view);
    if (a.ok && !b.ok && known_sqlite_bug(b.error)) return kSqliteBugOnLoad;
    if (!a.ok || !b.ok)
      return "`" + view + "`: Quereus " + (a.ok ? "ok" : a.error) + ", SQLite " + (b.ok ? "ok" : b.error);
  }
  for (const std::vector<std::string>* list : {&rows, &history})
    for (const std::string& sql : *list) {
      QueryResult a = p.ours->exec(sql), b = p.theirs->exec(sql);
      if (a.ok != b.ok || a.internal)
        return "`" + sql + "`: Quereus " + (a.ok ? "ok" : a.error) + ", SQLite " + (b.ok ? "ok" : b.error);
    }
  return "";
}

// Every table's rows, compared after a data change; empty when they agree.
std::string compare_tables(Pair& p, const GeneratedSchema& schema) {
  for (const TableDef& t : schema.tables) {
    GeneratedQuery q;
    q.sql = "select * from " + t.name;
    for (const ColumnDef& c : t.columns) q.columns.push_back(OutColumn{c.type});
    QueryResult a = p.ours->query(q.sql), b = p.theirs->query(q.sql);
    if (!a.ok || !b.ok || !same_rows(a, b, q))
      return "table " + t.name + " differs after the change\n-- Quereus\n" + show_rows(a, q) + "-- SQLite\n" +
             show_rows(b, q);
  }
  return "";
}

Outcome compare(Pair& p, const GeneratedQuery& q) {
  Outcome o;
  o.theirs = p.theirs->query(q.sql, kRowLimit);
  if (o.theirs.truncated || o.theirs.timed_out) {
    o.verdict = Verdict::kTooLarge;
    return o;
  }
  o.ours = p.ours->query(q.sql);
  if (o.ours.internal) {
    o.verdict = Verdict::kDiffer;
    o.what = "INTERNAL error in Quereus";
  } else if (o.ours.timed_out) {
    o.verdict = Verdict::kDiffer;
    o.what = "Quereus did not finish in 10 s a query SQLite answered";
  } else if (!o.ours.ok && !o.theirs.ok) {
    o.verdict = Verdict::kBothRefused;
  } else if (!o.ours.ok) {
    o.verdict = Verdict::kDiffer;
    o.what = "Quereus refused a query SQLite ran";
  } else if (!o.theirs.ok && known_sqlite_bug(o.theirs.error)) {
    o.verdict = Verdict::kSqliteBug;
  } else if (!o.theirs.ok) {
    o.verdict = Verdict::kDiffer;
    o.what = "SQLite refused a query Quereus ran";
  } else if (!same_rows(o.ours, o.theirs, q)) {
    o.verdict = Verdict::kDiffer;
    o.what = q.ordered ? "different rows (as ordered lists)" : "different rows (as multisets)";
  }
  return o;
}

// Drops rows while the same kind of disagreement remains.
std::vector<std::string> shrink(const std::shared_ptr<Registry>& registry, const GeneratedSchema& schema,
                                const std::vector<std::string>& history, const GeneratedQuery& q,
                                const std::string& what) {
  std::vector<std::string> rows = schema.rows;
  for (size_t i = rows.size(); i-- > 0;) {
    std::vector<std::string> fewer = rows;
    fewer.erase(fewer.begin() + static_cast<long>(i));
    Pair p;
    if (!load(p, registry, schema, fewer, history).empty()) continue;
    Outcome o = compare(p, q);
    if (o.verdict == Verdict::kDiffer && o.what == what) rows = std::move(fewer);
  }
  return rows;
}

void print_script(const GeneratedSchema& schema, const std::vector<std::string>& rows,
                  const std::vector<std::string>& history) {
  std::cout << "-- Quereus schema\n";
  for (const std::string& s : schema.quereus_ddl) std::cout << s << ";\n";
  std::cout << "-- SQLite schema\n";
  for (const std::string& s : schema.sqlite_ddl) std::cout << s << ";\n";
  std::cout << "-- views (both)\n";
  for (const std::string& s : schema.view_ddl) std::cout << s << ";\n";
  std::cout << "-- rows (" << rows.size() << " of " << schema.rows.size() << " still needed)\n";
  for (const std::string& s : rows) std::cout << s << ";\n";
  std::cout << "-- data changes so far (both)\n";
  for (const std::string& s : history) std::cout << s << ";\n";
}

void report(const std::shared_ptr<Registry>& registry, uint64_t db_seed, int query_index,
            const GeneratedSchema& schema, const std::vector<std::string>& history, const GeneratedQuery& q,
            const std::string& what) {
  // A slow query is not shrunk: every attempt could take the whole time limit.
  std::vector<std::string> rows =
      what.find("did not finish") == std::string::npos ? shrink(registry, schema, history, q, what) : schema.rows;
  Pair p;
  load(p, registry, schema, rows, history);
  Outcome o = compare(p, q);
  std::cout << "\n==== DISAGREEMENT: " << what << "\n"
            << "seed " << db_seed << ", query " << query_index << " (reproduce: quereus-difftest --seed " << db_seed
            << (g_module == "memory" ? "" : " --module " + g_module) << " --databases 1 --per-database " << (query_index + 1) << ")\n"
            ;
  print_script(schema, rows, history);
  std::cout << "-- query\n" << q.sql << ";\n"
            << "-- Quereus\n" << show_rows(o.ours, q) << "-- SQLite\n" << show_rows(o.theirs, q) << std::flush;
}

bool parse_number(const char* s, long long* out) {
  char* end = nullptr;
  *out = std::strtoll(s, &end, 10);
  return *s && !*end;
}

}  // namespace

int main(int argc, char** argv) {
  long long seed = static_cast<long long>(std::chrono::system_clock::now().time_since_epoch().count() % 1000000007);
  long long queries = 2000, seconds = 0, per_database = 60, max_databases = 0;
  bool keep_going = false, verbose = false;
  std::string plugin_dir;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--keep-going") {
      keep_going = true;
    } else if (arg == "--verbose") {
      verbose = true;
    } else if (arg == "--plugin-dir" || arg == "--module") {
      const char* v = value();
      if (!v) return std::cerr << arg << " needs a value\n" << kUsage, 2;
      (arg == "--module" ? g_module : plugin_dir) = v;
    } else if (arg == "--seed" || arg == "--queries" || arg == "--seconds" || arg == "--per-database" ||
               arg == "--databases") {
      const char* v = value();
      long long n = 0;
      if (!v || !parse_number(v, &n) || n < 0) return std::cerr << "bad " << arg << "\n" << kUsage, 2;
      (arg == "--seed"        ? seed
       : arg == "--queries"   ? queries
       : arg == "--seconds"   ? seconds
       : arg == "--databases" ? max_databases
                              : per_database) = n;
      if (arg == "--seconds") queries = 0;
    } else {
      std::cerr << "unknown argument " << arg << "\n" << kUsage;
      return 2;
    }
  }
  if (per_database < 1) per_database = 1;

  HostOptions options;
  options.plugin_dir = plugin_dir;
  if (g_module != "memory") {
    PluginEntry entry;
    entry.path = g_module;
    entry.origin = "quereus-difftest --module " + g_module;
    options.plugins.push_back(entry);
  }
  if (Status s = apply_logging(options.logging); !s.ok()) return std::cerr << s.to_string() << "\n", 2;
  std::shared_ptr<Registry> registry;
  std::unique_ptr<PluginLoader> loader;
  if (Status s = load_host_plugins(options, &registry, &loader); !s.ok())
    return std::cerr << "Error: " << s.to_string() << "\n", 2;

  std::cout << "quereus-difftest --seed " << seed << (g_module == "memory" ? "" : " --module " + g_module) << std::endl;
  const auto start = std::chrono::steady_clock::now();
  auto out_of_time = [&] {
    return seconds > 0 &&
           std::chrono::steady_clock::now() - start >= std::chrono::seconds(seconds);
  };
  long long compared = 0, non_empty = 0, both_refused = 0, databases = 0, disagreements = 0, changes = 0,
            changes_refused = 0, sqlite_bugs = 0, too_large = 0;
  for (uint64_t db_seed = static_cast<uint64_t>(seed);; ++db_seed) {
    if ((queries > 0 && compared >= queries) || out_of_time()) break;
    if (max_databases > 0 && databases >= max_databases) break;
    ++databases;
    SqlGenerator gen(db_seed);
    GeneratedSchema schema = gen.make_schema();
    Pair p;
    std::vector<std::string> history;  // data changes both engines ran
    if (std::string err = load(p, registry, schema, schema.rows, history); err == kSqliteBugOnLoad) {
      ++sqlite_bugs;
      continue;
    } else if (!err.empty()) {
      std::cout << "\n==== DISAGREEMENT while loading, seed " << db_seed << ": " << err << "\n";
      ++disagreements;
      if (!keep_going) return 1;
      continue;
    }
    for (int qi = 0; qi < per_database; ++qi) {
      if ((queries > 0 && compared >= queries) || out_of_time()) break;
      if (gen.make_change_now()) {
        const std::string change = gen.make_change(schema);
        QueryResult a = p.ours->exec(change), b = p.theirs->exec(change);
        if (a.ok && !b.ok && known_sqlite_bug(b.error)) {  // the two databases now differ
          ++sqlite_bugs;
          break;  // the next database
        }
        std::string what;
        if (a.internal)
          what = "INTERNAL error in Quereus: " + a.error;
        else if (a.ok != b.ok)
          what = std::string(a.ok ? "SQLite" : "Quereus") + " refused a change the other made: " +
                 (a.ok ? b.error : a.error);
        else
          what = compare_tables(p, schema);
        if (verbose) std::cout << db_seed << "/" << qi << " change: " << change << "\n  -> " << (a.ok ? "ok" : a.error) << "\n";
        ++changes;
        if (!a.ok && !b.ok) ++changes_refused;
        if (!what.empty()) {
          ++disagreements;
          std::cout << "\n==== DISAGREEMENT on a data change: " << what << "\nseed " << db_seed
                    << " (reproduce: quereus-difftest --seed " << db_seed << (g_module == "memory" ? "" : " --module " + g_module) << " --databases 1 --per-database " << (qi + 1)
                    << ")\n";
          print_script(schema, schema.rows, history);
          std::cout << "-- the change\n" << change << ";\n" << std::flush;
          if (!keep_going) return 1;
          break;
        }
        history.push_back(change);
      }
      GeneratedQuery q = gen.make_query(schema);
      if (verbose) std::cout << db_seed << "/" << qi << ": " << q.sql << std::endl;  // before: a hang shows its query
      Outcome o = compare(p, q);
      if (verbose)
        std::cout << "  -> "
                  << (o.ours.ok ? std::to_string(o.ours.rows.size()) + " rows" : o.ours.error)
                  << (o.verdict == Verdict::kDiffer ? "  [DIFFER]" : "") << "\n";
      if (o.verdict == Verdict::kBothRefused) {
        ++both_refused;
        continue;
      }
      if (o.verdict == Verdict::kSqliteBug) {
        ++sqlite_bugs;
        continue;
      }
      if (o.verdict == Verdict::kTooLarge) {
        ++too_large;
        continue;
      }
      ++compared;
      if (o.verdict == Verdict::kSame) {
        if (!o.ours.rows.empty()) ++non_empty;
        continue;
      }
      ++disagreements;
      report(registry, db_seed, qi, schema, history, q, o.what);
      if (!keep_going) {
        std::cout << "compared " << compared << " queries before the first disagreement\n";
        return 1;
      }
      break;  // the next database
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("compared %lld queries (%lld with rows) and %lld data changes (%lld refused by both) over %lld "
              "databases in %.1f s; queries refused by both: %lld; skipped for a known SQLite bug: %lld; "
              "skipped over %zu rows or 10 s: %lld; disagreements: %lld\n",
              compared, non_empty, changes, changes_refused, databases, secs, both_refused, sqlite_bugs, kRowLimit,
              too_large, disagreements);
  return disagreements ? 1 : 0;
}
