// Runtime: window functions (planner/rel_node.h WindowNode). Materializes its input,
// sorts by each call's (partition, order) keys and computes the calls per partition.
#include <algorithm>
#include <cmath>
#include <optional>

#include "common/status.h"
#include "parser/ast.h"
#include "planner/rel_node.h"
#include "types/compare.h"
#include "types/conversions.h"

namespace quereus {

namespace {

using FB = ast::FrameBound::Kind;
using Unit = ast::WindowFrame::Unit;
using Excl = ast::WindowFrame::Exclude;

int compare_keys(const std::vector<Value>& a, const std::vector<Value>& b, const std::vector<SortKey>& keys,
                 size_t offset) {
  for (size_t i = 0; i < keys.size(); ++i) {
    const Value& x = a[offset + i];
    const Value& y = b[offset + i];
    if (x.is_null() || y.is_null()) {
      if (x.is_null() && y.is_null()) continue;
      bool first = keys[i].nulls_first;
      return x.is_null() == first ? -1 : 1;
    }
    int c = compare_values(x, y, ordering_collation(keys[i].expr->collation, keys[i].expr->type));
    if (c) return keys[i].desc ? -c : c;
  }
  return 0;
}

class WindowOp : public Operator {
 public:
  explicit WindowOp(const WindowNode& n) : node_(n), input_(n.input->instantiate()) {}

  void open(const EvalEnv& outer) override {
    outer_ = outer;
    input_->open(outer);
    rows_.clear();
    memory_.reset(memory_budget(outer.ctx));
    Row r;
    while (input_->next(r)) {
      poll_interrupt(outer.ctx);
      // The row, and one result cell per window call.
      memory_.add(row_bytes(r) + static_cast<int64_t>(node_.calls.size() * sizeof(Value)));
      rows_.push_back(r);
    }
    results_.assign(node_.calls.size(), std::vector<Value>(rows_.size()));
    args_.assign(rows_.size(), {});
    order_.clear();
    for (size_t c = 0; c < node_.calls.size(); ++c) compute(c);
    if (order_.empty())
      for (size_t i = 0; i < rows_.size(); ++i) order_.push_back(i);
    pos_ = 0;
  }

  bool next(Row& out) override {
    if (pos_ >= order_.size()) return false;
    size_t i = order_[pos_++];
    out = rows_[i];
    for (auto& res : results_) out.push_back(res[i]);
    return true;
  }

 private:
  Value eval(const ScalarPtr& e, size_t row) const {
    EvalEnv env{&rows_[row], &outer_, outer_.ctx};
    return e->eval(env);
  }

  // Frame arithmetic saturates: an offset near INT64_MAX reaches past every partition
  // instead of wrapping around.
  static int64_t sat_add(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
  }

  int64_t offset_value(const ScalarPtr& e, size_t row) const {
    Value v = eval(e, row);
    if (v.is_null() || !v.is_numeric() || v.to_double() < 0)
      throw Error(StatusCode::kError, "Invalid window frame offset");
    if (v.is_integer()) return v.as_int();  // a big integer saturates: past every partition
    double d = v.to_double();
    return d >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(d);
  }

  // The numeric value of a lag / lead / ntile / nth_value argument, as SQLite reads one:
  // text by its leading number (none: 0), a blob as 0; nullopt for NULL.
  std::optional<double> numeric_arg(const ScalarPtr& e, size_t row) const {
    Value v = eval(e, row);
    if (v.is_null()) return std::nullopt;
    if (v.is_numeric()) return v.to_double();
    if (v.type() == ValueType::kBoolean) return static_cast<double>(v.as_int());
    if (v.type() == ValueType::kText) {
      Value n = parse_number(v.str(), true);
      return n.is_null() ? 0.0 : n.to_double();
    }
    return 0.0;
  }

  // lag / lead's offset (SQLite): NULL or a fraction gives the default for the row; a
  // negative offset looks the other way.
  std::optional<int64_t> step_offset(const WindowCall& call, size_t row) const {
    if (call.args.size() < 2) return 1;
    std::optional<double> d = numeric_arg(call.args[1], row);
    if (!d || !std::isfinite(*d) || *d != std::trunc(*d)) return std::nullopt;
    if (*d >= 9.2e18) return INT64_MAX;
    if (*d <= -9.2e18) return -INT64_MAX;
    return static_cast<int64_t>(*d);
  }

  // A positive whole count (ntile's buckets, nth_value's position), or the refusal SQLite
  // gives. ntile truncates a fraction, as SQLite does; nth_value refuses one.
  int64_t positive_count(const ScalarPtr& e, size_t row, bool truncate, const char* message) const {
    std::optional<double> d = numeric_arg(e, row);
    if (!d || !std::isfinite(*d)) throw Error(StatusCode::kError, message);
    double t = std::trunc(*d);
    if ((!truncate && t != *d) || t < 1) throw Error(StatusCode::kError, message);
    return t >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(t);
  }

  void compute(size_t ci) {
    const WindowCall& call = node_.calls[ci];
    size_t n = rows_.size();
    size_t np = call.partition_by.size(), no = call.order_by.size();
    // Sort keys per row: partition values then order values.
    std::vector<std::vector<Value>> keys(n);
    for (size_t i = 0; i < n; ++i) {
      for (auto& p : call.partition_by) keys[i].push_back(eval(p, i));
      for (auto& o : call.order_by) keys[i].push_back(eval(o.expr, i));
    }
    std::vector<SortKey> part_keys;
    for (auto& p : call.partition_by) part_keys.push_back(SortKey{p, false, true});
    std::vector<size_t> idx(n);
    for (size_t i = 0; i < n; ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      int c = compare_keys(keys[a], keys[b], part_keys, 0);
      if (c) return c < 0;
      return compare_keys(keys[a], keys[b], call.order_by, np) < 0;
    });
    if (ci == 0) order_ = idx;
    // A frame-based call (an aggregate, first_value, last_value, nth_value) evaluates each
    // row's arguments once, as SQLite does, for every frame holding the row to read: a
    // frame of k rows would otherwise evaluate them k times per row (a correlated subquery
    // in an argument ran once per frame member; difftest seed 554158065).
    static const char* const kRowwise[] = {"row_number", "rank", "dense_rank", "percent_rank",
                                           "cume_dist", "ntile", "lag", "lead"};
    if (std::none_of(std::begin(kRowwise), std::end(kRowwise), [&](const char* r) { return call.name == r; })) {
      const size_t value_args = call.name == "nth_value" ? 1 : call.args.size();
      args_memory_.reset(memory_budget(outer_.ctx));
      for (size_t i = 0; i < n; ++i) {
        poll_interrupt(outer_.ctx);
        args_[i].clear();
        for (size_t a = 0; a < value_args; ++a) args_[i].push_back(eval(call.args[a], i));
        args_memory_.add_row(args_[i]);
      }
    }
    size_t start = 0;
    while (start < n) {
      size_t end = start + 1;
      while (end < n && compare_keys(keys[idx[start]], keys[idx[end]], part_keys, 0) == 0) ++end;
      std::vector<size_t> part(idx.begin() + start, idx.begin() + end);
      // Peer groups under the ORDER BY.
      std::vector<size_t> group_of(part.size());
      std::vector<std::pair<size_t, size_t>> groups;
      for (size_t j = 0; j < part.size(); ++j) {
        if (j == 0 || no == 0 || compare_keys(keys[part[j - 1]], keys[part[j]], call.order_by, np) != 0)
          groups.push_back({j, j});
        groups.back().second = j + 1;
        group_of[j] = groups.size() - 1;
      }
      if (no == 0) {
        groups.assign(1, {0, part.size()});
        std::fill(group_of.begin(), group_of.end(), 0);
      }
      compute_partition(ci, call, part, group_of, groups, keys, np);
      start = end;
    }
  }

  // The frame of row j of a partition as [lo, hi) plus excluded positions.
  void frame_of(const WindowCall& call, const std::vector<size_t>& part, size_t j,
                const std::vector<size_t>& group_of, const std::vector<std::pair<size_t, size_t>>& groups,
                const std::vector<std::vector<Value>>& keys, size_t np, size_t* lo, size_t* hi) const {
    size_t m = part.size();
    if (!call.has_frame) {
      *lo = 0;
      *hi = call.order_by.empty() ? m : groups[group_of[j]].second;
      return;
    }
    auto bound = [&](int kind, const ScalarPtr& off, bool is_start) -> int64_t {
      auto g = groups[group_of[j]];
      switch (static_cast<FB>(kind)) {
        case FB::kUnboundedPreceding: return 0;
        case FB::kUnboundedFollowing: return static_cast<int64_t>(m);
        case FB::kCurrentRow:
          if (call.unit == static_cast<int>(Unit::kRows)) return static_cast<int64_t>(is_start ? j : j + 1);
          return static_cast<int64_t>(is_start ? g.first : g.second);
        case FB::kPreceding:
        case FB::kFollowing: {
          int64_t k = offset_value(off, part[j]);
          bool back = static_cast<FB>(kind) == FB::kPreceding;
          if (call.unit == static_cast<int>(Unit::kRows)) {
            int64_t p = back ? sat_add(static_cast<int64_t>(j), -k) : sat_add(static_cast<int64_t>(j), k);
            return is_start ? p : sat_add(p, 1);
          }
          if (call.unit == static_cast<int>(Unit::kGroups)) {
            int64_t gi = sat_add(static_cast<int64_t>(group_of[j]), back ? -k : k);
            if (gi < 0) return is_start ? 0 : 0;
            if (gi >= static_cast<int64_t>(groups.size())) return static_cast<int64_t>(m);
            return static_cast<int64_t>(is_start ? groups[gi].first : groups[gi].second);
          }
          // RANGE with an offset: a numeric ORDER BY key within k of the current one. A NULL
          // or non-numeric key has no place on the number line: its frame is its peer group,
          // and it lies in no numeric row's interval (window-functions.md, "Frame offsets").
          if (call.order_by.size() != 1) throw Error(StatusCode::kError, "RANGE with an offset requires exactly one ORDER BY term");
          const Value& cur = keys[part[j]][np];
          if (!cur.is_numeric()) return static_cast<int64_t>(is_start ? g.first : g.second);
          bool desc = call.order_by[0].desc;
          double target = cur.to_double() + ((back != desc) ? -static_cast<double>(k) : static_cast<double>(k));
          if (numeric_run_.valid) {
            // The partition's numeric keys sit together, sorted: search them.
            auto at = [&](size_t p) { return keys[part[p]][np].to_double(); };
            size_t first = numeric_run_.begin, last = numeric_run_.end;
            auto point = [&](auto&& before) {
              size_t a = first, b = last;
              while (a < b) {
                size_t mid = a + (b - a) / 2;
                if (before(at(mid))) a = mid + 1;
                else b = mid;
              }
              return a;
            };
            if (is_start) {
              size_t p = desc ? point([&](double v) { return v > target; }) : point([&](double v) { return v < target; });
              return static_cast<int64_t>(p == last ? m : p);
            }
            size_t p = desc ? point([&](double v) { return v >= target; }) : point([&](double v) { return v <= target; });
            return static_cast<int64_t>(p == first ? 0 : p);
          }
          size_t p = 0;
          if (is_start) {
            while (p < m) {
              const Value& v = keys[part[p]][np];
              if (v.is_numeric() && (desc ? v.to_double() <= target : v.to_double() >= target)) break;
              ++p;
            }
            return static_cast<int64_t>(p);
          }
          p = m;
          while (p > 0) {
            const Value& v = keys[part[p - 1]][np];
            if (v.is_numeric() && (desc ? v.to_double() >= target : v.to_double() <= target)) break;
            --p;
          }
          return static_cast<int64_t>(p);
        }
      }
      return 0;
    };
    int64_t a = bound(call.start_kind, call.start_offset, true);
    int64_t b = bound(call.end_kind, call.end_offset, false);
    a = std::clamp<int64_t>(a, 0, static_cast<int64_t>(m));
    b = std::clamp<int64_t>(b, 0, static_cast<int64_t>(m));
    *lo = static_cast<size_t>(a);
    *hi = static_cast<size_t>(std::max(a, b));
  }

  // Where a RANGE frame with an offset searches its bounds: the partition's numeric ORDER BY
  // keys, when they form one contiguous run (the sort puts NULLs and text on either side);
  // otherwise frame_of walks the partition.
  struct NumericRun {
    bool valid = false;
    size_t begin = 0, end = 0;
  };
  void find_numeric_run(const WindowCall& call, const std::vector<size_t>& part,
                        const std::vector<std::vector<Value>>& keys, size_t np) {
    numeric_run_ = {};
    if (!call.has_frame || call.unit != static_cast<int>(Unit::kRange) || call.order_by.size() != 1) return;
    size_t m = part.size(), b = 0;
    while (b < m && !keys[part[b]][np].is_numeric()) ++b;
    size_t e = b;
    while (e < m && keys[part[e]][np].is_numeric()) ++e;
    for (size_t p = e; p < m; ++p)
      if (keys[part[p]][np].is_numeric()) return;
    numeric_run_ = {true, b, e};
  }

  bool excluded(const WindowCall& call, size_t j, size_t p, const std::vector<size_t>& group_of) const {
    switch (static_cast<Excl>(call.exclude)) {
      case Excl::kCurrentRow: return p == j;
      case Excl::kGroup: return group_of[p] == group_of[j];
      case Excl::kTies: return p != j && group_of[p] == group_of[j];
      default: return false;
    }
  }

  void compute_partition(size_t ci, const WindowCall& call, const std::vector<size_t>& part,
                         const std::vector<size_t>& group_of, const std::vector<std::pair<size_t, size_t>>& groups,
                         const std::vector<std::vector<Value>>& keys, size_t np) {
    auto& out = results_[ci];
    size_t m = part.size();
    const std::string& f = call.name;
    find_numeric_run(call, part, keys, np);
    if (f == "row_number") {
      for (size_t j = 0; j < m; ++j) out[part[j]] = Value::Integer(static_cast<int64_t>(j + 1));
      return;
    }
    if (f == "rank" || f == "dense_rank" || f == "percent_rank" || f == "cume_dist") {
      for (size_t j = 0; j < m; ++j) {
        auto g = groups[group_of[j]];
        if (f == "rank") out[part[j]] = Value::Integer(static_cast<int64_t>(g.first + 1));
        else if (f == "dense_rank") out[part[j]] = Value::Integer(static_cast<int64_t>(group_of[j] + 1));
        else if (f == "percent_rank") out[part[j]] = Value::Real(m > 1 ? static_cast<double>(g.first) / static_cast<double>(m - 1) : 0.0);
        else out[part[j]] = Value::Real(static_cast<double>(g.second) / static_cast<double>(m));
      }
      return;
    }
    if (f == "ntile") {
      for (size_t j = 0; j < m; ++j) {
        int64_t buckets =
            positive_count(call.args[0], part[j], true, "argument of ntile must be a positive integer");
        int64_t mm = static_cast<int64_t>(m), jj = static_cast<int64_t>(j);
        int64_t size = mm / buckets, extra = mm % buckets;
        int64_t big = extra * (size + 1);
        int64_t tile = jj < big ? jj / (size + 1) : extra + (size ? (jj - big) / size : 0);
        out[part[j]] = Value::Integer(tile + 1);
      }
      return;
    }
    if (f == "lag" || f == "lead") {
      for (size_t j = 0; j < m; ++j) {
        std::optional<int64_t> k = step_offset(call, part[j]);
        if (!k) {
          out[part[j]] = call.args.size() > 2 ? eval(call.args[2], part[j]) : Value();
          continue;
        }
        int64_t t = sat_add(static_cast<int64_t>(j), f == "lag" ? -*k : *k);
        if (t >= 0 && t < static_cast<int64_t>(m)) out[part[j]] = eval(call.args[0], part[t]);
        else out[part[j]] = call.args.size() > 2 ? eval(call.args[2], part[j]) : Value();
      }
      return;
    }
    // Frame-based: first_value, last_value, nth_value and aggregates (arguments in args_).
    bool incremental = call.aggregate && !call.distinct && static_cast<Excl>(call.exclude) == Excl::kNone;
    // A frame that runs to the partition's end, from a start that never moves back (CURRENT
    // ROW, n PRECEDING, n FOLLOWING): walked from the last row up, each frame is the next
    // one plus the rows before it — one pass instead of one per row. Only for aggregates
    // whose answer does not depend on the order rows reach them (reals would round apart).
    if (incremental && static_cast<FB>(call.end_kind) == FB::kUnboundedFollowing &&
        static_cast<FB>(call.start_kind) != FB::kUnboundedPreceding && (f == "count" || f == "min" || f == "max")) {
      std::vector<size_t> los(m);
      bool suffixes = true;  // every frame ends at the partition's end, its start never moving back
      for (size_t j = 0; j < m && suffixes; ++j) {
        size_t hi;
        frame_of(call, part, j, group_of, groups, keys, np, &los[j], &hi);
        // (A RANGE offset over a NULL or non-numeric key frames its peer group instead.)
        suffixes = hi == m && (j == 0 || los[j] >= los[j - 1]);
      }
      if (suffixes) {
        auto running = call.aggregate->make_state();
        if (!call.args.empty()) running->set_collation(ordering_collation(call.args[0]->collation, call.args[0]->type));
        size_t running_lo = m;
        for (size_t j = m; j-- > 0;) {
          poll_interrupt(outer_.ctx);
          while (running_lo > los[j]) {
            --running_lo;
            running->step(args_[part[running_lo]]);
          }
          out[part[j]] = running->final();
        }
        return;
      }
    }
    std::unique_ptr<AggregateState> running;
    size_t running_hi = 0;
    // A row whose frame is the previous row's (a RANGE or GROUPS frame's peers, a ROWS
    // frame clamped at both ends) takes its answer: nothing excludes by row and the
    // arguments were evaluated per row already (nth_value's N is evaluated per row, so it
    // is recomputed). Without this a RANGE frame over n peers cost n² steps.
    const bool reusable = static_cast<Excl>(call.exclude) == Excl::kNone && f != "nth_value";
    size_t prev_lo = 0, prev_hi = 0;
    for (size_t j = 0; j < m; ++j) {
      poll_interrupt(outer_.ctx);
      size_t lo, hi;
      frame_of(call, part, j, group_of, groups, keys, np, &lo, &hi);
      if (reusable && j > 0 && lo == prev_lo && hi == prev_hi) {
        out[part[j]] = out[part[j - 1]];
        continue;
      }
      prev_lo = lo;
      prev_hi = hi;
      if (f == "first_value" || f == "last_value" || f == "nth_value") {
        std::vector<size_t> members;
        for (size_t p = lo; p < hi; ++p)
          if (!excluded(call, j, p, group_of)) members.push_back(p);
        size_t want;
        if (f == "first_value") want = 0;
        else if (f == "last_value") want = members.empty() ? 0 : members.size() - 1;
        else {
          int64_t nth = positive_count(call.args[1], part[j], false,
                                       "second argument to nth_value must be a positive integer");
          want = static_cast<size_t>(nth - 1);
        }
        out[part[j]] = want < members.size() ? args_[part[members[want]]][0] : Value();
        continue;
      }
      if (!call.aggregate) throw Error(StatusCode::kError, "unknown window function " + f);
      auto step = [&](AggregateState& st, size_t p) {
        poll_interrupt(outer_.ctx);
        st.step(args_[part[p]]);
      };
      if (incremental && lo == 0) {
        if (!running || hi < running_hi) {
          running = call.aggregate->make_state();
          if (!call.args.empty()) running->set_collation(ordering_collation(call.args[0]->collation, call.args[0]->type));
          running_hi = 0;
        }
        while (running_hi < hi) step(*running, running_hi++);
        out[part[j]] = running->final();
        continue;
      }
      auto st = call.aggregate->make_state();
      if (!call.args.empty()) st->set_collation(ordering_collation(call.args[0]->collation, call.args[0]->type));
      std::vector<std::vector<Value>> seen;
      for (size_t p = lo; p < hi; ++p) {
        if (excluded(call, j, p, group_of)) continue;
        if (call.distinct) {
          const Value& v = args_[part[p]][0];
          if (v.is_null()) continue;
          bool dup = false;
          const Collation* coll = ordering_collation(call.args[0]->collation, call.args[0]->type);
          for (auto& s : seen) if (compare_values(s[0], v, coll) == 0) { dup = true; break; }
          if (dup) continue;
          seen.push_back({v});
        }
        step(*st, p);
      }
      out[part[j]] = st->final();
    }
  }

  const WindowNode& node_;
  std::unique_ptr<Operator> input_;
  EvalEnv outer_;
  std::vector<Row> rows_;
  MemoryCharge memory_;  // rows_ and results_
  std::vector<std::vector<Value>> results_;
  std::vector<std::vector<Value>> args_;  // per input row: the current frame-based call's arguments
  MemoryCharge args_memory_;              // args_
  std::vector<size_t> order_;
  size_t pos_ = 0;
  NumericRun numeric_run_;  // of the partition compute_partition is working on
};

}  // namespace

std::unique_ptr<Operator> WindowNode::instantiate() const { return std::make_unique<WindowOp>(*this); }

}  // namespace quereus
