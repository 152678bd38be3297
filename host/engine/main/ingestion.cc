// External row-change ingestion (database.h ExternalRowChange, docs/mv-ingestion.md): the
// seam by which a host that wrote rows to module storage itself has the engine run what
// follows a write — materialized-view maintenance, change capture and, on request, the
// parent side of the foreign keys — as one statement.
#include <map>

#include "catalog/ddl_names.h"
#include "eval/exec_context.h"
#include "main/database_impl.h"
#include "main/materialized_views.h"
#include "transaction/assertions.h"
#include "write/dml_writer.h"

namespace quereus {

namespace {

// Resolves and shape-checks every change before anything runs.
std::vector<std::shared_ptr<TableEntry>> resolve_changes(DatabaseImpl& db, const std::vector<ExternalRowChange>& changes) {
  std::vector<std::shared_ptr<TableEntry>> out;
  out.reserve(changes.size());
  for (size_t i = 0; i < changes.size(); ++i) {
    const ExternalRowChange& c = changes[i];
    const std::string where = "external row change " + std::to_string(i + 1) + ": ";
    std::shared_ptr<TableEntry> t;
    for (const std::string& in : ddl_lookup_schemas(c.schema))
      if ((t = db.catalog().find(in, c.table))) break;
    if (!t)
      throw Error(StatusCode::kNotFound,
                  where + "no such table: " + (c.schema.empty() ? "" : c.schema + ".") + c.table);
    if (t->schema.derivation)
      throw Error(StatusCode::kMisuse, where + "'" + t->qualified_name() +
                                           "' is a maintained table: its rows are derived; report the changes of "
                                           "its sources instead");
    const size_t n = t->schema.columns.size();
    const bool needs_old = c.op != RowOp::kInsert, needs_new = c.op != RowOp::kDelete;
    if ((needs_old && c.old_row.size() != n) || (needs_new && c.new_row.size() != n))
      throw Error(StatusCode::kMisuse, where + "'" + t->qualified_name() + "' has " + std::to_string(n) +
                                           " columns; an " +
                                           (c.op == RowOp::kInsert ? "insert needs the new row"
                                            : c.op == RowOp::kDelete ? "delete needs the old row"
                                                                     : "update needs the old and the new row") +
                                           " with one value per column");
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

Status DatabaseImpl::ingest_external_row_changes(const std::vector<ExternalRowChange>& changes,
                                                 const IngestOptions& options, IngestResult* result) {
  if (result) result->assertion_violations.clear();
  try {
    std::vector<std::shared_ptr<TableEntry>> tables = resolve_changes(*this, changes);
    if (changes.empty()) return Status::Ok();
    statement_begin();
    try {
      ExecContext ctx;
      open_execution(ctx);
      std::map<const TableEntry*, std::unique_ptr<DmlWriter>> writers;
      std::vector<std::shared_ptr<const TableWritePlan>> plans;
      for (size_t i = 0; i < changes.size(); ++i) {
        const ExternalRowChange& c = changes[i];
        TableEntry& t = *tables[i];
        const Row* old_row = c.op == RowOp::kInsert ? nullptr : &c.old_row;
        const Row* new_row = c.op == RowOp::kDelete ? nullptr : &c.new_row;
        // Captured rows take part in the commit's global assertions (the seam's
        // delegated invariant maintenance): the table counts as written.
        if (options.capture_changes) txn_.note_written(t);
        if (options.capture_changes && txn_.changes().capturing()) {
          switch (c.op) {
            case RowOp::kInsert: txn_.changes().record_insert(t.schema, c.new_row); break;
            case RowOp::kUpdate: txn_.changes().record_update(t.schema, c.old_row, c.new_row); break;
            case RowOp::kDelete: txn_.changes().record_delete(t.schema, c.old_row); break;
          }
        }
        if (options.maintain_materialized_views) observe(t, c.op, old_row, new_row);
        if (options.apply_foreign_key_actions && old_row && foreign_keys_enforced()) {
          auto& writer = writers[&t];
          if (!writer) {
            auto plan = bind_table_write_plan(*this, tables[i]);
            plans.push_back(plan);
            writer = std::make_unique<DmlWriter>(*this, *plan, ctx);
          }
          writer->apply_parent_side(*old_row, new_row);
        }
      }
      // Report mode, in the batch's own transaction: its commit collects the violated
      // assertions instead of failing (the sink is cleared whatever happens).
      std::vector<AssertionViolation> violations;
      const bool report = options.assertion_failure_mode == IngestOptions::AssertionFailureMode::kReport &&
                          options.capture_changes && !txn_.in_explicit();
      struct SinkGuard {
        TransactionCoordinator& txn;
        ~SinkGuard() { txn.set_assertion_sink(nullptr); }
      } guard{txn_};
      if (report) txn_.set_assertion_sink(&violations);
      statement_commit();
      if (result)
        for (AssertionViolation& v : violations) {
          IngestResult::Violation out{std::move(v.assertion), {}};
          for (auto& sample : v.samples) out.samples.emplace_back(sample.begin(), sample.end());
          result->assertion_violations.push_back(std::move(out));
        }
    } catch (...) {
      statement_rollback();
      throw;
    }
  } catch (const std::exception& e) {
    return status_of(e);
  }
  return Status::Ok();
}

}  // namespace quereus
