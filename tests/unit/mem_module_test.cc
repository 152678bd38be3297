// tests/unit/mem_module_test.cc — the mem storage module driven through the raw C ABI.
//
// Loads build/lib/quereus/mem.so with dlopen, runs its entry point against a fake host
// that captures the registered modules, and exercises tables, cursors and connections
// exactly as the host does: through the qrs_* vtables only.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "quereus/abi.h"

#ifndef QUEREUS_PLUGIN_DIR
#error "QUEREUS_PLUGIN_DIR must name the directory holding mem.so"
#endif

namespace {

// ---- fake host ----------------------------------------------------------------------------

struct ErrorBox {
  qrs_error err{sizeof(qrs_error), this, &ErrorBox::set};
  std::string message;
  static void set(qrs_error* self, const char* m, size_t n) { static_cast<ErrorBox*>(self->ctx)->message.assign(m, n); }
};

struct Registry {
  std::map<std::string, qrs_module> modules;
};

qrs_status register_module(void* ctx, qrs_string name, qrs_module module, qrs_error*) {
  static_cast<Registry*>(ctx)->modules[std::string(name.data, name.len)] = module;
  return QRS_OK;
}
qrs_status refuse_scalar(void*, const qrs_scalar_function_def*, qrs_error*) { return QRS_UNSUPPORTED; }
qrs_status refuse_aggregate(void*, const qrs_aggregate_function_def*, qrs_error*) { return QRS_UNSUPPORTED; }
qrs_status refuse_collation(void*, const qrs_collation_def*, qrs_error*) { return QRS_UNSUPPORTED; }

// ---- values and rows ----------------------------------------------------------------------

qrs_value I(int64_t v) {
  qrs_value x{};
  x.type = QRS_TYPE_INTEGER;
  x.u.integer = v;
  return x;
}
qrs_value T(const char* s) {  // s must outlive the call (literals do)
  qrs_value x{};
  x.type = QRS_TYPE_TEXT;
  x.u.str = qrs_string{s, std::strlen(s)};
  return x;
}
qrs_value N() { return qrs_value{}; }

std::string cell_text(const qrs_value& v) {
  switch (v.type) {
    case QRS_TYPE_NULL: return "NULL";
    case QRS_TYPE_INTEGER: return std::to_string(v.u.integer);
    case QRS_TYPE_TEXT: return std::string(v.u.str.data, v.u.str.len);
    default: return "?";
  }
}
std::string row_text(const qrs_value* cells, uint32_t n) {
  std::string s;
  for (uint32_t i = 0; i < n; ++i) s += (i ? "|" : "") + cell_text(cells[i]);
  return s;
}
std::string row_text(const qrs_row& r) { return r.cells ? row_text(r.cells, r.count) : "<none>"; }

int nocase_compare(void*, const char* a, size_t an, const char* b, size_t bn) {
  for (size_t i = 0; i < an && i < bn; ++i) {
    int x = std::tolower(static_cast<unsigned char>(a[i])), y = std::tolower(static_cast<unsigned char>(b[i]));
    if (x != y) return x < y ? -1 : 1;
  }
  return an == bn ? 0 : (an < bn ? -1 : 1);
}

// ---- schema builder -------------------------------------------------------------------------

struct Schema {
  std::string table;
  std::vector<std::string> names;
  std::vector<qrs_column_def> cols;
  std::vector<qrs_key_column> key;
  qrs_table_schema s{};

  // columns: names; key: (column, desc) pairs; not_null applies to every column.
  Schema(std::string t, std::vector<std::string> column_names, std::vector<std::pair<uint32_t, bool>> pk,
         bool not_null = true, qrs_collation_compare_fn text_compare = nullptr)
      : table(std::move(t)), names(std::move(column_names)) {
    qrs_collation_ref coll{sizeof(qrs_collation_ref), {text_compare ? "NOCASE" : "BINARY", text_compare ? 6u : 6u},
                           nullptr, text_compare};
    for (const std::string& n : names) {
      qrs_column_def c{};
      c.struct_size = sizeof c;
      c.name = {n.data(), n.size()};
      c.not_null = not_null;
      c.collation = coll;
      cols.push_back(c);
    }
    for (auto [col, desc] : pk) {
      qrs_key_column k{};
      k.struct_size = sizeof k;
      k.column_index = col;
      k.desc = desc;
      k.collation = coll;
      cols[col].primary_key = 1;
      key.push_back(k);
    }
    s.struct_size = sizeof s;
    s.schema_name = {"main", 4};
    s.table_name = {table.data(), table.size()};
    s.columns = cols.data();
    s.column_count = static_cast<uint32_t>(cols.size());
    s.primary_key = key.data();
    s.key_count = static_cast<uint32_t>(key.size());
  }
};

// ---- scans ----------------------------------------------------------------------------------

struct Filter {
  uint32_t column;
  qrs_filter_op op;
  qrs_value value{};
  std::vector<qrs_value> in{};
};

struct ScanOut {
  qrs_status status = QRS_OK;
  std::vector<std::string> rows;
  std::vector<uint8_t> handled;
  bool ordered = false;
  std::string explain;
  size_t batches = 0;
  size_t max_batch = 0;
};

ScanOut scan(const qrs_table& t, const std::vector<Filter>& fs = {}, const std::vector<qrs_order_spec>& order = {},
             int64_t limit = -1) {
  std::vector<qrs_filter> filters;
  for (const Filter& f : fs) {
    qrs_filter x{};
    x.struct_size = sizeof x;
    x.column_index = f.column;
    x.op = f.op;
    x.usable = 1;
    x.has_value = 1;
    x.value = f.value;
    x.in_values = f.in.data();
    x.in_count = static_cast<uint32_t>(f.in.size());
    filters.push_back(x);
  }
  ScanOut out;
  ErrorBox e;
  out.handled.assign(filters.size(), 0);
  qrs_plan_request req{sizeof req, filters.data(), static_cast<uint32_t>(filters.size()), order.data(),
                       static_cast<uint32_t>(order.size()), limit, 0, -1};
  qrs_plan_result plan{};
  plan.struct_size = sizeof plan;
  plan.handled_filters = out.handled.data();
  out.status = t.vt->best_access_plan(t.self, &req, &plan, &e.err);
  if (out.status != QRS_OK) return out;
  out.ordered = plan.provides_ordering;
  out.explain = plan.explain;
  qrs_scan_args args{};
  args.struct_size = sizeof args;
  args.plan_id = plan.plan_id;
  args.filters = filters.data();
  args.filter_count = static_cast<uint32_t>(filters.size());
  args.handled = out.handled.data();
  args.provides_ordering = plan.provides_ordering;
  args.ordering = order.data();
  args.ordering_count = static_cast<uint32_t>(order.size());
  args.limit = limit;
  qrs_cursor cur{};
  out.status = t.vt->open_cursor(t.self, &args, &cur, &e.err);
  if (out.status != QRS_OK) return out;
  for (;;) {
    qrs_row_batch b{};
    b.struct_size = sizeof b;
    qrs_status st = cur.vt->next_batch(cur.self, &b, &e.err);
    if (st == QRS_DONE) break;
    if (st != QRS_ROW) {
      out.status = st;
      break;
    }
    ++out.batches;
    out.max_batch = std::max<size_t>(out.max_batch, b.row_count);
    for (uint32_t r = 0; r < b.row_count; ++r) out.rows.push_back(row_text(b.cells + r * b.column_count, b.column_count));
  }
  cur.vt->close(cur.self);
  return out;
}

std::vector<std::string> rows(const qrs_table& t) { return scan(t).rows; }

// ---- writes ---------------------------------------------------------------------------------

struct WriteOut {
  qrs_status status;
  uint32_t outcome;
  uint32_t kind;
  std::string row, replaced, existing, message;
};

WriteOut write(const qrs_table& t, qrs_row_op op, std::vector<qrs_value> values, std::vector<qrs_value> old_key,
               qrs_conflict conflict = QRS_CONFLICT_ABORT) {
  qrs_update_args a{sizeof a, static_cast<uint32_t>(op), static_cast<uint32_t>(conflict),
                    {values.data(), static_cast<uint32_t>(values.size())},
                    {old_key.data(), static_cast<uint32_t>(old_key.size())}};
  qrs_update_result r{};
  r.struct_size = sizeof r;
  ErrorBox e;
  qrs_status st = t.vt->update(t.self, &a, &r, &e.err);
  return {st, r.outcome, r.constraint_kind, row_text(r.row), row_text(r.replaced_row), row_text(r.existing_row),
          e.message};
}
WriteOut insert(const qrs_table& t, std::vector<qrs_value> v, qrs_conflict c = QRS_CONFLICT_ABORT) {
  return write(t, QRS_ROW_INSERT, std::move(v), {}, c);
}
WriteOut update(const qrs_table& t, std::vector<qrs_value> key, std::vector<qrs_value> v,
                qrs_conflict c = QRS_CONFLICT_ABORT) {
  return write(t, QRS_ROW_UPDATE, std::move(v), std::move(key), c);
}
WriteOut remove(const qrs_table& t, std::vector<qrs_value> key) { return write(t, QRS_ROW_DELETE, {}, std::move(key)); }

// ---- fixture --------------------------------------------------------------------------------

class MemModuleTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    handle_ = dlopen(QUEREUS_PLUGIN_DIR "/mem.so", RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    auto entry = reinterpret_cast<qrs_plugin_entry_v1_fn>(dlsym(handle_, QRS_PLUGIN_ENTRY_V1));
    auto manifest = reinterpret_cast<qrs_plugin_manifest_v1_fn>(dlsym(handle_, QRS_PLUGIN_MANIFEST_V1));
    ASSERT_NE(entry, nullptr);
    ASSERT_NE(manifest, nullptr);
    manifest_ = manifest();
    registry_ = new Registry();
    qrs_host_api host{sizeof host, QRS_ABI_MAJOR, QRS_ABI_MINOR, {"test", 4}, nullptr, nullptr};
    qrs_registrar reg{sizeof reg,        registry_,       nullptr,          0,
                      &register_module, &refuse_scalar, &refuse_aggregate, &refuse_collation};
    ErrorBox e;
    ASSERT_EQ(entry(&host, &reg, &e.err), QRS_OK) << e.message;
  }
  static void TearDownTestSuite() {
    for (auto& [name, m] : registry_->modules) m.vt->release(m.self);
    delete registry_;
    registry_ = nullptr;  // the library stays loaded, as the host never unloads plugins
  }

  void TearDown() override {
    for (auto& t : tables_) t.vt->release(t.self);
    for (auto& n : created_) {
      ErrorBox e;
      module().vt->destroy(module().self, {"main", 4}, {n.data(), n.size()}, &e.err);
    }
  }

  static const qrs_module& module() { return registry_->modules.at("memory"); }

  qrs_table create(const Schema& s) {
    qrs_table t{};
    ErrorBox e;
    EXPECT_EQ(module().vt->create(module().self, &s.s, &t, &e.err), QRS_OK) << e.message;
    tables_.push_back(t);
    created_.push_back(s.table);
    return t;
  }
  qrs_table connect(const Schema& s) {
    qrs_table t{};
    ErrorBox e;
    EXPECT_EQ(module().vt->connect(module().self, &s.s, &t, &e.err), QRS_OK) << e.message;
    tables_.push_back(t);
    return t;
  }

  static inline void* handle_ = nullptr;
  static inline Registry* registry_ = nullptr;
  static inline std::string manifest_;
  std::vector<qrs_table> tables_;
  std::vector<std::string> created_;
};

struct Conn {
  qrs_connection c{};
  explicit Conn(const qrs_table& t) {
    ErrorBox e;
    EXPECT_EQ(t.vt->open_connection(t.self, &c, &e.err), QRS_OK) << e.message;
  }
  ~Conn() { c.vt->close(c.self); }
  qrs_status begin() { return c.vt->begin(c.self, &e.err); }
  qrs_status commit() { return c.vt->commit(c.self, &e.err); }
  qrs_status rollback() { return c.vt->rollback(c.self, &e.err); }
  qrs_status savepoint(uint32_t d) { return c.vt->savepoint(c.self, d, &e.err); }
  qrs_status release(uint32_t d) { return c.vt->release_savepoint(c.self, d, &e.err); }
  qrs_status rollback_to(uint32_t d) { return c.vt->rollback_to_savepoint(c.self, d, &e.err); }
  ErrorBox e;
};

using Rows = std::vector<std::string>;

// (a INTEGER, b TEXT, c INTEGER) PRIMARY KEY (a, b DESC)
Schema composite(const char* name, bool not_null = true) { return Schema(name, {"a", "b", "c"}, {{0, false}, {1, true}}, not_null); }

void fill(const qrs_table& t) {
  ASSERT_EQ(insert(t, {I(1), T("x"), I(10)}).outcome, QRS_UPDATE_OK);
  ASSERT_EQ(insert(t, {I(1), T("y"), I(11)}).outcome, QRS_UPDATE_OK);
  ASSERT_EQ(insert(t, {I(2), T("a"), I(12)}).outcome, QRS_UPDATE_OK);
  ASSERT_EQ(insert(t, {I(0), T("z"), I(13)}).outcome, QRS_UPDATE_OK);
}

// ---- tests ----------------------------------------------------------------------------------

TEST_F(MemModuleTest, RegistersMemoryAndMemWithManifest) {
  EXPECT_EQ(registry_->modules.count("memory"), 1u);
  EXPECT_EQ(registry_->modules.count("mem"), 1u);
  EXPECT_NE(manifest_.find("\"name\": \"mem\""), std::string::npos) << manifest_;
  qrs_module_capabilities caps{};
  caps.struct_size = sizeof caps;
  module().vt->capabilities(module().self, &caps);
  EXPECT_EQ(caps.persistent, 0);
}

TEST_F(MemModuleTest, AliasesShareStorage) {
  Schema s = composite("shared");
  qrs_table t = create(s);
  fill(t);
  const qrs_module& alias = registry_->modules.at("mem");
  qrs_table u{};
  ErrorBox e;
  ASSERT_EQ(alias.vt->connect(alias.self, &s.s, &u, &e.err), QRS_OK);
  tables_.push_back(u);
  EXPECT_EQ(rows(u).size(), 4u);
}

TEST_F(MemModuleTest, CreateExistingFailsAndDestroyDrops) {
  Schema s = composite("dup");
  qrs_table t = create(s);
  fill(t);
  qrs_table u{};
  ErrorBox e;
  EXPECT_EQ(module().vt->create(module().self, &s.s, &u, &e.err), QRS_ERROR);
  EXPECT_NE(e.message.find("already exists"), std::string::npos);
  Schema upper = composite("DUP");  // names are case-insensitive
  EXPECT_EQ(module().vt->create(module().self, &upper.s, &u, &e.err), QRS_ERROR);
  EXPECT_EQ(module().vt->destroy(module().self, {"main", 4}, {"dup", 3}, &e.err), QRS_OK);
  qrs_table v = create(s);
  EXPECT_TRUE(rows(v).empty());
}

TEST_F(MemModuleTest, FullScanFollowsCompositeKeyWithDesc) {
  qrs_table t = create(composite("scan"));
  fill(t);
  EXPECT_EQ(rows(t), (Rows{"0|z|13", "1|y|11", "1|x|10", "2|a|12"}));
}

TEST_F(MemModuleTest, DuplicateKeyConflicts) {
  qrs_table t = create(composite("conflict"));
  fill(t);
  WriteOut w = insert(t, {I(1), T("x"), I(99)});
  EXPECT_EQ(w.status, QRS_OK);
  EXPECT_EQ(w.outcome, QRS_UPDATE_CONSTRAINT);
  EXPECT_EQ(w.kind, QRS_CONSTRAINT_UNIQUE);
  EXPECT_EQ(w.existing, "1|x|10");
  EXPECT_EQ(w.row, "<none>");

  w = insert(t, {I(1), T("x"), I(99)}, QRS_CONFLICT_IGNORE);
  EXPECT_EQ(w.outcome, QRS_UPDATE_NOOP);
  EXPECT_EQ(w.row, "<none>");

  w = insert(t, {I(1), T("x"), I(99)}, QRS_CONFLICT_REPLACE);
  EXPECT_EQ(w.outcome, QRS_UPDATE_OK);
  EXPECT_EQ(w.row, "<none>");  // stored exactly as given
  EXPECT_EQ(w.replaced, "1|x|10");
  EXPECT_EQ(rows(t), (Rows{"0|z|13", "1|y|11", "1|x|99", "2|a|12"}));
}

TEST_F(MemModuleTest, UpdateInPlaceMovesKeysAndCollides) {
  qrs_table t = create(composite("upd"));
  fill(t);
  WriteOut w = update(t, {I(1), T("x")}, {I(1), T("x"), I(100)});
  EXPECT_EQ(w.outcome, QRS_UPDATE_OK);
  EXPECT_EQ(w.row, "<none>");  // stored exactly as given
  EXPECT_EQ(w.replaced, "<none>");

  w = update(t, {I(1), T("x")}, {I(5), T("q"), I(100)});  // key moves
  EXPECT_EQ(w.outcome, QRS_UPDATE_OK);
  EXPECT_EQ(rows(t), (Rows{"0|z|13", "1|y|11", "2|a|12", "5|q|100"}));

  w = update(t, {I(5), T("q")}, {I(2), T("a"), I(0)});  // collides with (2, a)
  EXPECT_EQ(w.outcome, QRS_UPDATE_CONSTRAINT);
  EXPECT_EQ(w.kind, QRS_CONSTRAINT_UNIQUE);
  EXPECT_EQ(w.existing, "2|a|12");
  EXPECT_EQ(update(t, {I(5), T("q")}, {I(2), T("a"), I(0)}, QRS_CONFLICT_IGNORE).outcome, QRS_UPDATE_NOOP);
  EXPECT_EQ(rows(t), (Rows{"0|z|13", "1|y|11", "2|a|12", "5|q|100"}));

  w = update(t, {I(5), T("q")}, {I(2), T("a"), I(0)}, QRS_CONFLICT_REPLACE);
  EXPECT_EQ(w.outcome, QRS_UPDATE_OK);
  EXPECT_EQ(w.replaced, "2|a|12");
  EXPECT_EQ(rows(t), (Rows{"0|z|13", "1|y|11", "2|a|0"}));

  EXPECT_EQ(update(t, {I(9), T("none")}, {I(9), T("none"), I(0)}).outcome, QRS_UPDATE_NOOP);
}

TEST_F(MemModuleTest, DeleteReturnsRowAndMissingIsNoop) {
  qrs_table t = create(composite("del"));
  fill(t);
  WriteOut w = remove(t, {I(1), T("y")});
  EXPECT_EQ(w.outcome, QRS_UPDATE_OK);
  EXPECT_EQ(w.row, "1|y|11");
  EXPECT_EQ(remove(t, {I(1), T("y")}).outcome, QRS_UPDATE_NOOP);
  EXPECT_EQ(rows(t), (Rows{"0|z|13", "1|x|10", "2|a|12"}));
}

TEST_F(MemModuleTest, MalformedWritesAreErrorsNotCrashes) {
  qrs_table t = create(composite("bad"));
  WriteOut w = insert(t, {I(1)});
  EXPECT_EQ(w.status, QRS_MISUSE);
  EXPECT_NE(w.message.find("1 cells"), std::string::npos) << w.message;
  EXPECT_EQ(remove(t, {I(1)}).status, QRS_MISUSE);
}

TEST_F(MemModuleTest, PointSeek) {
  qrs_table t = create(composite("point"));
  fill(t);
  ScanOut s = scan(t, {{1, QRS_OP_EQ, T("y")}, {0, QRS_OP_EQ, I(1)}});
  EXPECT_EQ(s.handled, (std::vector<uint8_t>{1, 1}));
  EXPECT_NE(s.explain.find("point"), std::string::npos) << s.explain;
  EXPECT_EQ(s.rows, (Rows{"1|y|11"}));
  EXPECT_TRUE(scan(t, {{0, QRS_OP_EQ, I(1)}, {1, QRS_OP_EQ, T("nope")}}).rows.empty());
  EXPECT_TRUE(scan(t, {{0, QRS_OP_EQ, N()}, {1, QRS_OP_EQ, T("y")}}).rows.empty());  // = NULL matches nothing
}

TEST_F(MemModuleTest, RangeSeeks) {
  qrs_table t = create(composite("range"));
  fill(t);
  ScanOut s = scan(t, {{0, QRS_OP_EQ, I(1)}});  // key prefix
  EXPECT_EQ(s.handled, (std::vector<uint8_t>{1}));
  EXPECT_NE(s.explain.find("range"), std::string::npos) << s.explain;
  EXPECT_EQ(s.rows, (Rows{"1|y|11", "1|x|10"}));

  s = scan(t, {{0, QRS_OP_GT, I(0)}, {0, QRS_OP_LE, I(2)}, {2, QRS_OP_EQ, I(12)}});
  EXPECT_EQ(s.handled, (std::vector<uint8_t>{1, 1, 0}));  // c is not a key column: residual
  EXPECT_EQ(s.rows, (Rows{"1|y|11", "1|x|10", "2|a|12"}));

  EXPECT_EQ(scan(t, {{0, QRS_OP_GE, I(1)}, {0, QRS_OP_LT, I(2)}}).rows, (Rows{"1|y|11", "1|x|10"}));
  EXPECT_EQ(scan(t, {{0, QRS_OP_LT, I(1)}}).rows, (Rows{"0|z|13"}));
  EXPECT_TRUE(scan(t, {{0, QRS_OP_GT, I(5)}, {0, QRS_OP_LT, I(1)}}).rows.empty());

  // Range on the DESC member after an equality prefix.
  EXPECT_EQ(scan(t, {{0, QRS_OP_EQ, I(1)}, {1, QRS_OP_LT, T("y")}}).rows, (Rows{"1|x|10"}));
  EXPECT_EQ(scan(t, {{0, QRS_OP_EQ, I(1)}, {1, QRS_OP_GE, T("x")}}).rows, (Rows{"1|y|11", "1|x|10"}));
  EXPECT_EQ(scan(t, {{0, QRS_OP_EQ, I(1)}, {1, QRS_OP_GT, T("x")}, {1, QRS_OP_LE, T("y")}}).rows, (Rows{"1|y|11"}));
  s = scan(t, {{1, QRS_OP_EQ, T("x")}});  // not a key prefix: full scan, nothing claimed
  EXPECT_EQ(s.handled, (std::vector<uint8_t>{0}));
  EXPECT_NE(s.explain.find("full scan"), std::string::npos);
}

TEST_F(MemModuleTest, RangeSkipsNullKeyMembers) {
  Schema s("nulls", {"a", "b"}, {{0, false}, {1, true}}, /*not_null=*/false);
  qrs_table t = create(s);
  insert(t, {I(1), N()});
  insert(t, {I(1), T("m")});
  insert(t, {I(1), T("c")});
  EXPECT_EQ(rows(t), (Rows{"1|NULL", "1|m", "1|c"}));  // NULL first, also under DESC
  EXPECT_EQ(scan(t, {{0, QRS_OP_EQ, I(1)}, {1, QRS_OP_GT, T("a")}}).rows, (Rows{"1|m", "1|c"}));
  EXPECT_EQ(scan(t, {{0, QRS_OP_EQ, I(1)}, {1, QRS_OP_LT, T("z")}}).rows, (Rows{"1|m", "1|c"}));
}

TEST_F(MemModuleTest, InMultiSeekInKeyOrder) {
  qrs_table t = create(composite("multi"));
  fill(t);
  Filter in{0, QRS_OP_IN, {}, {I(2), I(0), I(2), N(), I(7)}};
  ScanOut s = scan(t, {in});
  EXPECT_EQ(s.handled, (std::vector<uint8_t>{1}));
  EXPECT_NE(s.explain.find("multi"), std::string::npos) << s.explain;
  EXPECT_EQ(s.rows, (Rows{"0|z|13", "2|a|12"}));

  Filter in2{0, QRS_OP_IN, {}, {I(1), I(2)}};
  s = scan(t, {in2, {1, QRS_OP_EQ, T("x")}});
  EXPECT_EQ(s.handled, (std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(s.rows, (Rows{"1|x|10"}));
  // Ordered by the leading member, forwards and backwards.
  s = scan(t, {in2}, {{0, 1, {}}, {1, 0, {}}});
  EXPECT_TRUE(s.ordered);
  EXPECT_EQ(s.rows, (Rows{"2|a|12", "1|x|10", "1|y|11"}));
}

TEST_F(MemModuleTest, OrderingClaims) {
  qrs_table t = create(composite("order"));
  fill(t);
  ScanOut s = scan(t, {}, {{0, 0, {}}, {1, 1, {}}});  // the key order itself
  EXPECT_TRUE(s.ordered);
  EXPECT_EQ(s.rows, (Rows{"0|z|13", "1|y|11", "1|x|10", "2|a|12"}));

  s = scan(t, {}, {{0, 1, {}}, {1, 0, {}}});  // its exact reverse
  EXPECT_TRUE(s.ordered);
  EXPECT_NE(s.explain.find("reverse"), std::string::npos) << s.explain;
  EXPECT_EQ(s.rows, (Rows{"2|a|12", "1|x|10", "1|y|11", "0|z|13"}));

  EXPECT_TRUE(scan(t, {}, {{0, 1, {}}}).ordered);                       // reverse prefix
  EXPECT_FALSE(scan(t, {}, {{0, 0, {}}, {1, 0, {}}}).ordered);          // mixed directions
  EXPECT_FALSE(scan(t, {}, {{1, 1, {}}}).ordered);                      // not a prefix
  EXPECT_TRUE(scan(t, {{0, QRS_OP_EQ, I(1)}}, {{1, 1, {}}}).ordered);   // after a pinned member
  EXPECT_TRUE(scan(t, {}, {{0, 0, {}}, {1, 1, {}}, {2, 0, {}}}).ordered);  // key is unique

  s = scan(t, {{0, QRS_OP_EQ, I(1)}}, {{1, 0, {}}});  // reverse of b DESC within a = 1
  EXPECT_TRUE(s.ordered);
  EXPECT_EQ(s.rows, (Rows{"1|x|10", "1|y|11"}));
}

TEST_F(MemModuleTest, NoReverseClaimOverNullableKey) {
  qrs_table t = create(composite("nullable_order", /*not_null=*/false));
  EXPECT_TRUE(scan(t, {}, {{0, 0, {}}}).ordered);   // forward keeps NULLs first
  EXPECT_FALSE(scan(t, {}, {{0, 1, {}}}).ordered);  // backwards would put them last
}

TEST_F(MemModuleTest, LimitCapsFullyHandledScans) {
  qrs_table t = create(composite("limit"));
  fill(t);
  EXPECT_EQ(scan(t, {}, {}, 2).rows.size(), 2u);
  EXPECT_EQ(scan(t, {{0, QRS_OP_GE, I(1)}}, {}, 1).rows, (Rows{"1|y|11"}));  // handled seek + limit
  // A residual (unhandled) filter runs above the scan: the limit is not applied below it.
  EXPECT_EQ(scan(t, {{2, QRS_OP_EQ, I(12)}}, {}, 1).rows.size(), 4u);
}

TEST_F(MemModuleTest, CollatedKeysCollide) {
  Schema s("nocase", {"k", "v"}, {{0, false}}, true, &nocase_compare);
  qrs_table t = create(s);
  EXPECT_EQ(insert(t, {T("abc"), I(1)}).outcome, QRS_UPDATE_OK);
  WriteOut w = insert(t, {T("ABC"), I(2)});
  EXPECT_EQ(w.outcome, QRS_UPDATE_CONSTRAINT);
  EXPECT_EQ(w.existing, "abc|1");
  EXPECT_EQ(scan(t, {{0, QRS_OP_EQ, T("aBc")}}).rows, (Rows{"abc|1"}));
  EXPECT_EQ(update(t, {T("ABC")}, {T("Abc"), I(3)}).outcome, QRS_UPDATE_OK);  // same key, new spelling
  EXPECT_EQ(rows(t), (Rows{"Abc|3"}));
}

TEST_F(MemModuleTest, SingletonTable) {
  Schema s("single", {"x", "y"}, {});
  qrs_table t = create(s);
  EXPECT_EQ(insert(t, {I(1), T("one")}).outcome, QRS_UPDATE_OK);
  WriteOut w = insert(t, {I(2), T("two")});
  EXPECT_EQ(w.outcome, QRS_UPDATE_CONSTRAINT);
  EXPECT_EQ(w.existing, "1|one");
  EXPECT_EQ(insert(t, {I(2), T("two")}, QRS_CONFLICT_REPLACE).replaced, "1|one");
  EXPECT_EQ(update(t, {}, {I(3), T("three")}).outcome, QRS_UPDATE_OK);
  ScanOut sc = scan(t, {}, {{0, 1, {}}});
  EXPECT_TRUE(sc.ordered);
  EXPECT_EQ(sc.rows, (Rows{"3|three"}));
  EXPECT_EQ(remove(t, {}).row, "3|three");
  EXPECT_TRUE(rows(t).empty());
}

TEST_F(MemModuleTest, TableWithoutDeclaredKeyIsKeyedOnAllColumns) {
  Schema s("allcols", {"x", "y"}, {{0, false}, {1, false}});
  qrs_table t = create(s);
  EXPECT_EQ(insert(t, {I(1), T("a")}).outcome, QRS_UPDATE_OK);
  EXPECT_EQ(insert(t, {I(1), T("b")}).outcome, QRS_UPDATE_OK);
  EXPECT_EQ(insert(t, {I(1), T("a")}).outcome, QRS_UPDATE_CONSTRAINT);
}

TEST_F(MemModuleTest, BatchesHoldAtMost256Rows) {
  Schema s("batch", {"k", "v"}, {{0, false}});
  qrs_table t = create(s);
  for (int i = 999; i >= 0; --i) ASSERT_EQ(insert(t, {I(i), I(i * 2)}).outcome, QRS_UPDATE_OK);
  ScanOut sc = scan(t);
  ASSERT_EQ(sc.rows.size(), 1000u);
  EXPECT_EQ(sc.batches, 4u);
  EXPECT_EQ(sc.max_batch, 256u);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(sc.rows[i], std::to_string(i) + "|" + std::to_string(i * 2));
  sc = scan(t, {}, {{0, 1, {}}});
  ASSERT_EQ(sc.rows.size(), 1000u);
  EXPECT_EQ(sc.rows.front(), "999|1998");
  EXPECT_EQ(sc.rows.back(), "0|0");
}

TEST_F(MemModuleTest, CursorSurvivesWritesBetweenBatches) {
  Schema s("halloween", {"k"}, {{0, false}});
  qrs_table t = create(s);
  for (int i = 0; i < 600; ++i) insert(t, {I(i)});
  qrs_scan_args args{};
  args.struct_size = sizeof args;
  args.limit = -1;
  qrs_cursor cur{};
  ErrorBox e;
  ASSERT_EQ(t.vt->open_cursor(t.self, &args, &cur, &e.err), QRS_OK);
  qrs_row_batch b{};
  b.struct_size = sizeof b;
  ASSERT_EQ(cur.vt->next_batch(cur.self, &b, &e.err), QRS_ROW);
  EXPECT_EQ(b.row_count, 256u);
  for (int i = 0; i < 300; ++i) remove(t, {I(i)});  // deletes the rows just handed out, and more
  insert(t, {I(10000)});
  size_t seen = 0;
  int64_t last = -1;
  while (cur.vt->next_batch(cur.self, &b, &e.err) == QRS_ROW) {
    for (uint32_t r = 0; r < b.row_count; ++r) {
      EXPECT_GT(b.cells[r].u.integer, last);
      last = b.cells[r].u.integer;
      ++seen;
    }
  }
  cur.vt->close(cur.self);
  EXPECT_EQ(seen, 301u);  // 300..599 and 10000
}

TEST_F(MemModuleTest, TransactionCommitAndIsolation) {
  Schema s = composite("txn");
  qrs_table t = create(s);
  fill(t);
  qrs_table other = connect(s);
  Conn c(t);
  ASSERT_EQ(c.begin(), QRS_OK);
  EXPECT_EQ(insert(t, {I(3), T("n"), I(30)}).outcome, QRS_UPDATE_OK);
  EXPECT_EQ(update(t, {I(1), T("x")}, {I(1), T("x"), I(-10)}).outcome, QRS_UPDATE_OK);
  EXPECT_EQ(remove(t, {I(0), T("z")}).outcome, QRS_UPDATE_OK);
  EXPECT_EQ(insert(t, {I(3), T("n"), I(31)}).outcome, QRS_UPDATE_CONSTRAINT);  // sees its own pending row
  EXPECT_EQ(rows(t), (Rows{"1|y|11", "1|x|-10", "2|a|12", "3|n|30"}));
  EXPECT_EQ(rows(other), (Rows{"0|z|13", "1|y|11", "1|x|10", "2|a|12"}));  // not committed yet
  EXPECT_EQ(scan(t, {{0, QRS_OP_EQ, I(1)}}, {{1, 0, {}}}).rows, (Rows{"1|x|-10", "1|y|11"}));
  EXPECT_EQ(c.begin(), QRS_MISUSE);
  ASSERT_EQ(c.commit(), QRS_OK);
  EXPECT_EQ(rows(other), (Rows{"1|y|11", "1|x|-10", "2|a|12", "3|n|30"}));
}

TEST_F(MemModuleTest, TransactionRollback) {
  qrs_table t = create(composite("rb"));
  fill(t);
  Conn c(t);
  ASSERT_EQ(c.begin(), QRS_OK);
  remove(t, {I(1), T("x")});
  insert(t, {I(9), T("n"), I(0)});
  ASSERT_EQ(c.rollback(), QRS_OK);
  EXPECT_EQ(rows(t), (Rows{"0|z|13", "1|y|11", "1|x|10", "2|a|12"}));
  insert(t, {I(9), T("auto"), I(0)});  // outside begin: autocommitted
  EXPECT_EQ(rows(t).size(), 5u);
}

TEST_F(MemModuleTest, Savepoints) {
  Schema s("sp", {"k"}, {{0, false}});
  qrs_table t = create(s);
  Conn c(t);
  ASSERT_EQ(c.begin(), QRS_OK);
  insert(t, {I(1)});
  ASSERT_EQ(c.savepoint(1), QRS_OK);
  insert(t, {I(2)});
  ASSERT_EQ(c.savepoint(2), QRS_OK);
  insert(t, {I(3)});
  remove(t, {I(1)});
  EXPECT_EQ(rows(t), (Rows{"2", "3"}));
  ASSERT_EQ(c.rollback_to(2), QRS_OK);  // undoes 3 and the delete of 1; savepoint 2 stays
  EXPECT_EQ(rows(t), (Rows{"1", "2"}));
  insert(t, {I(4)});
  ASSERT_EQ(c.rollback_to(2), QRS_OK);  // still open: rolls back again
  EXPECT_EQ(rows(t), (Rows{"1", "2"}));
  insert(t, {I(5)});
  ASSERT_EQ(c.release(2), QRS_OK);  // 5 merges into savepoint 1
  EXPECT_EQ(c.rollback_to(2), QRS_MISUSE);
  ASSERT_EQ(c.rollback_to(1), QRS_OK);  // undoes 2 and 5
  EXPECT_EQ(rows(t), (Rows{"1"}));
  insert(t, {I(6)});
  ASSERT_EQ(c.release(1), QRS_OK);
  ASSERT_EQ(c.commit(), QRS_OK);
  EXPECT_EQ(rows(t), (Rows{"1", "6"}));
  // An update moving a key, undone by a savepoint.
  ASSERT_EQ(c.begin(), QRS_OK);
  ASSERT_EQ(c.savepoint(1), QRS_OK);
  EXPECT_EQ(update(t, {I(6)}, {I(7)}).outcome, QRS_UPDATE_OK);
  EXPECT_EQ(rows(t), (Rows{"1", "7"}));
  ASSERT_EQ(c.rollback_to(1), QRS_OK);
  ASSERT_EQ(c.commit(), QRS_OK);
  EXPECT_EQ(rows(t), (Rows{"1", "6"}));
}

TEST_F(MemModuleTest, ClosingConnectionRollsBack) {
  Schema s("close", {"k"}, {{0, false}});
  qrs_table t = create(s);
  {
    Conn c(t);
    ASSERT_EQ(c.begin(), QRS_OK);
    insert(t, {I(1)});
  }
  EXPECT_TRUE(rows(t).empty());
}

TEST_F(MemModuleTest, BulkInsertInOneTransaction) {
  Schema s("bulk", {"k", "v"}, {{0, false}});
  qrs_table t = create(s);
  Conn c(t);
  ASSERT_EQ(c.begin(), QRS_OK);
  constexpr int kRows = 200000;
  for (int i = 0; i < kRows; ++i) ASSERT_EQ(insert(t, {I(i), I(i)}).outcome, QRS_UPDATE_OK);
  ASSERT_EQ(c.commit(), QRS_OK);
  ScanOut sc = scan(t, {{0, QRS_OP_GE, I(kRows - 3)}});
  EXPECT_EQ(sc.rows, (Rows{"199997|199997", "199998|199998", "199999|199999"}));
  EXPECT_EQ(scan(t).rows.size(), static_cast<size_t>(kRows));
}

}  // namespace
