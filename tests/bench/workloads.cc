// Benchmark: the workloads. Plain, natural SQL — the same text on both engines, prepared
// once and run with bound parameters in loops.
#include "workloads.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string_view>

namespace quereus::bench {

namespace {

// ---------------------------------------------------------------- data

// splitmix64: a deterministic, well-mixed stream from a counter.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr size_t kTextLength = 20;

int64_t a_of(int64_t id, int64_t rows) { return static_cast<int64_t>(mix(id) % static_cast<uint64_t>(rows)); }

// b: 20 lower-case letters.
void b_of(int64_t id, char* out) {
  uint64_t h = mix(static_cast<uint64_t>(id) ^ 0x5bd1e995ULL);
  for (size_t i = 0; i < kTextLength; ++i) {
    if (i == 10) h = mix(h);
    out[i] = static_cast<char>('a' + h % 26);
    h /= 26;
  }
}

// Inserts t's rows in one transaction through one prepared statement.
void load_t(BenchEngine& engine, int64_t rows) {
  engine.exec("create table t (id integer primary key, a integer, b text)");
  engine.exec("begin");
  auto insert = engine.prepare("insert into t (id, a, b) values (?, ?, ?)");
  char b[kTextLength];
  for (int64_t id = 1; id <= rows; ++id) {
    b_of(id, b);
    insert->bind_int(1, id);
    insert->bind_int(2, a_of(id, rows));
    insert->bind_text(3, std::string_view(b, kTextLength));
    while (insert->step()) {
    }
    insert->reset();
  }
  engine.exec("commit");
}

void load_d(BenchEngine& engine, int64_t dim_rows) {
  engine.exec("create table d (id integer primary key, v integer)");
  engine.exec("begin");
  auto insert = engine.prepare("insert into d (id, v) values (?, ?)");
  for (int64_t id = 1; id <= dim_rows; ++id) {
    insert->bind_int(1, id);
    insert->bind_int(2, static_cast<int64_t>(mix(id + 0x1000) % 1000));
    while (insert->step()) {
    }
    insert->reset();
  }
  engine.exec("commit");
}

// ---------------------------------------------------------------- helpers

class Timer {
 public:
  explicit Timer(const TimedStart& started) {
    if (started) started();
    start_ = std::chrono::steady_clock::now();
  }
  double ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Builds "name=value,name=value"; integer sums wrap (unsigned) so any order gives the same.
class Checksum {
 public:
  Checksum& add(const char* name, uint64_t value) { return add(name, std::to_string(value)); }
  Checksum& add(const char* name, const std::string& value) {
    if (!text_.empty()) text_ += ',';
    text_ += name;
    text_ += '=';
    text_ += value;
    return *this;
  }
  std::string str() const { return text_; }

 private:
  std::string text_;
};

uint64_t u(int64_t v) { return static_cast<uint64_t>(v); }

// Reads one row of integers (NULL as "null") from a statement expected to return one row.
std::string single_row(BenchStatement& stmt, int columns) {
  if (!stmt.step()) throw BenchError("expected a row");
  std::string out;
  for (int c = 0; c < columns; ++c) {
    if (c) out += '/';
    out += stmt.is_null(c) ? "null" : std::to_string(stmt.int_at(c));
  }
  if (stmt.step()) throw BenchError("expected one row");
  stmt.reset();
  return out;
}

// ---------------------------------------------------------------- workloads

WorkloadResult bulk_insert(BenchEngine& engine, const Sizes& sizes, const TimedStart& started) {
  Timer timer(started);
  load_t(engine, sizes.rows);
  const double ms = timer.ms();
  auto check = engine.prepare("select count(*), sum(a) from t");
  return {ms, Checksum().add("count/sum", single_row(*check, 2)).str()};
}

WorkloadResult point_select(BenchEngine& engine, const Sizes& sizes, const TimedStart& started) {
  load_t(engine, sizes.rows);
  auto select = engine.prepare("select a, b from t where id = ?");
  uint64_t found = 0, sum_a = 0, sum_b = 0;
  Timer timer(started);
  for (int64_t k = 0; k < sizes.lookups; ++k) {
    select->bind_int(1, 1 + static_cast<int64_t>(mix(k + 0x2000) % u(sizes.rows)));
    while (select->step()) {
      ++found;
      sum_a += u(select->int_at(0));
      sum_b += static_cast<unsigned char>(select->text_at(1)[0]);
    }
    select->reset();
  }
  const double ms = timer.ms();
  return {ms, Checksum().add("found", found).add("sum_a", sum_a).add("sum_b0", sum_b).str()};
}

WorkloadResult range_scan(BenchEngine& engine, const Sizes& sizes, const TimedStart& started) {
  load_t(engine, sizes.rows);
  auto select = engine.prepare("select id, a, b from t where id between ? and ?");
  const int64_t starts = sizes.rows - sizes.range_width + 1;
  uint64_t rows = 0, sum_id = 0, sum_a = 0;
  Timer timer(started);
  for (int64_t k = 0; k < sizes.ranges; ++k) {
    const int64_t lo = 1 + static_cast<int64_t>(mix(k + 0x3000) % u(starts));
    select->bind_int(1, lo);
    select->bind_int(2, lo + sizes.range_width - 1);
    while (select->step()) {
      ++rows;
      sum_id += u(select->int_at(0));
      sum_a += u(select->int_at(1));
    }
    select->reset();
  }
  const double ms = timer.ms();
  return {ms, Checksum().add("rows", rows).add("sum_id", sum_id).add("sum_a", sum_a).str()};
}

WorkloadResult scan_filter_agg(BenchEngine& engine, const Sizes& sizes, const TimedStart& started) {
  load_t(engine, sizes.rows);
  auto select = engine.prepare("select count(*), sum(a), min(b), max(b) from t where a % 10 = 3");
  Timer timer(started);
  if (!select->step()) throw BenchError("expected a row");
  std::string result = std::to_string(select->int_at(0)) + "/" + std::to_string(select->int_at(1)) + "/" +
                       std::string(select->text_at(2)) + "/" + std::string(select->text_at(3));
  while (select->step()) {
  }
  select->reset();
  const double ms = timer.ms();
  return {ms, Checksum().add("count/sum/min/max", result).str()};
}

WorkloadResult group_by(BenchEngine& engine, const Sizes& sizes, const TimedStart& started) {
  load_t(engine, sizes.rows);
  auto select =
      engine.prepare("select a % " + std::to_string(sizes.groups) + ", count(*), sum(id) from t group by 1");
  uint64_t groups = 0, sum_key = 0, sum_count = 0, sum_sum = 0, key_x_count = 0;
  Timer timer(started);
  while (select->step()) {
    const int64_t key = select->int_at(0), count = select->int_at(1);
    ++groups;
    sum_key += u(key);
    sum_count += u(count);
    sum_sum += u(select->int_at(2));
    key_x_count += u(key) * u(count);
  }
  select->reset();
  const double ms = timer.ms();
  return {ms, Checksum()
                  .add("groups", groups)
                  .add("sum_key", sum_key)
                  .add("sum_count", sum_count)
                  .add("sum_sum", sum_sum)
                  .add("key_x_count", key_x_count)
                  .str()};
}

WorkloadResult join(BenchEngine& engine, const Sizes& sizes, const TimedStart& started) {
  load_t(engine, sizes.rows);
  load_d(engine, sizes.dim_rows);
  auto select = engine.prepare("select count(*), sum(t.a) from t join d on t.a = d.id");
  Timer timer(started);
  const std::string result = single_row(*select, 2);
  const double ms = timer.ms();
  return {ms, Checksum().add("count/sum", result).str()};
}

WorkloadResult order_by(BenchEngine& engine, const Sizes& sizes, const TimedStart& started) {
  load_t(engine, sizes.rows);
  auto select = engine.prepare("select id, a, b from t order by a");
  uint64_t rows = 0, unsorted = 0, sum_id = 0, a_x_pos = 0, sum_b_len = 0;
  int64_t last_a = INT64_MIN;
  Timer timer(started);
  while (select->step()) {
    const int64_t a = select->int_at(1);
    if (a < last_a) ++unsorted;
    last_a = a;
    sum_id += u(select->int_at(0));
    a_x_pos += u(a) * rows;  // independent of the order among equal keys
    sum_b_len += select->text_at(2).size();
    ++rows;
  }
  select->reset();
  const double ms = timer.ms();
  if (unsorted) throw BenchError(std::to_string(unsorted) + " rows out of order");
  return {ms, Checksum()
                  .add("rows", rows)
                  .add("sum_id", sum_id)
                  .add("a_x_pos", a_x_pos)
                  .add("sum_b_len", sum_b_len)
                  .str()};
}

WorkloadResult correlated_subquery(BenchEngine& engine, const Sizes& sizes, const TimedStart& started) {
  load_t(engine, sizes.rows);
  load_d(engine, sizes.dim_rows);
  auto select = engine.prepare("select d.id, (select max(t.a) from t where t.id = d.id * 7) from d");
  uint64_t rows = 0, nulls = 0, sum_id = 0, sum_max = 0;
  Timer timer(started);
  while (select->step()) {
    ++rows;
    sum_id += u(select->int_at(0));
    if (select->is_null(1))
      ++nulls;
    else
      sum_max += u(select->int_at(1));
  }
  select->reset();
  const double ms = timer.ms();
  return {ms, Checksum().add("rows", rows).add("nulls", nulls).add("sum_id", sum_id).add("sum_max", sum_max).str()};
}

}  // namespace

Sizes Sizes::at(double scale) {
  auto scaled = [scale](int64_t n) { return std::max<int64_t>(1, std::llround(static_cast<double>(n) * scale)); };
  Sizes base, s;
  s.rows = scaled(base.rows);
  s.dim_rows = scaled(base.dim_rows);
  s.lookups = scaled(base.lookups);
  s.ranges = scaled(base.ranges);
  s.range_width = std::min(base.range_width, s.rows);
  s.groups = scaled(base.groups);
  return s;
}

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> kAll = {
      {"bulk_insert", "insert `rows` rows into t in one transaction (one prepared insert)", bulk_insert},
      {"point_select", "`lookups` lookups by primary key: select a, b from t where id = ?", point_select},
      {"range_scan", "`ranges` ranges of 100 rows: select id, a, b from t where id between ? and ?", range_scan},
      {"scan_filter_agg", "full scan, filter, aggregate: select count(*), sum(a), min(b), max(b) from t where a % 10 = 3",
       scan_filter_agg},
      {"group_by", "select a % 100000, count(*), sum(id) from t group by 1 (100,000 groups)", group_by},
      {"join", "t (rows) join d (dim_rows) on t.a = d.id: select count(*), sum(t.a)", join},
      {"order_by", "select id, a, b from t order by a, all rows drained", order_by},
      {"correlated_subquery", "select d.id, (select max(t.a) from t where t.id = d.id * 7) from d",
       correlated_subquery},
  };
  return kAll;
}

}  // namespace quereus::bench
