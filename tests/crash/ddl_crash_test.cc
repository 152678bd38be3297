// quereus-ddl-crash-test: kills a process with SIGKILL at every write point of each DDL
// statement on the store, and checks that the reopened database shows the schema before
// or after the statement — never a mixture — with rows, indexes, statistics and UNIQUE
// enforcement consistent (issue 15 point 1; docs/store.md "Crash safety").
//
//   quereus-ddl-crash-test --plugin-dir DIR [--dir PATH] [--rows N] [--scenario NAME]... [--shard K/N]
//
// Write points are found, not guessed: this executable interposes write(2), fdatasync(2)
// and fsync(2) (it exports them; the store's LevelDB resolves them here first) and counts
// the calls the main thread makes while the statement runs. For each scenario:
//   1. a pristine database is prepared (a table of N rows with a UNIQUE constraint and a
//      plain index, a second table, a view, …);
//   2. a dry run on a copy counts the statement's write points W and records the schema
//      fingerprint after it (the one before is read from the pristine copy);
//   3. for k = 1..W, a fresh copy, a child that runs the statement and SIGKILLs itself on
//      entering its k-th write point (so the k-1 earlier calls completed), then a verifier
//      child that reopens the copy and checks: every key and value of the store, read raw,
//      is exactly the content before or the content after the statement (so storage the
//      catalog does not name is caught too); the open succeeds; the fingerprint is the
//      matching one; `pragma integrity_check` is ok (every row decodes,
//      every index holds exactly the table's member rows, UNIQUE holds, the row-count
//      statistic equals a scan); the row count is the state's; a duplicate of a UNIQUE
//      value is refused; and, in the state before, the statement runs again and succeeds.
// Scenario upgrade_format_1 kills the open of a format-1 store at each write point of its
// upgrade instead (run_upgrade), scenario backup an online backup (run_backup), scenario
// copy_to a COPY … TO export (run_copy_to: the target is the old file or the whole export). Prints one line per scenario (write points, kills, states
// seen, violations) and exits 1 when any check failed.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "../../modules/store/kv.h"
#include "../../modules/store/row_codec.h"
#include "quereus/text_case.hpp"
#include "crash_db.h"

namespace fs = std::filesystem;

// ---- the interposed system calls --------------------------------------------------------

namespace {
// Counting is on only while the statement under test runs, and only on the main thread
// (LevelDB's background compaction is not part of the statement).
std::atomic<bool> g_counting{false};
std::atomic<long> g_calls{0};
long g_die_at = 0;  // 0: never
pid_t g_main_tid = 0;

void write_point() {
  if (!g_counting.load(std::memory_order_relaxed)) return;
  if (static_cast<pid_t>(::syscall(SYS_gettid)) != g_main_tid) return;
  long n = ++g_calls;
  if (g_die_at > 0 && n == g_die_at) ::kill(::getpid(), SIGKILL);
}

template <class Fn>
Fn real(const char* name) {
  static_assert(sizeof(Fn) == sizeof(void*));
  void* p = ::dlsym(RTLD_NEXT, name);
  if (!p) std::abort();
  Fn fn;
  std::memcpy(&fn, &p, sizeof(fn));
  return fn;
}
}  // namespace

extern "C" {
ssize_t write(int fd, const void* buf, size_t n) {
  static auto fn = real<ssize_t (*)(int, const void*, size_t)>("write");
  if (fd > 2) write_point();
  return fn(fd, buf, n);
}
int fdatasync(int fd) {
  static auto fn = real<int (*)(int)>("fdatasync");
  write_point();
  return fn(fd);
}
int fsync(int fd) {
  static auto fn = real<int (*)(int)>("fsync");
  write_point();
  return fn(fd);
}
}

// ---- the scenarios ------------------------------------------------------------------------

using namespace quereus;

namespace {

struct Scenario {
  std::string name;
  std::string setup;  // after the common tables
  std::string ddl;    // the statement under test
  // Rows of t expected before / after (-1: not checked in that state).
  int64_t rows_before;
  int64_t rows_after;
  // A statement that must fail with CONSTRAINT in either state (a UNIQUE duplicate).
  std::string duplicate_before, duplicate_after;
  // The open settles a crash inside the statement (a unique index a transaction built
  // and never committed is validated at open): the raw content is compared after an
  // open, not before it.
  bool settled_by_open = false;
};

// Per scenario, a query answering one integer, 0 when the state after the statement is
// consistent (a maintained table equal to its body over the recovered sources); empty:
// none.
std::string consistent_after(const std::string& scenario) {
  auto same = [](const std::string& view, const std::string& body, const std::string& cols) {
    return "select (select count(*) from (" + body + " except select " + cols + " from " + view +
           ")) + (select count(*) from (select " + cols + " from " + view + " except " + body + "))";
  };
  if (scenario == "create_materialized_view")
    return same("tmv", "select id, u, x from t where x > 3", "id, u, x");
  if (scenario == "set_maintained") return same("tc", "select id, u, x from t where x > 3", "id, u, x");
  if (scenario == "refresh_stale") return same("tmv", "select id, x from t where u = 'v1'", "id, x");
  if (scenario == "create_memory_materialized_view")
    return same("tmm", "select id, u from t where x > 3", "id, u");
  if (scenario == "set_maintained_reshape") return same("tc", "select id, u, x from t where x > 3", "id, u, x");
  if (scenario == "drop_maintained") return same("tmv", "select id, u from t", "id, u");
  if (scenario == "refresh_reshape") return same("tmv", "select id, u, x, extra from t", "id, u, x, extra");
  if (scenario == "rename_column_view") return same("tv", "select id, y from t where y > 3", "id, y");
  // The child's foreign key names the new parent table / column, and every child row still
  // finds its parent through it.
  if (scenario == "rename_table_fk_child")
    return "select (select count(*) from foreign_key_info('kid') where lower(referenced_table) <> 't2') + "
           "(select count(*) from kid where not exists (select 1 from t2 where t2.id = kid.pid)) + "
           "(20 - (select count(*) from kid))";
  if (scenario == "rename_column_fk_child")
    return "select (select count(*) from foreign_key_info('kid') where lower(\"to\") <> 'key') + "
           "(select count(*) from kid where not exists (select 1 from t where t.key = kid.pid)) + "
           "(20 - (select count(*) from kid))";
  // The view that never reads u stays live and equal to its body; the other is stale.
  if (scenario == "set_collate_stale") return same("tmv2", "select id, x from t", "id, x");
  if (scenario == "drop_column_stale") return same("tmv2", "select id, u from t", "id, u");
  // A deployed lens reads exactly the basis rows through its logical table.
  if (scenario == "lens_logical_default") return "select count(*) from main.t where id < 0 and x is not 42";
  if (scenario == "apply_logical") return same("lx.t", "select id, u, x from main.t", "id, u, x");
  // No member row outlives its anchor row, and the lens reads what the members hold.
  if (scenario == "decomposition_delete" || scenario == "decomposition_insert")
    return "select (select count(*) from t_more where not exists (select 1 from t where t.id = t_more.id)) + "
           "(select count(*) from lx.T) - (select count(*) from t)";
  // The upsert's updated rows moved in both members together (x = 0 exactly where w =
  // 1000 + id), and no member row outlives its anchor.
  if (scenario == "decomposition_upsert")
    return "select (select count(*) from t where id between 1 and 40 and ((x = 0) <> coalesce((select w from t_more "
           "where id = t.id) = 1000 + t.id, false))) + (select count(*) from t_more where not exists (select 1 from t "
           "where t.id = t_more.id))";
  // A replaced row lost its optional member row with its anchor's new values.
  if (scenario == "decomposition_replace")
    return "select count(*) from t where x = -1 and exists (select 1 from t_more where t_more.id = t.id)";
  // The triples and the anchor moved together: every entity 1..40 got its new note (or
  // lost it) exactly when its x became 0.
  // Every anchor row the WHERE named got the triple; no other row did.
  if (scenario == "decomposition_eav_constant_update")
    return "select count(*) from t where (x between 1 and 40) <> coalesce((select v from t_attr where e = t.id and a = "
           "'note') = 'c', false)";
  // The member row and the anchor row moved together.
  if (scenario == "decomposition_pinned_update")
    return "select (select count(*) from t_more where id = 3 and w = 7) + (select count(*) from t where id = 3 and x = 5) - 2";
  if (scenario == "decomposition_eav_update")
    return "select count(*) from t where id between 1 and 40 and ((x = 0) <> (coalesce((select v from t_attr "
           "where e = t.id and a = 'note'), '') = case when id % 2 = 0 then '' else 'n' || id end))";
  // No child outlives its parent: the cascade and the delete landed together.
  if (scenario == "lens_cascade_delete")
    return "select count(*) from tch where tid is not null and not exists (select 1 from t where t.id = tch.tid)";
  return {};
}

std::string decomposition_setup() {
  const std::string d = "\"quereus.lens.decomp.";
  return "alter table t set tags (" + d + "logical.d\" = 'T', " + d + "anchor.d\" = 't', " + d + "col.d.id\" = 'id', " +
         d + "col.d.u\" = 'u', " + d + "col.d.x\" = 'x');"
         "create table t_more (id integer primary key, w integer null) with tags (" + d + "logical.d\" = 'T', " + d +
         "anchor.d\" = 't', " + d + "presence.d\" = 'optional', " + d + "col.d.w\" = 'w');"
         "insert into t_more select id, id * 2 from t where id % 2 = 0;"
         "declare logical schema lx { table T (id integer primary key, u text unique, x integer null, w integer null) };"
         "declare lens for lx over main { };"
         "apply schema lx";
}

std::string eav_setup() {
  const std::string d = "\"quereus.lens.decomp.";
  return "alter table t set tags (" + d + "logical.d\" = 'T', " + d + "anchor.d\" = 't', " + d + "col.d.id\" = 'id', " +
         d + "col.d.u\" = 'u', " + d + "col.d.x\" = 'x');"
         "create table t_attr (e integer, a text, v text null, primary key (e, a)) with tags (" + d +
         "logical.d\" = 'T', " + d + "anchor.d\" = 't', " + d + "presence.d\" = 'optional', " + d +
         "pivot.d.entity\" = 'e', " + d + "pivot.d.attribute\" = 'a', " + d + "pivot.d.value\" = 'v', " + d +
         "col.d.note\" = 'v');"
         "insert into t_attr select id, 'note', 'old' from t where id <= 60;"
         "declare logical schema lx { table T (id integer primary key, u text unique, x integer null, note text null) };"
         "declare lens for lx over main { };"
         "apply schema lx";
}

std::vector<Scenario> scenarios(int64_t n) {
  std::string dup_u = "insert into t (id, u, x) values (-1, 'u7', 1)";
  std::string dup_u_after_add = "insert into t (id, u, x, extra) values (-1, 'u7', 1, 'e')";
  return {
      {"create_table", "", "create table fresh (id integer primary key, v text unique)", n, n, dup_u, dup_u},
      {"drop_table", "", "drop table t", n, -1, dup_u, ""},
      {"create_index", "", "create index tx2 on t (x, u)", n, n, dup_u, dup_u},
      {"create_unique_index", "", "create unique index tuid on t (id, x)", n, n, dup_u, dup_u},
      {"drop_index", "", "drop index tx", n, n, dup_u, dup_u},
      {"add_column", "", "alter table t add column extra text null default 'e'", n, n, dup_u, dup_u_after_add},
      {"drop_column", "", "alter table t drop column x", n, n, dup_u, "insert into t (id, u) values (-1, 'u7')"},
      {"rename_table", "", "alter table t rename to t2", n, -1, dup_u, "insert into t2 (id, u, x) values (-1, 'u7', 1)"},
      {"rename_column", "", "alter table t rename column x to y", n, n, dup_u,
       "insert into t (id, u, y) values (-1, 'u7', 1)"},
      // Another table's foreign key (its parent table, its parent column) and a CHECK reading
      // the renamed table through a subquery are rewritten and persisted in the same atomic
      // step as the rename.
      {"rename_table_fk_child",
       "create table kid (id integer primary key, pid integer null references t(id) check (pid is null or pid > -1000000));"
       "insert into kid select id, id from t where id <= 20",
       "alter table t rename to t2", n, -1, dup_u, "insert into t2 (id, u, x) values (-1, 'u7', 1)"},
      {"rename_column_fk_child",
       "create table kid (id integer primary key, pid integer null references t(id));"
       "insert into kid select id, id from t where id <= 20",
       "alter table t rename column id to key", n, n, dup_u, "insert into t (key, u, x) values (-1, 'u7', 1)"},
      // The view over the renamed column is rewritten in the same atomic step.
      {"rename_column_view", "create view tv as select id, x from t where x > 3",
       "alter table t rename column x to y", n, n, dup_u, "insert into t (id, u, y) values (-1, 'u7', 1)"},
      {"set_data_type", "", "alter table t alter column x set data type real", n, n, dup_u, dup_u},
      // A collation change of a column a materialized view reads marks that view stale
      // (its stored tag) in the same atomic step; the view that does not read it stays live.
      {"set_collate_stale",
       "create materialized view tmv as select id, x from t where u = 'u7';"
       "create materialized view tmv2 as select id, x from t",
       "alter table t alter column u set collate nocase", n, n, dup_u, dup_u},
      // DROP TABLE of a materialized view's source / DROP COLUMN of a column it reads tag
      // the view stale (its stored tag) in the same atomic step as the drop.
      {"drop_table_stale",
       "create table src (k integer primary key, v integer);"
       "insert into src values (1, 1), (2, 2);"
       "create materialized view tsv as select k, v from src",
       "drop table src", n, n, dup_u, dup_u},
      {"drop_column_stale", "create materialized view tmv as select id, x from t; create materialized view tmv2 as select id, u from t",
       "alter table t drop column x", n, n, dup_u, "insert into t (id, u) values (-1, 'u7')"},
      {"alter_primary_key", "", "alter table t alter primary key (u)", n, n, dup_u, dup_u},
      {"add_unique_constraint", "", "alter table t add constraint ux unique (x, id)", n, n, dup_u, dup_u},
      {"create_view", "", "create view tv as select id, u from t where x > 3", n, n, dup_u, dup_u},
      {"drop_view", "create view tv as select id, u from t", "drop view tv", n, n, dup_u, dup_u},
      {"create_materialized_view", "", "create materialized view tmv as select id, u, x from t where x > 3", n, n,
       dup_u, dup_u},
      // REFRESH of a stale view: the rows and the removal of its stale tag in one step.
      {"refresh_stale",
       "create materialized view tmv as select id, x from t where u = 'v1';"
       "alter table t alter column u set collate nocase; insert into t (id, u, x) values (-5, 'V1', 1)",
       "refresh materialized view tmv", n + 1, n + 1, dup_u, dup_u},
      // A memory-hosted view: its definition goes to the store's catalog (refilled at reopen).
      {"create_memory_materialized_view", "",
       "create materialized view tmm using memory as select id, u from t where x > 3", n, n, dup_u, dup_u},
      {"drop_materialized_view", "create materialized view tmv as select id, u from t", "drop materialized view tmv",
       n, n, dup_u, dup_u},
      {"set_maintained",
       "create table tc (id integer primary key, u text, x integer null);"
       "insert into tc select id, u, x + 1 from t where id % 3 = 0",
       "alter table tc set maintained as select id, u, x from t where x > 3", n, n, dup_u, dup_u},
      // Reshape-on-attach: columns renamed by position, retyped and dropped, the rows
      // reconciled, in one atomic step.
      {"set_maintained_reshape",
       "create table tc (id integer primary key, a text null, b text null, c integer null);"
       "insert into tc select id, u, u, x from t where id % 3 = 0",
       "alter table tc set maintained as select id, u, x from t where x > 3", n, n, dup_u, dup_u},
      {"drop_maintained", "create materialized view tmv as select id, u from t", "alter table tmv drop maintained",
       n, n, dup_u, dup_u},
      {"refresh_reshape",
       "create materialized view tmv as select * from t; alter table t add column extra text null default 'e'",
       "refresh materialized view tmv", n, n, "insert into t (id, u, x) values (-1, 'u7', 1)",
       "insert into t (id, u, x) values (-1, 'u7', 1)"},
      {"tags", "", "alter table t set tags (owner = 'ops')", n, n, dup_u, dup_u},
      {"create_assertion", "", "create assertion xnn check (not exists (select 1 from t where x < -1000))", n, n,
       dup_u, dup_u},
      {"drop_assertion", "create assertion xnn check (not exists (select 1 from t where x < -1000))",
       "drop assertion xnn", n, n, dup_u, dup_u},
      // (The declaration is stored by the setup, a statement of its own. An apply is a
      // sequence of statements, each atomic: this one generates one.)
      {"apply_schema",
       "declare schema main { table t (id integer primary key, u text unique, x integer null) "
       "index tx on t (x) table other (k integer primary key, v text null) table s (k integer primary key) "
       "table added (a integer primary key, b text unique) }",
       "apply schema main", n, n, dup_u, dup_u},
      // Lenses (docs/lenses.md): a lens block is one stored declaration; a logical apply
      // stores the deployment (its declarations as applied) in one entry.
      {"declare_lens", "declare logical schema lx { table t (id integer primary key, u text unique, x integer null) }",
       "declare lens for lx over main { view t as select id, u, x from t }", n, n, dup_u, dup_u},
      // A delete through a logical parent whose key a logical child references ON DELETE
      // CASCADE: the child rows and the parent rows go in the statement's one commit.
      {"lens_cascade_delete",
       "create table tch (id integer primary key, tid integer null);"
       "insert into tch select id + 100000, id from t where id % 2 = 0;"
       "declare logical schema lx { table t (id integer primary key, u text unique, x integer null) "
       "table tch (id integer primary key, tid integer null references t(id) on delete cascade) };"
       "declare lens for lx over main { view t as select id, u, x from t view tch as select id, tid from tch };"
       "apply schema lx",
       "delete from lx.t where id between 11 and 20", n, n - 10, dup_u, dup_u},
      // A UNIQUE index built inside a transaction, valid only because the transaction
      // deleted a duplicate: durable before the COMMIT, validated (and dropped) at the
      // next open when the transaction never committed.
      {"unique_index_in_txn",
       "create table d (id integer primary key, v integer); insert into d values (1, 5), (2, 5), (3, 6)",
       "begin; delete from d where id = 2; create unique index dv on d (v); commit", n, n, dup_u,
       "insert into d values (9, 6)", true},
      // A decomposition advertised by tags (docs/decompositions.md): t is the anchor,
      // t_more an optional member. A delete through the logical table removes both
      // members' rows in the statement's one commit (anchor last); an insert writes the
      // anchor and, for rows with a value, the member.
      {"decomposition_delete", decomposition_setup(), "delete from lx.T where id between 11 and 20", n, n - 10,
       dup_u, dup_u},
      {"decomposition_insert", decomposition_setup(),
       "insert into lx.T select -id, 'n' || id, id, case when id % 2 = 0 then id end from t where id between 1 and 50",
       n, n + 50, dup_u, dup_u},
      // EAV attributes: an update upserts (non-NULL) or deletes (NULL) each entity's
      // triple from a row set captured first, with the anchor's update, in one commit.
      {"decomposition_eav_update", eav_setup(),
       "update lx.T set note = case when id % 2 = 0 then null else 'n' || id end, x = 0 where id between 1 and 40", n, n,
       dup_u, dup_u},
      // A constant attribute value under an anchor-only WHERE: the triples are upserted
      // straight off the anchor (no capture), in one commit.
      {"decomposition_eav_constant_update", eav_setup(), "update lx.T set note = 'c' where x between 1 and 40", n, n,
       dup_u, dup_u},
      // A WHERE pinning the anchor key: the optional member's row is materialized under
      // an EXISTS gate on the anchor, with the anchor's own update, in one commit.
      {"decomposition_pinned_update", decomposition_setup(), "update lx.T set w = 7, x = 5 where id = 3", n, n, dup_u,
       dup_u},
      // INSERT … ON CONFLICT DO UPDATE through the decomposition: the conflicting rows are
      // updated in both members, the new ones inserted, in the statement's one commit.
      {"decomposition_upsert", decomposition_setup(),
       "insert into lx.T select id, 'u' || id, 0, 1000 + id from t where id between 1 and 40 union all "
       "select -id, 'n' || id, id, id from t where id between 1 and 20 on conflict (id) do update set x = excluded.x, "
       "w = excluded.w",
       n, n + 20, dup_u, dup_u},
      // INSERT OR REPLACE: every member of the old logical row goes, the new row lands.
      {"decomposition_replace", decomposition_setup(),
       "insert or replace into lx.T select id, 'u' || id, -1, null from t where id between 1 and 40", n, n, dup_u,
       dup_u},
      // RENAME CONSTRAINT of a named UNIQUE moves its structure (t$idx$k5 → t$idx$k0)
      // with the catalog entry, in one commit.
      {"rename_constraint_unique", "alter table t add constraint k5 unique (x, id)",
       "alter table t rename constraint k5 to k0", n, n, dup_u, dup_u},
      // RENAME COLUMN of the column an unnamed UNIQUE covers: the structure is named after
      // its columns (_uc_u → _uc_w) and moves with the rename.
      {"rename_column_unnamed_unique", "", "alter table t rename column u to w", n, n, dup_u,
       "insert into t (id, w, x) values (-1, 'u7', 1)"},
      // An INSERT through a lens supplying a logical column's DEFAULT (x): the basis rows
      // land with it, in the statement's one commit.
      {"lens_logical_default",
       "declare logical schema lx { table t (id integer primary key, u text unique, x integer null default 42) };"
       "declare lens for lx over main { view t as select id, u, x from t };"
       "apply schema lx",
       "insert into lx.t (id, u) select -id, 'n' || id from t where id between 1 and 50", n, n + 50, dup_u, dup_u},
      // A singleton decomposition (primary key ()): a DELETE whose WHERE reads the optional
      // member deletes both members' rows (the member first, the anchor last) in one commit.
      {"singleton_update_delete",
       "create table cfg (theme integer null) with tags (\"quereus.lens.decomp.logical.s\" = 'Settings', "
       "\"quereus.lens.decomp.anchor.s\" = 'cfg', \"quereus.lens.decomp.col.s.theme\" = 'theme');"
       "create table cfg_lang (lang text null) with tags (\"quereus.lens.decomp.logical.s\" = 'Settings', "
       "\"quereus.lens.decomp.anchor.s\" = 'cfg', \"quereus.lens.decomp.presence.s\" = 'optional', "
       "\"quereus.lens.decomp.col.s.lang\" = 'lang');"
       "declare logical schema st { table Settings (theme integer null, lang text null, primary key ()) };"
       "declare lens for st over main { };"
       "apply schema st;"
       "insert into st.Settings values (1, 'de')",
       "delete from st.Settings where lang = 'de'", n, n, dup_u, dup_u},
      {"apply_logical",
       "declare logical schema lx { table t (id integer primary key, u text unique, x integer null) };"
       "declare lens for lx over main { view t as select id, u, x from t }",
       "apply schema lx", n, n, dup_u, dup_u},
  };
}

struct Options {
  std::string plugin_dir;
  std::string dir;
  int64_t rows = 3000;
  std::vector<std::string> only;
  // --shard K/N: only the scenarios whose position in the full list is K modulo N (CTest
  // runs the shards side by side, each under its own timeout).
  int shard = 0, shards = 1;
  mutable int position = 0;  // of the next scenario asked about
};

// Whether this run takes the scenario `name` (asked once per scenario, in list order).
bool wants(const Options& o, const std::string& name) {
  const int at = o.position++;
  if (!o.only.empty()) return std::find(o.only.begin(), o.only.end(), name) != o.only.end();
  return at % o.shards == o.shard;
}

Status open_db(const Options& o, const std::string& dir, std::shared_ptr<Registry>* registry,
               std::unique_ptr<Database>* db) {
  return crash::open_store_db(o.plugin_dir, dir, registry, db);
}

std::vector<Row> query(Database& db, const std::string& sql, Status* st) { return crash::query_rows(db, sql, st); }

// Every key and value of the store at `dir` (opened raw, without the engine), folded
// into one digest: the logical content LevelDB recovers, whatever its files look like.
// The store of a test database at `dir`, opened raw (it must exist).
std::unique_ptr<store::KvStore> open_raw(const std::string& dir) {
  store::KvOptions ko;
  ko.path = dir + "/data";
  ko.create_if_missing = false;
  return store::open_leveldb(ko);
}

// `settled`: leaves out the store's table-id counter, which an open that settles a crash
// (Scenario::settled_by_open) has seen advanced by a build it then dropped.
std::string kv_digest(const std::string& dir, bool settled = false) {
  auto kv = open_raw(dir);
  uint64_t h = 1469598103934665603ull, n = 0;
  auto mix = [&](std::string_view bytes) {
    for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xFF) * 1099511628211ull;
  };
  for (auto it = kv->iterate(store::KvRange{}, false); it->valid(); it->next()) {
    if (settled && it->key() == std::string_view("\0next_table_id", 14)) continue;
    mix(it->key());
    mix(it->value());
    ++n;
  }
  return std::to_string(n) + " pairs, digest " + std::to_string(h);
}

std::string text_of(const Row& row) {
  std::string s;
  for (const Value& v : row) s += (v.is_null() ? std::string("NULL") : v.to_text()) + "|";
  return s;
}

// The schema as the engine reports it, in a stable order.
// A data statement under test changes rows, not the schema: its scenario names a query
// whose rows join the fingerprint (empty: none).
std::string data_fingerprint_query(const std::string& scenario) {
  if (scenario == "lens_cascade_delete") return "select 'rows', (select count(*) from t), (select count(*) from tch)";
  if (scenario == "decomposition_delete" || scenario == "decomposition_insert")
    return "select 'rows', (select count(*) from t), (select count(*) from t_more)";
  if (scenario == "decomposition_eav_update")
    return "select 'rows', (select count(*) from t_attr), (select count(*) from t where x = 0)";
  if (scenario == "decomposition_eav_constant_update")
    return "select 'rows', (select count(*) from t_attr), (select count(*) from t_attr where v = 'c')";
  if (scenario == "decomposition_pinned_update")
    return "select 'rows', (select count(*) from t_more), (select count(*) from t where x = 5)";
  if (scenario == "decomposition_upsert" || scenario == "decomposition_replace")
    return "select 'rows', (select count(*) from t), (select count(*) from t_more), (select count(*) from t where x <= 0)";
  if (scenario == "lens_logical_default")
    return "select 'rows', (select count(*) from t), (select count(*) from t where x = 42)";
  if (scenario == "singleton_update_delete")
    return "select 'rows', (select count(*) from cfg), (select count(*) from cfg_lang)";
  if (scenario == "unique_index_in_txn") return "select 'rows', (select count(*) from d), (select count(*) from d where v = 5)";
  return {};
}

std::string fingerprint(Database& db, Status* st, const std::string& scenario) {
  std::vector<Row> rows = query(db, "select * from schema()", st);
  if (std::string q = data_fingerprint_query(scenario); st->ok() && !q.empty())
    for (Row& r : query(db, q, st)) rows.push_back(std::move(r));
  if (st->ok())  // assertions are catalog objects too, though schema() does not list them
    for (Row& r : query(db, "select 'assertion', schema_name, name, violation_sql from assertion_info()", st))
      rows.push_back(std::move(r));
  if (st->ok())  // declarations, lens blocks and logical deploys
    for (Row& r : query(db, "select type, name, ddl from schema_ddl() where type in ('declaration', 'lens', 'apply')", st))
      rows.push_back(std::move(r));
  std::vector<std::string> lines;
  for (const Row& r : rows) lines.push_back(text_of(r));
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// Runs `fn` in a child; returns what it wrote to the pipe and its wait status.
template <class Fn>
std::pair<std::string, int> in_child(Fn fn) {
  int fds[2];
  if (::pipe(fds) != 0) std::abort();
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) std::abort();
  if (pid == 0) {
    ::close(fds[0]);
    g_main_tid = static_cast<pid_t>(::syscall(SYS_gettid));
    std::string out;
    int code = fn(out);
    size_t off = 0;
    while (off < out.size()) {
      ssize_t w = ::write(fds[1], out.data() + off, out.size() - off);
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
    ::close(fds[1]);
    ::_exit(code);
  }
  ::close(fds[1]);
  std::string got;
  char buf[4096];
  ssize_t r;
  while ((r = ::read(fds[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(r));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {got, status};
}

const char* kCommon =
    "create table t (id integer primary key, u text unique, x integer null);"
    "create index tx on t (x);"
    "create table other (k integer primary key, v text null);"
    "create table s (k integer primary key);";

std::string fill_sql(int64_t n) {
  std::string sql = "begin;";
  for (int64_t i = 1; i <= n; ++i)
    sql += "insert into t values (" + std::to_string(i) + ", 'u" + std::to_string(i) + "', " + std::to_string(i % 97) +
           ");";
  sql += "insert into other values (1, 'one'), (2, 'two'); commit;";
  return sql;
}

struct Verdict {
  std::string state;  // "before", "after", or "" when neither
  std::vector<std::string> problems;
};

// Reopens `dir` and checks it (in this process: call it in a child).
std::string verify(const Options& o, const std::string& dir, const Scenario& sc, const std::string& before,
                   const std::string& after, const std::string& kv_before, const std::string& kv_after) {
  // First the raw content: it must be exactly the store before or after the statement
  // (this also catches storage the catalog does not name, which the engine cannot see).
  std::string kv;
  std::shared_ptr<Registry> registry;
  std::unique_ptr<Database> db;
  Status st;
  if (sc.settled_by_open) {
    st = open_db(o, dir, &registry, &db);
    if (!st.ok()) return "!open: " + st.to_string();
    db.reset();
  }
  try {
    kv = kv_digest(dir, sc.settled_by_open);
  } catch (const std::exception& e) {
    return std::string("!raw open: ") + e.what() + "\n";
  }
  st = open_db(o, dir, &registry, &db);
  if (!st.ok()) return "!open: " + st.to_string();
  std::string fp = fingerprint(*db, &st, sc.name);
  if (!st.ok()) return "!schema(): " + st.to_string();
  std::string state = fp == before ? "before" : fp == after ? "after" : "";
  std::string out = "state " + (state.empty() ? std::string("neither") : state) + "\n";
  if (state.empty()) out += "!the schema is neither the one before nor the one after the statement\n";
  if (state == "before" && kv != kv_before) out += "!the store's content (" + kv + ") is not the content before (" + kv_before + ")\n";
  if (state == "after" && kv != kv_after) out += "!the store's content (" + kv + ") is not the content after (" + kv_after + ")\n";
  std::vector<Row> ic = query(*db, "pragma integrity_check", &st);
  if (!st.ok()) out += "!integrity_check: " + st.to_string() + "\n";
  for (const Row& r : ic)
    if (r[0].to_text() != "ok") out += "!integrity: " + r[0].to_text() + "\n";
  int64_t want = state == "after" ? sc.rows_after : sc.rows_before;
  std::string table = (state == "after" && sc.name == "rename_table") ? "t2" : "t";
  if (want >= 0 && !(state == "after" && sc.name == "drop_table")) {
    std::vector<Row> c = query(*db, "select count(*) from " + table, &st);
    if (!st.ok()) out += "!count: " + st.to_string() + "\n";
    else if (c.empty() || c[0][0].as_int() != want)
      out += "!count(*) of " + table + " is " + (c.empty() ? "nothing" : c[0][0].to_text()) + ", expected " +
             std::to_string(want) + "\n";
    // Through the index on u: the planner seeks it for an equality.
    const char* u = (state == "after" && sc.name == "rename_column_unnamed_unique") ? "w" : "u";
    std::vector<Row> seek = query(*db, "select count(*) from " + table + " where " + u + " = 'u7'", &st);
    if (!st.ok()) out += "!seek: " + st.to_string() + "\n";
    else if (seek.empty() || seek[0][0].as_int() != 1)
      out += "!a seek on u finds " + (seek.empty() ? std::string("nothing") : text_of(seek[0])) + "\n";
  }
  if (std::string q = consistent_after(sc.name); state == "after" && !q.empty()) {
    std::vector<Row> c = query(*db, q, &st);
    if (!st.ok()) out += "!consistency query: " + st.to_string() + "\n";
    else if (c.empty() || c[0][0].as_int() != 0)
      out += "!inconsistent after the statement: " + (c.empty() ? std::string("nothing") : text_of(c[0])) + "\n";
  }
  const std::string& dup = state == "after" ? sc.duplicate_after : sc.duplicate_before;
  if (!dup.empty() && !state.empty()) {
    Status d = db->exec(dup);
    if (d.ok()) out += "!a UNIQUE duplicate was accepted: " + dup + "\n";
    else if (d.code() != StatusCode::kConstraint) out += "!the UNIQUE duplicate failed with " + d.to_string() + "\n";
  }
  if (state == "before") {
    Status again = db->exec(sc.ddl);
    if (!again.ok()) out += "!re-running the statement failed: " + again.to_string() + "\n";
    std::vector<Row> ic2 = query(*db, "pragma integrity_check", &st);
    for (const Row& r : ic2)
      if (r[0].to_text() != "ok") out += "!integrity after re-run: " + r[0].to_text() + "\n";
  }
  return out;
}

void copy_dir(const std::string& from, const std::string& to) {
  fs::remove_all(to);
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive);
}

// ---- the store format upgrade (1 -> 2) at open ---------------------------------------------
//
// The "statement" is Database::Open of a format-1 store: one batch marks every table, then
// each NOCASE-keyed table is re-keyed in a batch of its own as the catalog is connected. A
// kill at any write point of the open must leave a store the next open finishes upgrading:
// same rows, NOCASE seeks that find the non-ASCII keys, no table left marked, integrity ok.

const char* kUpgradeSetup =
    "create table w1 (n text collate nocase primary key, v integer);"
    "create table w2 (n text collate nocase primary key, v integer);"
    "create table plain (id integer primary key, s text);";

std::string upgrade_fill(int64_t n) {
  const char* stems[] = {"Émile", "Zoë", "Ärger", "ΣΟΦΙΑ", "Øre", "apple"};
  std::string sql = "begin;";
  for (int64_t i = 0; i < n; ++i) {
    std::string w = std::string(stems[i % 6]) + std::to_string(i);
    sql += "insert into w1 values ('" + w + "', " + std::to_string(i) + ");";
    if (i % 2 == 0) sql += "insert into w2 values ('" + w + "', " + std::to_string(i) + ");";
    if (i % 5 == 0) sql += "insert into plain values (" + std::to_string(i) + ", '" + w + "');";
  }
  return sql + "commit;";
}

// What the data reads as: every row, and NOCASE seeks with another case of a key.
std::string upgrade_content(Database& db, Status* st) {
  std::string out;
  for (const char* q : {"select n, v from w1 order by n", "select n, v from w2 order by n",
                        "select id, s from plain order by id", "select v from w1 where n = 'émile0'",
                        "select v from w2 where n = 'σοφια3'", "select count(*) from w1 where n like 'ärger%'"}) {
    for (const Row& r : query(db, q, st)) out += text_of(r) + "\n";
    if (!st->ok()) return out;
  }
  return out;
}

// Rewrites a store as format 1 wrote it: format "1", NOCASE keys whose first member is the
// row's first (text) cell folded A-Z only. (Enough for kUpgradeSetup's tables.) Returns
// the number of keys rewritten.
size_t downgrade(const std::string& dir) {
  auto kv = open_raw(dir);
  store::KvBatch b;
  b.put(std::string(1, '\0') + "format", "1");
  std::vector<qrs_value> cells;
  size_t moved = 0;
  for (auto it = kv->iterate(store::KvRange{std::string(1, '\x04'), std::string(1, '\x05')}, false); it->valid();
       it->next()) {
    std::string key(it->key());
    store::decode_row(it->value(), cells);
    if (cells.empty() || cells[0].type != QRS_TYPE_TEXT || key.size() < 10 || key[9] != '\x20') continue;
    std::string text(cells[0].u.str.data, cells[0].u.str.len);
    std::string folded = sdk::nocase_fold(text), ascii = text;
    for (char& c : ascii)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    if (key.compare(10, folded.size(), folded) != 0 || folded == ascii) continue;
    std::string legacy = key.substr(0, 10) + ascii + key.substr(10 + folded.size());
    b.del(key);
    b.put(legacy, std::string(it->value()));
    ++moved;
  }
  kv->write(b, true);
  return moved;
}

bool marks_left(const std::string& dir) {
  auto kv = open_raw(dir);
  auto it = kv->iterate(store::KvRange{std::string(1, '\x05'), std::string(1, '\x06')}, false);
  return it->valid() || kv->get(std::string(1, '\0') + "format") != std::optional<std::string>("2");
}

// Returns the violations; adds the kills to *kills.
int64_t run_upgrade(const Options& o, int64_t* kills) {
  const std::string name = "upgrade_format_1";
  std::string pristine = o.dir + "/" + name + ".pristine";
  fs::remove_all(pristine);
  fs::create_directories(pristine);
  auto [expected, prep_status] = in_child([&](std::string& out) {
    std::shared_ptr<Registry> registry;
    std::unique_ptr<Database> db;
    Status st = open_db(o, pristine, &registry, &db);
    if (st.ok()) st = db->exec(kUpgradeSetup);
    if (st.ok()) st = db->exec(upgrade_fill(std::max<int64_t>(o.rows / 4, 60)));
    if (st.ok()) out = upgrade_content(*db, &st);
    if (!st.ok()) {
      out = st.to_string();
      return 3;
    }
    return 0;
  });
  if (!WIFEXITED(prep_status) || WEXITSTATUS(prep_status) != 0) {
    std::cerr << name << ": setup failed: " << expected << "\n";
    return 1;
  }
  if (size_t moved = downgrade(pristine); moved == 0) {
    std::cerr << name << ": the downgrade to format 1 moved no key\n";
    return 1;
  }
  auto open_counting = [&](const std::string& dir, long die_at) {
    return in_child([&, die_at](std::string& out) {
      std::shared_ptr<Registry> registry;
      std::unique_ptr<Database> db;
      g_calls = 0;
      g_die_at = die_at;
      g_counting = true;
      Status st = open_db(o, dir, &registry, &db);
      g_counting = false;
      if (die_at > 0) ::kill(::getpid(), SIGKILL);
      out = st.ok() ? std::to_string(g_calls.load()) : st.to_string();
      return st.ok() ? 0 : 3;
    });
  };
  std::string dry = o.dir + "/" + name + ".dry";
  copy_dir(pristine, dry);
  auto [dry_out, dry_status] = open_counting(dry, 0);
  if (!WIFEXITED(dry_status) || WEXITSTATUS(dry_status) != 0) {
    std::cerr << name << ": the upgrading open failed: " << dry_out << "\n";
    return 1;
  }
  long points = std::stol(dry_out);
  int64_t violations = 0;
  for (long k = 1; k <= points + 1; ++k) {
    std::string copy = o.dir + "/" + name + ".run";
    copy_dir(pristine, copy);
    auto [kill_out, kill_status] = open_counting(copy, k);
    if (!WIFSIGNALED(kill_status) || WTERMSIG(kill_status) != SIGKILL) {
      std::cerr << name << " k=" << k << ": the opener was not killed: " << kill_out << "\n";
      ++violations;
      continue;
    }
    ++*kills;
    auto [report, verify_status] = in_child([&](std::string& out) {
      std::shared_ptr<Registry> registry;
      std::unique_ptr<Database> db;
      Status st = open_db(o, copy, &registry, &db);
      if (!st.ok()) {
        out = "!open: " + st.to_string() + "\n";
        return 0;
      }
      std::string got = upgrade_content(*db, &st);
      if (!st.ok()) out += "!read: " + st.to_string() + "\n";
      else if (got != expected) out += "!the rows differ from the rows before the upgrade\n";
      for (const Row& r : query(*db, "pragma integrity_check", &st))
        if (r[0].to_text() != "ok") out += "!integrity: " + r[0].to_text() + "\n";
      Status d = db->exec("insert into w1 values ('ÉMILE0', -1)");
      if (d.code() != StatusCode::kConstraint) out += "!a NOCASE duplicate was not refused: " + d.to_string() + "\n";
      db.reset();
      registry.reset();
      if (marks_left(copy)) out += "!the store is not fully upgraded after a complete open\n";
      return 0;
    });
    if (!WIFEXITED(verify_status) || report.find('!') != std::string::npos) {
      ++violations;
      std::cerr << name << " k=" << k << "/" << points << ":\n" << report;
    }
  }
  std::cout << name << "\twrite points " << points << "\tkills " << (points + 1) << "\tviolations " << violations
            << std::endl;
  fs::remove_all(pristine);
  fs::remove_all(dry);
  fs::remove_all(o.dir + "/" + name + ".run");
  return violations;
}

// ---- a reconciling open (docs/reconciliation.md) ------------------------------------------
//
// A store opened with declaration v1 and rows; then an open with declaration v2 and the
// intents that authorize it (a rename, a drop, a preserve, a retag, a prepare_constraints
// repair before a new UNIQUE constraint, a new table and index) is killed at each of its
// write points. The store, read raw, must be exactly the content before the open or after
// it; the matching declaration must open; integrity must hold; and after a kill in the
// state before, the reconciling open must succeed.

const char* kReconcileV1 =
    "declare schema main {"
    " table users (id integer primary key, email text) with tags (\"quereus.id\" = 'usr');"
    " table drafts (id integer primary key, body text);"
    " table cache (k text primary key, v text);"
    " table experiments (id integer primary key, data text); }";
const char* kReconcileV2 =
    "declare schema main {"
    " table users (id integer primary key, email text unique) with tags (\"quereus.id\" = 'per');"
    " table notes (id integer primary key, body text, pinned integer default 0);"
    " index notes_pinned on notes (pinned);"
    " table fresh (id integer primary key); }";

// The module the reconcile scenarios run on: "store" (reconcile) or "sync-store"
// (reconcile-sync: the prepare step's deletions are captured in the same scope).
std::string g_reconcile_module = "store";

Status open_reconciling(const Options& o, const std::string& dir, int version, std::shared_ptr<Registry>* registry,
                        std::unique_ptr<Database>* db) {
  return crash::open_store_db(o.plugin_dir, dir, registry, db, [version](DatabaseOptions& options) {
    if (g_reconcile_module != "store") {
      options.default_module = g_reconcile_module;
      options.module_options[g_reconcile_module] = options.module_options["store"];
      options.module_options.erase("store");
    }
    options.schema_files.push_back({"app.sql", version == 1 ? kReconcileV1 : kReconcileV2, "crash.yaml:3"});
    if (version == 2) {
      StructuralIntent& m = options.migrate;
      m.renames.push_back({"drafts", "notes", {"crash.yaml:6", "databases.main.migrate.rename.drafts"}});
      m.drops.push_back({"cache", {"crash.yaml:7", "databases.main.migrate.drop"}});
      m.preserves.push_back({"experiments", {"crash.yaml:8", "databases.main.migrate.preserve"}});
      m.retags.push_back({"users", "usr", {"crash.yaml:9", "databases.main.migrate.retag.users"}});
      m.prepare_constraints.push_back(
          {"dedupe", "delete from users where id in (select b.id from users a join users b on a.email = b.email and b.id > a.id)",
           {"crash.yaml:11", "databases.main.migrate.prepare_constraints.dedupe"}});
    }
  });
}

// What each state holds, as one string (fails the read when the tables are not there).
std::string reconcile_content(Database& db, int version, Status* st) {
  const char* q = version == 1
                      ? "select 'v1', (select count(*) from users), (select count(*) from drafts), "
                        "(select count(*) from cache), (select count(*) from experiments)"
                      : "select 'v2', (select count(*) from users), (select count(*) from notes), "
                        "(select count(*) from notes where pinned = 0), (select count(*) from fresh), "
                        "(select count(*) from schema() where name in ('cache', 'experiments', 'drafts'))";
  std::string sql = q;
  // On sync-store the prepare step's deletions are in the change log with the rows.
  if (version == 2 && g_reconcile_module != "store")
    sql += ", (select (length(p) - length(replace(p, '\"table\":\"users\",\"type\":\"delete\"', ''))) / 31 from "
           "(select cast(sync_changes('main', 0, null, 100000) as text) as p))";
  std::string out;
  for (const Row& r : query(db, sql, st)) out += text_of(r);
  return out;
}

int64_t run_reconcile(const Options& o, int64_t* kills, const std::string& module) {
  g_reconcile_module = module;
  const std::string name = module == "store" ? "reconcile" : "reconcile-sync";
  const int64_t n = std::max<int64_t>(o.rows / 4, 50);
  std::string pristine = o.dir + "/" + name + ".pristine";
  fs::remove_all(pristine);
  fs::create_directories(pristine);
  auto [setup_out, setup_status] = in_child([&](std::string& out) {
    std::shared_ptr<Registry> registry;
    std::unique_ptr<Database> db;
    Status st = open_reconciling(o, pristine, 1, &registry, &db);
    std::string fill = "begin;";
    for (int64_t i = 1; i <= n; ++i) {
      const std::string id = std::to_string(i);
      fill += "insert into users values (" + id + ", 'e" + std::to_string(i % (n / 2)) + "');";
      fill += "insert into drafts values (" + id + ", 'd" + id + "');";
      fill += "insert into cache values ('k" + id + "', 'v');";
      fill += "insert into experiments values (" + id + ", 'x');";
    }
    fill += "commit;";
    if (st.ok()) st = db->exec(fill);
    if (!st.ok()) {
      out = st.to_string();
      return 3;
    }
    return 0;
  });
  if (!WIFEXITED(setup_status) || WEXITSTATUS(setup_status) != 0) {
    std::cerr << name << ": setup failed: " << setup_out << "\n";
    return 1;
  }
  const std::string before = kv_digest(pristine);
  auto open_counting = [&](const std::string& dir, long die_at) {
    return in_child([&, die_at](std::string& out) {
      std::shared_ptr<Registry> registry;
      std::unique_ptr<Database> db;
      g_calls = 0;
      g_die_at = die_at;
      g_counting = true;
      Status st = open_reconciling(o, dir, 2, &registry, &db);
      g_counting = false;
      if (die_at > 0) ::kill(::getpid(), SIGKILL);
      out = st.ok() ? std::to_string(g_calls.load()) : st.to_string();
      return st.ok() ? 0 : 3;
    });
  };
  std::string dry = o.dir + "/" + name + ".dry";
  copy_dir(pristine, dry);
  auto [dry_out, dry_status] = open_counting(dry, 0);
  if (!WIFEXITED(dry_status) || WEXITSTATUS(dry_status) != 0) {
    std::cerr << name << ": the reconciling open failed: " << dry_out << "\n";
    return 1;
  }
  const std::string after = kv_digest(dry);
  const long points = std::stol(dry_out);
  int64_t violations = 0;
  std::map<std::string, int> states;
  for (long k = 1; k <= points + 1; ++k) {
    std::string copy = o.dir + "/" + name + ".run";
    copy_dir(pristine, copy);
    auto [kill_out, kill_status] = open_counting(copy, k);
    if (!WIFSIGNALED(kill_status) || WTERMSIG(kill_status) != SIGKILL) {
      std::cerr << name << " k=" << k << ": the opener was not killed: " << kill_out << "\n";
      ++violations;
      continue;
    }
    ++*kills;
    const std::string got = kv_digest(copy);
    // sync-store stamps its writes with the wall clock (HLCs): the state after the open is
    // not byte-equal across runs, so any state but the one before is checked as v2 by its
    // content (which includes the change log's deletions).
    const int version = got == before ? 1 : got == after || g_reconcile_module != "store" ? 2 : 0;
    ++states[version == 1 ? "before" : version == 2 ? "after" : "mixed"];
    auto [report, verify_status] = in_child([&](std::string& out) {
      if (version == 0) {
        out = "!the store is neither the state before the open nor the state after it\n";
        return 0;
      }
      std::shared_ptr<Registry> registry;
      std::unique_ptr<Database> db;
      Status st = open_reconciling(o, copy, version, &registry, &db);
      if (!st.ok()) {
        out = "!open (v" + std::to_string(version) + "): " + st.to_string() + "\n";
        return 0;
      }
      std::string content = reconcile_content(*db, version, &st);
      if (!st.ok()) out += "!read: " + st.to_string() + "\n";
      const std::string want = version == 1 ? "v1|" + std::to_string(n) + "|" + std::to_string(n) + "|" +
                                                  std::to_string(n) + "|" + std::to_string(n) + "|"
                                            : "v2|" + std::to_string(n / 2) + "|" + std::to_string(n) + "|" +
                                                  std::to_string(n) + "|0|0|" +
                                                  (g_reconcile_module != "store" ? std::to_string(n - n / 2) + "|" : "");
      if (st.ok() && content != want) out += "!content " + content + ", expected " + want + "\n";
      for (const Row& r : query(*db, "pragma integrity_check", &st))
        if (r[0].to_text() != "ok") out += "!integrity: " + r[0].to_text() + "\n";
      db.reset();
      registry.reset();
      if (version == 1) {  // the interrupted open, run again, succeeds
        st = open_reconciling(o, copy, 2, &registry, &db);
        if (!st.ok()) out += "!the reconciling open after the crash failed: " + st.to_string() + "\n";
        else if (std::string c = reconcile_content(*db, 2, &st); c.rfind("v2|", 0) != 0)
          out += "!after the repeated open: " + c + " " + st.to_string() + "\n";
      }
      return 0;
    });
    if (!WIFEXITED(verify_status) || report.find('!') != std::string::npos) {
      ++violations;
      std::cerr << name << " k=" << k << "/" << points << ":\n" << report;
    }
  }
  std::string seen;
  for (auto& [s, c] : states) seen += (seen.empty() ? "" : ", ") + s + " " + std::to_string(c);
  std::cout << name << "\twrite points " << points << "\tkills " << (points + 1) << "\tstates: " << seen
            << "\tviolations " << violations << std::endl;
  fs::remove_all(pristine);
  fs::remove_all(dry);
  fs::remove_all(o.dir + "/" + name + ".run");
  return violations;
}

// ---- one decomposition over two modules ----------------------------------------------------
//
// Logical T is the store anchor xa, a store member xs and a memory member xm (each module
// advertises its own members; docs/decompositions.md "Across modules"). An insert of 50
// logical rows through the lens is killed at each of its write points (the setup runs in
// the same process, unwatched, since the memory member does not outlive it). After the
// crash, on the store: the anchor has all 50 new rows or none, the store member holds
// exactly the new rows' components when the anchor does and none otherwise, no member
// row is without its anchor row, and integrity holds.

const char* kCrossSetup =
    "create table xa (id integer primary key, a integer) with tags (\"quereus.lens.decomp.logical.d\" = 'T', "
    "\"quereus.lens.decomp.anchor.d\" = 'xa', \"quereus.lens.decomp.col.d.a\" = 'a');"
    "create table xs (id integer primary key, s integer null) with tags (\"quereus.lens.decomp.logical.d\" = 'T', "
    "\"quereus.lens.decomp.anchor.d\" = 'xa', \"quereus.lens.decomp.presence.d\" = 'optional', "
    "\"quereus.lens.decomp.col.d.s\" = 's');"
    "create table xm (id integer primary key, m integer null) using memory with tags ("
    "\"quereus.lens.decomp.logical.d\" = 'T', \"quereus.lens.decomp.anchor.d\" = 'xa', "
    "\"quereus.lens.decomp.presence.d\" = 'optional', \"quereus.lens.decomp.col.d.m\" = 'm');"
    "insert into xa select value, value from generate_series(1, 200);"
    "insert into xs select value, value from generate_series(1, 200) where value % 2 = 0;"
    "declare logical schema lx { table T (id integer primary key, a integer, s integer null, m integer null) };"
    "declare lens for lx over main { };"
    "apply schema lx";
const char* kCrossInsert =
    "insert into lx.T select -value, value, case when value % 3 <> 0 then value end, value from "
    "generate_series(1, 50)";

int64_t run_cross_module(const Options& o, int64_t* kills) {
  const std::string name = "decomposition_cross_module";
  auto run = [&](const std::string& dir, long die_at) {
    return in_child([&, die_at](std::string& out) {
      std::shared_ptr<Registry> registry;
      std::unique_ptr<Database> db;
      Status st = open_db(o, dir, &registry, &db);
      if (st.ok()) st = db->exec(kCrossSetup);
      if (!st.ok()) {
        out = "setup: " + st.to_string();
        return 3;
      }
      g_calls = 0;
      g_die_at = die_at;
      g_counting = true;
      st = db->exec(kCrossInsert);
      g_counting = false;
      if (die_at > 0) ::kill(::getpid(), SIGKILL);
      std::vector<Row> r;
      if (st.ok()) r = query(*db, "select (select count(*) from xm where id < 0)", &st);
      if (!st.ok() || r.empty() || r[0][0].to_text() != "50") {
        out = "the insert failed or missed the memory member: " + st.to_string();
        return 3;
      }
      out = std::to_string(g_calls.load());
      return 0;
    });
  };
  std::string dry = o.dir + "/" + name + ".dry";
  fs::remove_all(dry);
  fs::create_directories(dry);
  auto [dry_out, dry_status] = run(dry, 0);
  if (!WIFEXITED(dry_status) || WEXITSTATUS(dry_status) != 0) {
    std::cerr << name << ": dry run failed: " << dry_out << "\n";
    return 1;
  }
  const long points = std::stol(dry_out);
  int64_t violations = 0;
  std::map<std::string, int> states;
  for (long k = 1; k <= points + 1; ++k) {
    std::string copy = o.dir + "/" + name + ".run";
    fs::remove_all(copy);
    fs::create_directories(copy);
    auto [kill_out, kill_status] = run(copy, k);
    if (!WIFSIGNALED(kill_status) || WTERMSIG(kill_status) != SIGKILL) {
      std::cerr << name << " k=" << k << ": the writer was not killed: " << kill_out << "\n";
      ++violations;
      continue;
    }
    ++*kills;
    auto [report, verify_status] = in_child([&](std::string& out) {
      std::shared_ptr<Registry> registry;
      std::unique_ptr<Database> db;
      Status st = open_db(o, copy, &registry, &db);
      if (!st.ok()) {
        out = "!open: " + st.to_string() + "\n";
        return 0;
      }
      // Anchor rows, store-member rows, orphans, and store-member rows the new anchor rows lack.
      std::vector<Row> r = query(*db,
                                 "select (select count(*) from xa where id < 0), (select count(*) from xs where id < 0), "
                                 "(select count(*) from xs where not exists (select 1 from xa where xa.id = xs.id)), "
                                 "(select count(*) from xa where id < 0 and -id % 3 <> 0 and not exists "
                                 "(select 1 from xs where xs.id = xa.id))",
                                 &st);
      if (!st.ok() || r.empty()) {
        out = "!read: " + st.to_string() + "\n";
        return 0;
      }
      const std::string anchors = r[0][0].to_text(), members = r[0][1].to_text();
      out += "state " + anchors + "/" + members + "\n";
      if (!((anchors == "0" && members == "0") || (anchors == "50" && members == "34")))
        out += "!anchor rows " + anchors + ", store-member rows " + members + ": one member is ahead of another\n";
      if (r[0][2].to_text() != "0") out += "!store-member rows without their anchor row: " + r[0][2].to_text() + "\n";
      if (r[0][3].to_text() != "0") out += "!new anchor rows missing their store component: " + r[0][3].to_text() + "\n";
      for (const Row& row : query(*db, "pragma integrity_check", &st))
        if (row[0].to_text() != "ok") out += "!integrity: " + row[0].to_text() + "\n";
      return 0;
    });
    if (!WIFEXITED(verify_status) || report.find('!') != std::string::npos) {
      ++violations;
      std::cerr << name << " k=" << k << "/" << points << ":\n" << report;
    } else {
      ++states[report.substr(0, report.find('\n'))];
    }
  }
  std::string seen;
  for (const auto& [s, n] : states) seen += (seen.empty() ? "" : ", ") + s + " ×" + std::to_string(n);
  std::cout << name << "\twrite points " << points << "\tkills " << (points + 1) << "\tstates: " << seen
            << "\tviolations " << violations << std::endl;
  fs::remove_all(dry);
  fs::remove_all(o.dir + "/" + name + ".run");
  return violations;
}

// ---- the online backup ---------------------------------------------------------------------
//
// Database::backup writes only into the new directory. A kill at any of its write points
// must leave the source as it was, and either no copy (the copy is built beside the
// destination and renamed into place when whole) or a copy that opens whole: every row,
// integrity ok.

int64_t run_backup(const Options& o, int64_t* kills) {
  const std::string name = "backup";
  std::string pristine = o.dir + "/" + name + ".pristine";
  fs::remove_all(pristine);
  fs::create_directories(pristine);
  const char* kCount = "select (select count(*) from t) * 1000 + (select count(*) from other)";
  auto [expected, prep_status] = in_child([&](std::string& out) {
    std::shared_ptr<Registry> registry;
    std::unique_ptr<Database> db;
    Status st = open_db(o, pristine, &registry, &db);
    if (st.ok()) st = db->exec(kCommon);
    if (st.ok()) st = db->exec(fill_sql(o.rows));
    std::vector<Row> r;
    if (st.ok()) r = query(*db, kCount, &st);
    if (!st.ok() || r.empty()) {
      out = st.to_string();
      return 3;
    }
    out = text_of(r[0]);
    return 0;
  });
  if (!WIFEXITED(prep_status) || WEXITSTATUS(prep_status) != 0) {
    std::cerr << name << ": setup failed: " << expected << "\n";
    return 1;
  }
  auto back_up = [&](const std::string& src, const std::string& dest, long die_at) {
    return in_child([&, die_at](std::string& out) {
      std::shared_ptr<Registry> registry;
      std::unique_ptr<Database> db;
      Status st = open_db(o, src, &registry, &db);
      if (!st.ok()) {
        out = st.to_string();
        return 3;
      }
      g_calls = 0;
      g_die_at = die_at;
      g_counting = true;
      st = db->backup(dest + "/data");
      g_counting = false;
      if (die_at > 0) ::kill(::getpid(), SIGKILL);
      out = st.ok() ? std::to_string(g_calls.load()) : st.to_string();
      return st.ok() ? 0 : 3;
    });
  };
  auto check = [&](const std::string& dir, bool must_open) {
    std::shared_ptr<Registry> registry;
    std::unique_ptr<Database> db;
    Status st = open_db(o, dir, &registry, &db);
    if (!st.ok()) return must_open ? "!open: " + st.to_string() + "\n" : std::string("refused");
    std::string out;
    std::vector<Row> r = query(*db, kCount, &st);
    if (!st.ok() || r.empty() || text_of(r[0]) != expected)
      out += "!rows: " + (r.empty() ? st.to_string() : text_of(r[0])) + ", expected " + expected + "\n";
    for (const Row& ic : query(*db, "pragma integrity_check", &st))
      if (ic[0].to_text() != "ok") out += "!integrity: " + ic[0].to_text() + "\n";
    return out.empty() ? std::string("whole") : out;
  };
  std::string dry_src = o.dir + "/" + name + ".dry", dry_dest = o.dir + "/" + name + ".dry-copy";
  copy_dir(pristine, dry_src);
  fs::remove_all(dry_dest);
  auto [dry_out, dry_status] = back_up(dry_src, dry_dest, 0);
  if (!WIFEXITED(dry_status) || WEXITSTATUS(dry_status) != 0) {
    std::cerr << name << ": the backup failed: " << dry_out << "\n";
    return 1;
  }
  long points = std::stol(dry_out);
  int64_t violations = 0;
  std::map<std::string, int> states;
  for (long k = 1; k <= points + 1; ++k) {
    std::string src = o.dir + "/" + name + ".run", dest = o.dir + "/" + name + ".run-copy";
    copy_dir(pristine, src);
    fs::remove_all(dest);
    auto [kill_out, kill_status] = back_up(src, dest, k);
    if (!WIFSIGNALED(kill_status) || WTERMSIG(kill_status) != SIGKILL) {
      std::cerr << name << " k=" << k << ": the backup was not killed: " << kill_out << "\n";
      ++violations;
      continue;
    }
    ++*kills;
    auto [report, verify_status] = in_child([&](std::string& out) {
      std::string source = check(src, true);
      if (source != "whole") out += "source " + source;
      std::error_code ec;
      std::string copy = !fs::exists(dest + "/data", ec) ? std::string(k > points ? "!no copy after the end\n" : "absent")
                                                         : check(dest, true);
      out += copy.find('!') != std::string::npos ? "copy " + copy : copy;
      return 0;
    });
    ++states[report.find('!') != std::string::npos ? "violation" : report];
    if (!WIFEXITED(verify_status) || report.find('!') != std::string::npos) {
      ++violations;
      std::cerr << name << " k=" << k << "/" << points << ":\n" << report << "\n";
    }
  }
  std::string seen;
  for (auto& [st, n] : states) seen += (seen.empty() ? "" : ", ") + st + " " + std::to_string(n);
  std::cout << name << "\twrite points " << points << "\tkills " << (points + 1) << "\tcopies: " << seen
            << "\tviolations " << violations << std::endl;
  for (const char* suffix : {".pristine", ".dry", ".dry-copy", ".run", ".run-copy"}) fs::remove_all(o.dir + "/" + name + suffix);
  return violations;
}

// ---- COPY … TO a file ------------------------------------------------------------------------
//
// The export is written beside its target and renamed over it when whole. A kill at any of
// its write points must leave the target exactly as it was or exactly the whole export,
// and the database as it was.

std::string file_text(const std::string& path) {
  std::string out;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    char buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
    std::fclose(f);
  }
  return out;
}

int64_t run_copy_to(const Options& o, int64_t* kills) {
  const std::string name = "copy_to";
  const std::string pristine = o.dir + "/" + name + ".pristine", target = o.dir + "/" + name + ".target.csv";
  const std::string old_text = "old contents\n";
  fs::remove_all(pristine);
  fs::create_directories(pristine);
  auto [prep, prep_status] = in_child([&](std::string& out) {
    std::shared_ptr<Registry> registry;
    std::unique_ptr<Database> db;
    Status st = open_db(o, pristine, &registry, &db);
    if (st.ok()) st = db->exec(kCommon);
    if (st.ok()) st = db->exec(fill_sql(o.rows));
    out = st.to_string();
    return st.ok() ? 0 : 3;
  });
  if (!WIFEXITED(prep_status) || WEXITSTATUS(prep_status) != 0) {
    std::cerr << name << ": setup failed: " << prep << "\n";
    return 1;
  }
  const std::string sql = "copy (select id, u, x from t order by id) to '" + target + "'";
  auto export_rows = [&](const std::string& dir, long die_at) {
    return in_child([&, die_at](std::string& out) {
      std::shared_ptr<Registry> registry;
      std::unique_ptr<Database> db;
      Status st = open_db(o, dir, &registry, &db);
      if (!st.ok()) {
        out = st.to_string();
        return 3;
      }
      g_calls = 0;
      g_die_at = die_at;
      g_counting = true;
      st = db->exec(sql);
      g_counting = false;
      if (die_at > 0) ::kill(::getpid(), SIGKILL);
      out = st.ok() ? std::to_string(g_calls.load()) : st.to_string();
      return st.ok() ? 0 : 3;
    });
  };
  auto reset_target = [&]() {
    for (auto& e : fs::directory_iterator(o.dir))
      if (e.path().filename().string().rfind(name + ".target", 0) == 0) fs::remove(e.path());
    std::FILE* f = std::fopen(target.c_str(), "wb");
    std::fwrite(old_text.data(), 1, old_text.size(), f);
    std::fclose(f);
  };
  const std::string run_dir = o.dir + "/" + name + ".run";
  copy_dir(pristine, run_dir);
  reset_target();
  auto [dry_out, dry_status] = export_rows(run_dir, 0);
  if (!WIFEXITED(dry_status) || WEXITSTATUS(dry_status) != 0) {
    std::cerr << name << ": the export failed: " << dry_out << "\n";
    return 1;
  }
  const long points = std::stol(dry_out);
  const std::string whole = file_text(target);
  int64_t violations = 0;
  std::map<std::string, int> states;
  for (long k = 1; k <= points + 1; ++k) {
    fs::remove_all(run_dir);
    copy_dir(pristine, run_dir);
    reset_target();
    auto [kill_out, kill_status] = export_rows(run_dir, k);
    if (!WIFSIGNALED(kill_status) || WTERMSIG(kill_status) != SIGKILL) {
      std::cerr << name << " k=" << k << ": the export was not killed: " << kill_out << "\n";
      ++violations;
      continue;
    }
    ++*kills;
    const std::string text = file_text(target);
    std::string state = text == old_text ? "old" : text == whole ? "whole" : "!partial";
    if (k > points && state != "whole") state = "!not whole after the end";
    auto [report, verify_status] = in_child([&](std::string& out) {
      std::shared_ptr<Registry> registry;
      std::unique_ptr<Database> db;
      Status st = open_db(o, run_dir, &registry, &db);
      std::vector<Row> r;
      if (st.ok()) r = query(*db, "select count(*) from t", &st);
      if (!st.ok() || r.empty() || r[0][0].as_int() != o.rows) out = "!database: " + st.to_string();
      return 0;
    });
    if (!report.empty()) state = report;
    ++states[state.find('!') != std::string::npos ? "violation" : state];
    if (!WIFEXITED(verify_status) || state.find('!') != std::string::npos) {
      ++violations;
      std::cerr << name << " k=" << k << "/" << points << ": " << state << " (" << text.size() << " bytes)\n";
    }
  }
  std::string seen;
  for (auto& [st, n] : states) seen += (seen.empty() ? "" : ", ") + st + " " + std::to_string(n);
  std::cout << name << "\twrite points " << points << "\tkills " << (points + 1) << "\ttarget: " << seen
            << "\tviolations " << violations << std::endl;
  fs::remove_all(pristine);
  fs::remove_all(run_dir);
  for (auto& e : fs::directory_iterator(o.dir))
    if (e.path().filename().string().rfind(name + ".target", 0) == 0) fs::remove(e.path());
  return violations;
}

int run(const Options& o) {
  int64_t total_kills = 0, total_violations = 0;
  fs::create_directories(o.dir);
  for (const Scenario& sc : scenarios(o.rows)) {
    if (!wants(o, sc.name)) continue;
    std::string pristine = o.dir + "/" + sc.name + ".pristine";
    fs::remove_all(pristine);
    fs::create_directories(pristine);
    auto [prep, prep_status] = in_child([&](std::string& out) {
      std::shared_ptr<Registry> registry;
      std::unique_ptr<Database> db;
      Status st = open_db(o, pristine, &registry, &db);
      if (st.ok()) st = db->exec(kCommon);
      if (st.ok()) st = db->exec(fill_sql(o.rows));
      if (st.ok() && !sc.setup.empty()) st = db->exec(sc.setup);
      std::string fp = st.ok() ? fingerprint(*db, &st, sc.name) : "";
      if (!st.ok()) {
        out = st.to_string();
        return 3;
      }
      db.reset();
      out = kv_digest(pristine, sc.settled_by_open) + "\n" + fp;
      return 0;
    });
    if (!WIFEXITED(prep_status) || WEXITSTATUS(prep_status) != 0) {
      std::cerr << sc.name << ": setup failed: " << prep << "\n";
      return 2;
    }
    const std::string kv_before = prep.substr(0, prep.find('\n'));
    const std::string before = prep.substr(prep.find('\n') + 1);
    // The dry run: the statement's write points and the schema after it.
    std::string dry = o.dir + "/" + sc.name + ".dry";
    copy_dir(pristine, dry);
    auto [dry_out, dry_status] = in_child([&](std::string& out) {
      std::shared_ptr<Registry> registry;
      std::unique_ptr<Database> db;
      Status st = open_db(o, dry, &registry, &db);
      if (!st.ok()) {
        out = st.to_string();
        return 3;
      }
      g_calls = 0;
      g_counting = true;
      st = db->exec(sc.ddl);
      g_counting = false;
      long calls = g_calls;
      if (!st.ok()) {
        out = "the statement failed: " + st.to_string();
        return 3;
      }
      std::string fp = fingerprint(*db, &st, sc.name);
      db.reset();
      out = std::to_string(calls) + "\n" + kv_digest(dry, sc.settled_by_open) + "\n" + fp;
      return 0;
    });
    if (!WIFEXITED(dry_status) || WEXITSTATUS(dry_status) != 0) {
      std::cerr << sc.name << ": dry run failed: " << dry_out << "\n";
      return 2;
    }
    size_t nl = dry_out.find('\n');
    long points = std::stol(dry_out.substr(0, nl));
    size_t nl2 = dry_out.find('\n', nl + 1);
    const std::string kv_after = dry_out.substr(nl + 1, nl2 - nl - 1);
    const std::string after = dry_out.substr(nl2 + 1);
    if (after == before) {
      std::cerr << sc.name << ": the statement did not change the schema fingerprint\n";
      return 2;
    }
    int64_t violations = 0;
    std::map<std::string, int> states;
    for (long k = 1; k <= points + 1; ++k) {  // k = points + 1: runs to the end, killed after
      std::string copy = o.dir + "/" + sc.name + ".run";
      copy_dir(pristine, copy);
      auto [kill_out, kill_status] = in_child([&](std::string& out) {
        std::shared_ptr<Registry> registry;
        std::unique_ptr<Database> db;
        Status st = open_db(o, copy, &registry, &db);
        if (!st.ok()) {
          out = st.to_string();
          return 3;
        }
        g_calls = 0;
        g_die_at = k;
        g_counting = true;
        st = db->exec(sc.ddl);
        g_counting = false;
        ::kill(::getpid(), SIGKILL);  // past the last write point: die before closing
        return 0;
      });
      if (!WIFSIGNALED(kill_status) || WTERMSIG(kill_status) != SIGKILL) {
        std::cerr << sc.name << " k=" << k << ": the writer was not killed: " << kill_out << "\n";
        ++violations;
        continue;
      }
      ++total_kills;
      auto [report, verify_status] = in_child([&](std::string& out) {
        out = verify(o, copy, sc, before, after, kv_before, kv_after);
        return 0;
      });
      if (!WIFEXITED(verify_status)) {
        std::cerr << sc.name << " k=" << k << ": the verifier crashed (signal "
                  << (WIFSIGNALED(verify_status) ? WTERMSIG(verify_status) : 0) << ")\n";
        ++violations;
        continue;
      }
      std::string state = report.substr(6, report.find('\n') - 6);
      ++states[state];
      if (report.find('!') != std::string::npos) {
        ++violations;
        std::cerr << sc.name << " k=" << k << "/" << points << ":\n" << report;
      }
    }
    std::string seen;
    for (auto& [s, n] : states) seen += (seen.empty() ? "" : ", ") + s + " " + std::to_string(n);
    std::cout << sc.name << "\twrite points " << points << "\tkills " << (points + 1) << "\tstates: " << seen
              << "\tviolations " << violations << std::endl;
    total_violations += violations;
    fs::remove_all(pristine);
    fs::remove_all(dry);
    fs::remove_all(o.dir + "/" + sc.name + ".run");
  }
  if (wants(o, "upgrade_format_1"))
    total_violations += run_upgrade(o, &total_kills);
  if (wants(o, "backup"))
    total_violations += run_backup(o, &total_kills);
  if (wants(o, "decomposition_cross_module"))
    total_violations += run_cross_module(o, &total_kills);
  if (wants(o, "copy_to"))
    total_violations += run_copy_to(o, &total_kills);
  if (wants(o, "reconcile"))
    total_violations += run_reconcile(o, &total_kills, "store");
  if (wants(o, "reconcile-sync"))
    total_violations += run_reconcile(o, &total_kills, "sync-store");
  std::cout << "total: kills " << total_kills << ", violations " << total_violations << std::endl;
  return total_violations == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  o.dir = (fs::temp_directory_path() / ("quereus-ddl-crash-" + std::to_string(::getpid()))).string();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--plugin-dir") o.plugin_dir = next();
    else if (a == "--dir") o.dir = next();
    else if (a == "--rows") o.rows = std::stoll(next());
    else if (a == "--scenario") o.only.push_back(next());
    else if (a == "--shard") {
      const std::string v = next();
      const size_t slash = v.find('/');
      if (slash == std::string::npos || (o.shards = std::stoi(v.substr(slash + 1))) < 1 ||
          (o.shard = std::stoi(v.substr(0, slash))) < 0 || o.shard >= o.shards) {
        std::cerr << "--shard takes K/N with 0 <= K < N\n";
        return 2;
      }
    }
    else {
      std::cerr << "usage: quereus-ddl-crash-test --plugin-dir DIR [--dir PATH] [--rows N] [--scenario NAME]... [--shard K/N]\n";
      return 2;
    }
  }
  if (o.plugin_dir.empty()) {
    std::cerr << "--plugin-dir is required\n";
    return 2;
  }
  spdlog::set_level(spdlog::level::warn);
  int rc = run(o);
  fs::remove_all(o.dir);
  return rc;
}
