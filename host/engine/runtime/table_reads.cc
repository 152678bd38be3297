// Reading a table through its module: equality probes, full scans, key lookups (see
// table_reads.h).
#include "runtime/table_reads.h"

#include "types/compare.h"

namespace quereus {

PlanResult plan_eq(TableEntry& table, size_t count, const std::vector<int>* columns) {
  PlanRequest req;
  for (size_t i = 0; i < count; ++i) {
    FilterSpec f;
    f.column = columns ? (*columns)[i] : static_cast<int>(i);
    f.op = QRS_OP_EQ;
    req.filters.push_back(std::move(f));
  }
  return table.table->best_access_plan(req);
}

std::vector<Row> probe_eq(TableEntry& table, const PlanResult& plan, const std::vector<int>* columns, const Row& key,
                       ScanArgs& args) {
  size_t n = key.size();
  if (args.filters.size() != n) {
    args.filters.assign(n, FilterSpec{});
    for (size_t i = 0; i < n; ++i) {
      args.filters[i].column = columns ? (*columns)[i] : static_cast<int>(i);
      args.filters[i].op = QRS_OP_EQ;
      args.filters[i].has_value = true;
    }
  }
  for (size_t i = 0; i < n; ++i) args.filters[i].value = key[i];
  args.plan_id = plan.plan_id;
  args.handled = plan.handled;
  args.provides_ordering = plan.provides_ordering;
  bool all_handled = true;
  for (bool h : plan.handled) all_handled = all_handled && h;
  auto cursor = table.table->open_cursor(args);
  std::vector<Row> batch, out;
  while (size_t got = cursor->next_batch(batch)) {
    for (size_t r = 0; r < got; ++r) {
      bool match = true;
      if (!all_handled) {
        for (size_t i = 0; i < n && match; ++i) {
          int c = columns ? (*columns)[i] : static_cast<int>(i);
          auto cmp = sql_compare(batch[r][c], key[i], table.schema.columns[c].collation.get());
          match = cmp && *cmp == 0;
        }
      }
      if (match) out.push_back(batch[r]);
    }
  }
  return out;
}

std::vector<Row> scan_rows(TableEntry& table, bool committed) {
  PlanResult plan = table.table->best_access_plan(PlanRequest{});
  ScanArgs args;
  args.plan_id = plan.plan_id;
  args.provides_ordering = plan.provides_ordering;
  args.read_committed = committed;
  auto cursor = table.table->open_cursor(args);
  std::vector<Row> batch, out;
  while (size_t n = cursor->next_batch(batch))
    for (size_t i = 0; i < n; ++i) out.push_back(batch[i]);
  return out;
}

int64_t count_rows(TableEntry& table, int64_t limit) {
  PlanResult plan = table.table->best_access_plan(PlanRequest{});
  ScanArgs args;
  args.plan_id = plan.plan_id;
  args.provides_ordering = plan.provides_ordering;
  auto cursor = table.table->open_cursor(args);
  std::vector<Row> batch;
  int64_t n = 0;
  while (n <= limit)
    if (size_t k = cursor->next_batch(batch)) n += static_cast<int64_t>(k);
    else break;
  return n;
}

std::optional<Row> fetch_by_key(TableEntry& table, const Row& pk) {
  if (!pk.empty() && pk.size() == table.schema.primary_key.size()) {
    Row out;
    switch (table.table->lookup(pk, out)) {
      case LookupStatus::kFound: return out;
      case LookupStatus::kNotFound: return std::nullopt;
      case LookupStatus::kUnsupported: break;  // read through a cursor
    }
  }
  std::vector<int> cols;
  for (const KeyColumn& k : table.schema.primary_key) cols.push_back(k.column);
  PlanResult plan = plan_eq(table, cols.size(), &cols);
  ScanArgs args;
  std::vector<Row> rows = probe_eq(table, plan, &cols, pk, args);
  if (rows.empty()) return std::nullopt;
  return std::move(rows.front());
}

std::vector<Row> probe_rows(TableEntry& table, const std::vector<int>& columns, const Row& key,
                            std::optional<PlanResult>& plan) {
  if (!plan) plan = plan_eq(table, columns.size(), &columns);
  ScanArgs args;
  return probe_eq(table, *plan, &columns, key, args);
}

}  // namespace quereus
