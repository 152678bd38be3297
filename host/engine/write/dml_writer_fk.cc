// Runtime: FOREIGN KEY enforcement inside the write path (see dml_writer.h and
// docs/foreign-keys.md). The child side checks a written row's parent before the module
// write; the parent side runs the referencing keys' actions after a row is removed or its
// referenced key changes. Cascaded writes go through DmlWriters of the child tables, so
// their own constraints and further cascades apply.
#include <map>

#include "transaction/write_context.h"
#include "planner/scalar_expr.h"
#include "write/dml_writer.h"
#include "write/foreign_keys.h"
#include "write/indexes.h"
#include "types/compare.h"

namespace quereus {

namespace {

constexpr int kMaxCascadeDepth = 1000;

bool same_values(const Row& a, const Row& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].is_null() != b[i].is_null()) return false;
    if (!a[i].is_null() && compare_values(a[i], b[i], nullptr) != 0) return false;
  }
  return true;
}

Row pick(const Row& row, const std::vector<int>& cols) {
  Row out;
  out.reserve(cols.size());
  for (int c : cols) out.push_back(row[c]);
  return out;
}

std::string restrict_message(const FkLink& link, bool is_delete) {
  return std::string("FOREIGN KEY constraint failed: ") + (is_delete ? "DELETE" : "UPDATE") + " on '" +
         link.parent->schema.name + "' violates RESTRICT from '" + link.child->schema.name + "'";
}

bool tables_alive(const FkLink& link) { return link.child->table && (!link.parent || link.parent->table); }

}  // namespace

struct FkWriteState {
  bool outbound_ready = false, inbound_ready = false;
  std::vector<std::shared_ptr<FkLink>> outbound;  // this table's keys
  std::vector<std::shared_ptr<FkLink>> inbound;   // the keys referencing this table
  // Every inbound key of the operation is a RESTRICT / NO ACTION from another table: a
  // violation reports the "violates RESTRICT" form; otherwise the key's CHECK form.
  bool plain_restrict_delete = true, plain_restrict_update = true;
  struct Child {
    std::unique_ptr<DmlWriter> writer;  // null for this writer's own table
  };
  std::map<const TableEntry*, std::unique_ptr<Child>> children;
  bool self_cascaded = false;  // an action rewrote rows of this writer's own table
  int active = 0;       // nested parent-action calls
};


FkWriteState& DmlWriter::fk_state() {
  if (!fk_) fk_ = std::make_shared<FkWriteState>();
  return *fk_;
}

DmlWriter& DmlWriter::child_writer(const std::shared_ptr<TableEntry>& table) {
  FkWriteState& st = fk_state();
  auto& slot = st.children[table.get()];
  if (!slot) {
    slot = std::make_unique<FkWriteState::Child>();
    if (table.get() != table_.get()) {
      if (depth_ >= 64) throw Error(StatusCode::kConstraint, "FOREIGN KEY cascade nests too deeply (a cycle?)");
      // Private constructor: std::make_unique cannot reach it.
      slot->writer.reset(new DmlWriter(db_, table, cascade_bindings(*table), cascades_, ctx_, depth_ + 1));
    }
  }
  return slot->writer ? *slot->writer : *this;
}

const CascadeTarget& DmlWriter::cascade_target(const TableEntry& table) const {
  if (cascades_)
    if (auto it = cascades_->find(&table); it != cascades_->end()) {
      if (it->second.error) std::rethrow_exception(it->second.error);
      return it->second;
    }
  throw Error(StatusCode::kInternal, "a FOREIGN KEY action reached table '" + table.qualified_name() +
                                         "', which the statement's plan did not bind");
}

const TableWriteBindings& DmlWriter::cascade_bindings(const TableEntry& table) const {
  return cascade_target(table).bindings;
}

bool DmlWriter::check_foreign_keys(const Row& new_row, const Row* old_row, std::optional<ConflictAction> action) {
  if (!db_.foreign_keys_enforced() || table_->schema.foreign_keys.empty()) return true;
  FkWriteState& st = fk_state();
  if (!st.outbound_ready) {
    st.outbound = outbound_links(db_, table_);
    st.outbound_ready = true;
  }
  for (const auto& link : st.outbound) {
    std::optional<Row> values = child_values(*link, new_row);
    if (!values) continue;  // MATCH SIMPLE: a NULL member references nothing
    if (old_row) {
      std::optional<Row> before = child_values(*link, *old_row);
      if (before && same_values(*before, *values)) continue;  // the reference did not move
    }
    if (link->fk.deferred) {
      // Checked at COMMIT, if some row still holds the reference then.
      db_.deferred().at_commit([link = link, v = *values, catalog = &db_.catalog()](ExecContext&) mutable {
        // A parent table missing at the write may have been created before the COMMIT.
        if (!link->parent) link = std::make_shared<FkLink>(resolve_fk(*catalog, link->child, link->fk));
        if (!tables_alive(*link) || referencing_rows(*link, v, 1).empty()) return;
        if (!parent_exists(*link, v))
          throw Error(StatusCode::kConstraint, "FOREIGN KEY constraint failed: " + link->fk.name +
                                                   " (deferred, checked at COMMIT: no matching row in '" +
                                                   link->parent_name() + "')");
      });
      continue;
    }
    if (link->self_referencing()) {
      // A row may reference itself (a tree's root pointing at its own key).
      bool own = true;
      for (size_t i = 0; i < values->size() && own; ++i) {
        const Value& k = new_row[link->parent_cols[i]];
        own = !k.is_null() && compare_values(k, (*values)[i], link->collations[i]) == 0;
      }
      if (own) continue;
    }
    if (parent_exists(*link, *values)) continue;
    ConflictAction a = action.value_or(ConflictAction::kAbort);
    if (a == ConflictAction::kIgnore) return false;
    if (a == ConflictAction::kReplace) a = ConflictAction::kAbort;  // REPLACE does not relax a reference
    fail(a, fk_check_message(*link));
  }
  return true;
}

void DmlWriter::apply_parent_actions(const Row& old_row, const Row* new_row, bool evicted) {
  if (!db_.foreign_keys_enforced()) return;
  FkWriteState& st = fk_state();
  if (!st.inbound_ready) {
    st.inbound = inbound_fks(db_.catalog(), table_);
    for (const auto& link : st.inbound) {
      bool self = link->self_referencing();
      if (self || writes_referencing_rows(link->fk.on_delete)) st.plain_restrict_delete = false;
      if (self || writes_referencing_rows(link->fk.on_update)) st.plain_restrict_update = false;
    }
    st.inbound_ready = true;
  }
  if (st.inbound.empty()) return;
  if (st.active >= kMaxCascadeDepth) throw Error(StatusCode::kConstraint, "FOREIGN KEY cascade nests too deeply (a cycle?)");
  struct Active {
    int& n;
    explicit Active(int& c) : n(c) { ++n; }
    ~Active() { --n; }
  } active(st.active);

  const bool is_delete = new_row == nullptr;
  for (const auto& link : st.inbound) {
    const ReferentialAction act = is_delete ? link->fk.on_delete : link->fk.on_update;
    std::optional<Row> old_key = parent_values(*link, old_row);
    if (!old_key) continue;  // a NULL-containing key is referenced by nothing
    if (!is_delete && same_values(pick(old_row, link->parent_cols), pick(*new_row, link->parent_cols))) continue;
    const bool plain = evicted || (is_delete ? st.plain_restrict_delete : st.plain_restrict_update);
    if (act == ReferentialAction::kRestrict) {
      if (!referencing_rows(*link, *old_key, 1).empty())
        throw Error(StatusCode::kConstraint, plain ? restrict_message(*link, is_delete) : fk_check_message(*link));
      continue;
    }
    if (act == ReferentialAction::kNoAction) {
      // Checked when the statement ends (at COMMIT for a deferred key): by then the key
      // may exist again, or its references may be gone.
      auto check = [link, key = *old_key, is_delete, plain](ExecContext&) {
        if (!tables_alive(*link) || parent_exists(*link, key) || referencing_rows(*link, key, 1).empty()) return;
        throw Error(StatusCode::kConstraint, plain ? restrict_message(*link, is_delete) : fk_check_message(*link));
      };
      if (link->fk.deferred) db_.deferred().at_commit(check); else db_.deferred().at_statement_end(check);
      continue;
    }
    std::vector<Row> rows = referencing_rows(*link, *old_key);
    if (rows.empty()) continue;
    // The determinism gate, on the bodies this action evaluates (CascadeTarget).
    const CascadeTarget& target = cascade_target(*link->child);
    const bool removes = is_delete && act == ReferentialAction::kCascade;
    if (removes && target.remove_refusal) std::rethrow_exception(target.remove_refusal);
    if (!removes && target.update_refusal) std::rethrow_exception(target.update_refusal);
    if (act == ReferentialAction::kSetDefault)
      for (int c : link->fk.columns)
        if (c < static_cast<int>(target.default_refusals.size()) && target.default_refusals[c])
          std::rethrow_exception(target.default_refusals[c]);
    DmlWriter& writer = child_writer(link->child);
    if (&writer == this) st.self_cascaded = true;
    const auto& defaults = cascade_bindings(*link->child).defaults;
    ExecContext& ctx = ctx_;
    for (const Row& row : rows) {
      if (is_delete && act == ReferentialAction::kCascade) {
        writer.remove(row);
        continue;
      }
      Row changed = row;
      for (size_t i = 0; i < link->fk.columns.size(); ++i) {
        int c = link->fk.columns[i];
        if (act == ReferentialAction::kCascade) {
          changed[c] = (*new_row)[link->parent_cols[i]];
        } else if (act == ReferentialAction::kSetNull) {
          changed[c] = Value();
        } else {  // setDefault
          EvalEnv env{nullptr, nullptr, &ctx};
          changed[c] = c < static_cast<int>(defaults.size()) && defaults[c] ? defaults[c]->eval(env) : Value();
        }
      }
      writer.update(row, std::move(changed), std::nullopt);
    }
  }
}

int DmlWriter::refresh_after_self_cascade(const Row& old_row, Row& new_row, Row& current) {
  if (!fk_ || !fk_->self_cascaded) return 0;
  std::optional<Row> stored = fetch_by_key(*table_, key_of(old_row));
  if (!stored) return -1;
  if (same_values(*stored, old_row)) return 0;
  // Columns the statement assigned keep its values; the others follow the cascade.
  for (size_t i = 0; i < new_row.size() && i < old_row.size(); ++i)
    if (same_values({new_row[i]}, {old_row[i]})) new_row[i] = (*stored)[i];
  current = std::move(*stored);
  return 1;
}

}  // namespace quereus
