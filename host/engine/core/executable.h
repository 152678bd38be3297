// Executable: one planned statement, ready to run. Built by core/statement_planner.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/exec_context.h"
#include "types/value.h"

namespace quereus {

class Executable {
 public:
  virtual ~Executable() = default;
  const std::vector<std::string>& names() const { return names_; }
  // The plan-time type of each output column when known (empty: every column is ANY).
  const std::vector<qrs_logical_type>& types() const { return types_; }
  // Transaction-control statements manage the transaction themselves.
  virtual bool controls_transaction() const { return false; }
  // Runs the statement's effects (DML writes, DDL) and prepares rows.
  virtual void start(ExecContext& ctx) = 0;
  virtual bool next(Row& out) = 0;

 protected:
  std::vector<std::string> names_;
  std::vector<qrs_logical_type> types_;
};

class DatabaseImpl;
namespace ast { struct Statement; }

// Plans one statement for execution.
std::unique_ptr<Executable> plan_statement(DatabaseImpl& db, const ast::Statement& stmt);

}  // namespace quereus
