// Executable: one planned statement, ready to run. Built by main/statement_planner.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "eval/exec_context.h"
#include "types/value.h"

namespace quereus {

class Executable {
 public:
  virtual ~Executable() = default;
  const std::vector<std::string>& names() const { return names_; }
  // Transaction-control statements manage the transaction themselves.
  virtual bool controls_transaction() const { return false; }
  // Runs the statement's effects (DML writes, DDL) and prepares rows.
  virtual void start(ExecContext& ctx) = 0;
  virtual bool next(Row& out) = 0;

 protected:
  std::vector<std::string> names_;
};

class DatabaseImpl;
struct ParamTypes;
struct PlanSeed;
namespace ast { struct Statement; }

// Plans one statement for execution; `param_types` are its declared parameter types
// (null: none declared).
std::unique_ptr<Executable> plan_statement(DatabaseImpl& db, const ast::Statement& stmt,
                                           const ParamTypes* param_types = nullptr);
// Plans an INSERT / UPDATE / DELETE used as a relation (write/dml_relation.h). Its own
// WITH clause is not a statement's leading clause, so it may not hold DML members.
// `path` is the enclosing statement's WITH SCHEMA path (empty: none), used when the
// nested statement names none of its own.
// `seed` carries the WITH members it sees (a leading WITH clause's DML member).
std::unique_ptr<Executable> plan_nested_dml(DatabaseImpl& db, const ast::Statement& stmt,
                                            const std::vector<std::string>& path, const PlanSeed* seed = nullptr);

}  // namespace quereus
