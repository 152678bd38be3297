#!/usr/bin/env bash
# The `quereus` executable without a terminal: options, output modes, dot-commands in
# piped input, -c and scripts, .import, .dump round trips, errors with file and line,
# --bail, and the hints for habits brought from other engines.
# Usage: shell_test.sh QUEREUS_EXECUTABLE
set -uo pipefail
Q="$(realpath "$1")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
failures=0

# check NAME EXPECTED ACTUAL
check() {
  if [ "$2" != "$3" ]; then
    echo "FAIL: $1"
    echo "--- expected"; printf '%s\n' "$2"
    echo "--- actual"; printf '%s\n' "$3"
    failures=$((failures + 1))
  fi
}
# contains NAME NEEDLE HAYSTACK
contains() {
  if [[ "$3" != *"$2"* ]]; then
    echo "FAIL: $1: '$2' not in:"; printf '%s\n' "$3"
    failures=$((failures + 1))
  fi
}

# ---- command line
out=$("$Q" --version); contains "--version names the commit" "commit " "$out"
out=$("$Q" --help); for word in --config --format --command --bail --headers --nullvalue --check-syntax \
  --version "check" jsonl markdown "Exit status"; do contains "--help lists $word" "$word" "$out"; done
"$Q" --format=nope -c "select 1" >/dev/null 2>&1; check "a bad --format is a usage error" 2 $?
check "--format=csv (the = form)" $'a,b\n1,x' "$("$Q" --format=csv -c "select 1 as a, 'x' as b")"
check "--format tsv (a tab in a value as \\t)" $'a\tb\n1\tx\\ty' "$("$Q" --format tsv -c "select 1 as a, 'x'||char(9)||'y' as b")"
check "--format jsonl" $'{"a":1}\n{"a":2}' "$("$Q" --format jsonl -c "select 1 as a union all select 2")"
check "--format json" $'[{"a":1},\n{"a":null}]' "$("$Q" --format json -c "select 1 as a union all select null")"
check "--format json, no rows" '[]' "$("$Q" --format json -c "select 1 as a where false")"
check "--format markdown" $'| a   | bb  |\n|-----|-----|\n|   1 | x   |' \
  "$("$Q" --format markdown -c "select 1 as a, 'x' as bb")"
check "--format line" $'  a = 1\nbbb = x' "$("$Q" --format line -c "select 1 as a, 'x' as bbb")"
check "--format table: NULL and 'NULL' differ" $' a    | b\n------+--------\n NULL | \'NULL\'\n(1 row)' \
  "$("$Q" -c "select null as a, 'NULL' as b")"
check "csv: NULL is empty, '' is quoted" $'a,b\n,""' "$("$Q" --format csv -c "select null as a, '' as b")"
check "--nullvalue" $' a\n---\n ∅\n(1 row)' "$("$Q" --nullvalue ∅ -c "select null as a")"
check "--headers off" $'1,2' "$("$Q" --format csv --headers off -c "select 1 as a, 2 as b")"
# Display width: CJK and emoji take two columns.
check "CJK and emoji aligned" $'┌──────┬───┐\n│ name │ n │\n├──────┼───┤\n│ 漢字 │ 1 │\n│ 🙂   │ 2 │\n│ ab   │ 3 │\n└──────┴───┘\n(3 rows)' \
  "$("$Q" --format box -c "select '漢字' as name, 1 as n union all select '🙂', 2 union all select 'ab', 3")"

# ---- dot-commands in -c, piped input and scripts
check ".mode in -c" $'a\n1' "$("$Q" -c ".mode csv" -c "select 1 as a")"
out=$(printf '%s\n' ".mode csv" "create table t (a integer primary key, b text null);" \
  "insert into t values (1, 'x;y'), (2, null);" ".tables" "select * from t;" ".headers off" "select a from t;" | "$Q")
check "dot-commands in piped input" $'t\na,b\n1,x;y\n2,\n1\n2' "$out"
out=$(printf '%s\n' "create table t (a integer primary key);" ".schema t" | "$Q")
contains ".schema" 'create table' "$out"
contains ".help" ".import" "$("$Q" -c .help)"
contains ".databases" "main: default module" "$("$Q" -c .databases)"
contains ".plugins" "sha256:" "$("$Q" -c .plugins)"
contains ".stats" "statements:" "$("$Q" -c "select 1" -c .stats)"
contains ".timer" "Run Time:" "$("$Q" -c ".timer on" -c "select 1")"
contains ".events" '"event":"data"' "$("$Q" -c ".events on" -c "create table e (a integer primary key)" -c "insert into e values (1)")"
"$Q" -c ".output out.txt" -c "select 5 as five" -c ".output" -c "select 6 as six" >stdout.txt
contains ".output writes the file" "five" "$(cat out.txt)"
contains ".output: back to stdout" "six" "$(cat stdout.txt)"
"$Q" -c ".once once.txt" -c "select 7 as seven" -c "select 8 as eight" >stdout.txt
contains ".once: the next statement" "seven" "$(cat once.txt)"
contains ".once: only that one" "eight" "$(cat stdout.txt)"
printf '%s\n' "select 41 + 1 as x;" >inner.sql
check ".read" $'x\n42' "$("$Q" --format csv -c ".read inner.sql")"
# A statement across lines, a ';' in a string and in a comment.
out=$(printf '%s\n' "select 'a;b' as s -- c;d" ", 2 as n" ";" "/* ; */ select 3 as m;" | "$Q" --format csv)
check "statement ends by the lexer" $'s,n\na;b,2\nm\n3' "$out"

# ---- errors: file and line, --bail
printf '%s\n' "select 1 as a;" "" "select * from nosuch;" "select 2 as b;" >bad.sql
out=$("$Q" --format csv bad.sql 2>err.txt); status=$?
check "a script stops at the first error" "1" "$status"
check "… after the statements before it" $'a\n1' "$out"
contains "the error names file and line" "bad.sql:3" "$(cat err.txt)"
out=$("$Q" --format csv --bail off bad.sql 2>/dev/null); status=$?
check "--bail off goes on" $'a\n1\nb\n2' "$out"
check "--bail off still exits 1" "1" "$status"
printf '%s\n' "select 1 as a;" ".read bad.sql" >outer.sql
"$Q" outer.sql >/dev/null 2>err.txt
contains "an error in .read names the inner file" "bad.sql:3" "$(cat err.txt)"
printf 'select 1 as a;\nselect\n  nosuchcol from (select 1 as x);\n' | "$Q" >/dev/null 2>err.txt
contains "piped input: the line of the error" "line 3" "$(cat err.txt)"
"$Q" -c "select * from nosuch" >/dev/null 2>&1; check "-c error exits 1" 1 $?
"$Q" -c ".nosuch" >/dev/null 2>&1; check "unknown dot-command is an error" 1 $?

# ---- .import (the engine keeps an integral REAL as an integer, as the reference does)
printf 'id,name,score,ok\n1,Ann,1.5,true\n2,"Bob, Jr.",2,false\n3,"multi\nline",,true\n' >people.csv
out=$("$Q" --format csv -c "create table people (id integer primary key, name text, score real null, ok boolean)" \
  -c ".import people.csv people" -c "select id, name, score, ok, typeof(score) as ts from people order by id")
check ".import csv with header and coercion" $'id,name,score,ok,ts\n1,Ann,1.5,true,real\n2,"Bob, Jr.",2,false,integer\n3,"multi\nline",,true,null' "$out"
printf 'a\tb\nx\t1\ny\t2\n' >new.tsv
out=$("$Q" --format csv -c ".import new.tsv fresh" -c "select a, b from fresh order by a")
check ".import tsv creates the table" $'a,b\nx,1\ny,2' "$out"
printf '\xef\xbb\xbfid,name\n1,a\n' >bom.csv
check ".import skips a UTF-8 byte order mark" $'id,name\n1,a' \
  "$("$Q" --format csv -c "create table bom (id integer primary key, name text)" -c ".import bom.csv" -c "select * from bom")"
printf 'id,name\r\n1,a\r\n2,"b\r\nc"\r\n' >crlf.csv
check ".import with CRLF line ends" $'{"id":1,"name":"a"}\n{"id":2,"name":"b\\r\\nc"}' \
  "$("$Q" --format jsonl -c "create table crlf (id integer primary key, name text)" -c ".import crlf.csv" -c "select * from crlf")"
printf '1,x\n2,y\n' >nohead.csv
out=$("$Q" --format csv -c "create table nh (a integer primary key, b text)" -c ".import --no-header nohead.csv nh" -c "select count(*) as n from nh")
check ".import --no-header" $'n\n2' "$out"
printf 'id,name\n1,a\n1,b\n' >dup.csv
out=$("$Q" --format csv --bail off -c "create table d (id integer primary key, name text)" -c ".import dup.csv d" \
  -c "select count(*) as n from d" 2>err.txt)
check ".import is one transaction" $'n\n0' "$out"
contains ".import error names file and line" "dup.csv:3" "$(cat err.txt)"
seq 1 150000 | sed 's/^/x/' | awk 'BEGIN{print "v"} {print $0}' >big.csv
out=$("$Q" --format csv -c "create table big (v text primary key)" -c ".import big.csv big" -c "select count(*) as n from big")
check ".import a large file" $'n\n150000' "$out"

# JSON lines: a new table takes the first object's keys in order (any null columns, values
# keep their JSON type), an existing one converts; a key that is no column names its line.
printf '{"name": "Ann", "id": 1, "score": 1.5, "tags": ["a", "b"]}\n\n{"id": 2, "name": "Bob", "score": null}\n' >people.jsonl
out=$("$Q" --format csv -c ".import people.jsonl" -c "select *, typeof(id) as ti from people order by id")
check ".import jsonl creates the table" $'name,id,score,tags,ti\nAnn,1,1.5,"[""a"",""b""]",integer\nBob,2,,,integer' "$out"
out=$("$Q" --format csv -c "create table pj (id integer primary key, name text, score real null, tags text null)" \
  -c ".import --jsonl people.jsonl pj" -c "select id, name, score from pj order by id")
check ".import jsonl into a table" $'id,name,score\n1,Ann,1.5\n2,Bob,' "$out"
printf '{"id": 1}\n{"id": 2, "zzz": 3}\n' >bad.jsonl
"$Q" -c ".import bad.jsonl" >/dev/null 2>err.txt
contains ".import jsonl error names the line" "bad.jsonl:2: key 'zzz'" "$(cat err.txt)"

# ---- .export
"$Q" -c ".import people.jsonl" -c '.export "select id, name from people order by id" out.csv' \
  -c '.export "select id from people order by id" out.jsonl' -c "select 1 as after" >stdout.txt
check ".export csv" $'id,name\n1,Ann\n2,Bob' "$(cat out.csv)"
check ".export jsonl" $'{"id":1}\n{"id":2}' "$(cat out.jsonl)"
check ".export leaves the mode and output" $' after\n-------\n     1\n(1 row)' "$(cat stdout.txt)"

# ---- .dump round trip
cat >schema.sql <<'EOF'
create table parent (id integer primary key, name text unique) with tags (display_name = 'Parents');
create table child (id integer primary key, parent_id integer references parent(id), price real null,
  flag boolean null, data blob null, note text null, doubled integer generated always as (id * 2),
  check (price is null or price >= 0));
create index child_parent on child (parent_id);
create view expensive as select id, price from child where price > 10;
insert into parent values (1, 'it''s'), (2, 'two;three');
insert into child (id, parent_id, price, flag, data, note) values
  (1, 1, 1.0, true, x'00ff', 'line1
line2'), (2, 2, 20.5, false, null, null), (3, 1, 1e300, null, x'', '漢字');
EOF
"$Q" -c ".read schema.sql" -c ".dump" >dump.sql 2>err.txt || { echo "FAIL: .dump"; cat err.txt; failures=$((failures+1)); }
# The restored database dumps to the same text, and its rows and types read back the same.
"$Q" -c ".read dump.sql" -c ".dump" >dump2.sql 2>err.txt || { echo "FAIL: restoring the dump"; cat err.txt; failures=$((failures+1)); }
check ".dump restores exactly" "$(cat dump.sql)" "$(cat dump2.sql)"
q="select id, parent_id, price, typeof(price) as tp, flag, data, note, doubled from child order by id"
check ".dump keeps values and types" "$("$Q" --format jsonl -c ".read schema.sql" -c "$q")" "$("$Q" --format jsonl -c ".read dump.sql" -c "$q")"
check ".dump keeps views" "$("$Q" --format csv -c ".read schema.sql" -c "select * from expensive")" \
  "$("$Q" --format csv -c ".read dump.sql" -c "select * from expensive")"
contains ".dump keeps tags" "display_name" "$(cat dump.sql)"
contains ".dump keeps the index" "child_parent" "$(cat dump.sql)"
out=$("$Q" -c ".read schema.sql" -c ".dump parent")
contains ".dump TABLE" "parent" "$out"
if [[ "$out" == *"insert into \"main\".\"child\""* ]]; then echo "FAIL: .dump TABLE dumped another table"; failures=$((failures+1)); fi

# Views, a materialized view and an assertion come back in an order that runs (a view
# named before the view it reads), with odd names.
cat >views.sql <<'EOF'
create table sales (id integer primary key, region text, amount integer);
insert into sales values (1, 'n', 10), (2, 's', 20), (3, 'n', 5);
create view z_big as select * from sales where amount > 6;
create view a_bigger as select * from z_big where amount > 15;
create materialized view by_region as select region, sum(amount) as total, count(*) as n from a_bigger group by region;
create assertion positive check (not exists (select 1 from sales where amount < 0));
create table "odd ""name""" ("select" text primary key, x any null);
insert into "odd ""name""" values ('a', 1), ('b', 'text'), ('c', 2.5), ('d', x'01'), ('e', null);
EOF
"$Q" -c ".read views.sql" -c ".dump" >vdump.sql
"$Q" -c ".read vdump.sql" -c ".dump" >vdump2.sql 2>err.txt || { echo "FAIL: restoring views"; cat err.txt; failures=$((failures+1)); }
check ".dump orders views by what they read" "$(cat vdump.sql)" "$(cat vdump2.sql)"
check ".dump: the materialized view is recomputed" $'region,total,n\ns,20,1' \
  "$("$Q" --format csv -c ".read vdump.sql" -c "select * from by_region")"

# ---- .backup: a store database copied into a new directory, opened from there
printf 'plugins: [{path: store}]\ndatabases:\n  main:\n    default_module: store\n    module_options: {store: {path: ./live, sync: false}}\n' >live.yaml
cat >store.sql <<'EOF'
create table sales (id integer primary key, region text, amount integer);
insert into sales values (1, 'n', 10), (2, 's', 20), (3, 'n', 5);
create index sales_region on sales (region);
create view big as select * from sales where amount > 6;
create materialized view by_region as select region, sum(amount) as total from sales group by region;
create assertion positive check (not exists (select 1 from sales where amount < 0));
EOF
"$Q" --config live.yaml -c ".read store.sql" -c ".backup ./copy" 2>err.txt || { echo "FAIL: .backup"; cat err.txt; failures=$((failures+1)); }
sed 's#./live#./copy#' live.yaml >copy.yaml
check ".backup copies schema and rows" "$("$Q" --config live.yaml -c .dump)" "$("$Q" --config copy.yaml -c .dump)"
check ".backup: the copy checks ok" "ok" "$("$Q" check --config copy.yaml)"
"$Q" --config live.yaml -c ".backup ./copy" >/dev/null 2>&1; check ".backup refuses a directory in use" 1 $?
"$Q" -c ".backup ./x" >/dev/null 2>&1; check ".backup refuses a database without a store" 1 $?

# ---- hints for habits from other engines
for sql in "pragma table_info(t)" "select * from sqlite_master" "describe t" "show tables"; do
  "$Q" -c "create table t (a integer primary key)" -c "$sql" >/dev/null 2>err.txt
  contains "a hint for: $sql" "instead" "$(cat err.txt)"
done
# ---- open-time reconciliation (docs/reconciliation.md): YAML schema files and migrate intents
mkdir -p rec/schema
printf 'declare schema main {\n  table users (id integer primary key, email text) with tags ("quereus.id" = %s);\n  table drafts (id integer primary key, body text);\n}\n' "'usr'" >rec/schema/v1.sql
printf 'declare schema main {\n  table users (id integer primary key, email text) with tags ("quereus.id" = %s);\n  table notes (id integer primary key, body text);\n}\n' "'usr'" >rec/schema/v2.sql
printf 'plugins: [{path: store}]\ndatabases:\n  main:\n    default_module: store\n    module_options: {store: {path: ./data, sync: false}}\n    schema: [schema/v1.sql]\n' >rec/v1.yaml
sed 's#v1.sql#v2.sql#' rec/v1.yaml >rec/v2.yaml
printf '    migrate:\n      rename: {drafts: notes}\n' | cat rec/v2.yaml - >rec/v2m.yaml
printf '    migrate:\n      drop: [nosuch]\n' | cat rec/v2.yaml - >rec/v2bad.yaml
"$Q" --config rec/v1.yaml -c "insert into drafts values (1, 'kept')" 2>err.txt || { echo "FAIL: reconcile v1"; cat err.txt; failures=$((failures+1)); }
"$Q" --config rec/v2.yaml -c "select 1" >/dev/null 2>err.txt; check "reconcile: a vanished table fails the open (exit 2)" 2 $?
contains "reconcile: the refusal names the table" "Table 'main.drafts' is stored but no longer declared" "$(cat err.txt)"
contains "reconcile: the refusal shows the YAML" "rename: {drafts: notes}" "$(cat err.txt)"
"$Q" --config rec/v2bad.yaml -c "select 1" >/dev/null 2>err.txt; check "reconcile: a contradictory intent fails the open (exit 2)" 2 $?
contains "reconcile: the intent's file and line" "v2bad.yaml:8" "$(cat err.txt)"
check "reconcile: the rename hands over the rows" $'body\nkept' "$("$Q" --config rec/v2m.yaml --format csv -c "select body from notes")"
check "reconcile: the same YAML opens again" $'n\n1' "$("$Q" --config rec/v2m.yaml --format csv -c "select count(*) as n from notes")"

"$Q" -c "create table nn (a integer primary key, b text)" -c "insert into nn values (1, null)" >/dev/null 2>err.txt
contains "NOT NULL by default is explained" "NOT NULL by default" "$(cat err.txt)"

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "ok: shell tests passed"
