// PluginLoader, the host-side adapters and the Registry, driven through the real
// in-tree plugins mem.so and sample.so (built into QUEREUS_PLUGIN_DIR).
#include "plugin/plugin_loader.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "plugin/module_adapter.h"

namespace quereus {
namespace {

namespace fs = std::filesystem;

const fs::path kPluginDir = QUEREUS_PLUGIN_DIR;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// Computed independently of the loader's own hashing.
std::string sha256_hex(const fs::path& p) {
  std::string data = read_file(p);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  std::string hex;
  char buf[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", md[i]);
    hex += buf;
  }
  return hex;
}

class PluginLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    tmp_ = fs::temp_directory_path() /
           ("quereus_plugin_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(tmp_);
    registry_ = std::make_shared<Registry>();
    loader_ = std::make_unique<PluginLoader>(registry_, std::vector<std::string>{kPluginDir});
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }

  // Copies build/lib/quereus/<from>.so to <tmp>/<to>.so with the given sidecar manifest
  // (the original's when empty). Returns the new library path.
  std::string copy_plugin(const std::string& from, const std::string& to,
                          std::string manifest = "") {
    if (manifest.empty()) manifest = read_file(kPluginDir / (from + ".plugin.json"));
    fs::copy_file(kPluginDir / (from + ".so"), tmp_ / (to + ".so"));
    write_file(tmp_ / (to + ".plugin.json"), manifest);
    return (tmp_ / (to + ".so")).string();
  }

  static nlohmann::json manifest_of(const std::string& plugin) {
    return nlohmann::json::parse(read_file(kPluginDir / (plugin + ".plugin.json")));
  }

  // Loads and expects a refusal whose message names `path` and contains `reason`.
  Status expect_refused(const PluginSpec& spec, const std::string& path,
                        const std::string& reason) {
    Status st = loader_->load(spec);
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(st.code(), StatusCode::kPlugin);
    EXPECT_NE(st.message().find("plugin '" + path + "'"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(reason), std::string::npos) << st.message();
    return st;
  }

  fs::path tmp_;
  std::shared_ptr<Registry> registry_;
  std::unique_ptr<PluginLoader> loader_;
};

TEST_F(PluginLoaderTest, LoadsMemAndSampleByBareName) {
  ASSERT_TRUE(loader_->load({"mem", {}, {}, ""}).ok());
  Status st = loader_->load({"sample", {}, {}, ""});
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(loader_->loaded().size(), 2u);
  EXPECT_EQ(loader_->loaded()[0].path, (kPluginDir / "mem.so").lexically_normal().string());

  EXPECT_NE(registry_->find_module("memory"), nullptr);
  EXPECT_NE(registry_->find_module("MEMORY"), nullptr);  // case-insensitive
  auto natural = registry_->find_collation("natural");
  ASSERT_NE(natural, nullptr);
  EXPECT_EQ(natural->name(), "NATURAL");
  EXPECT_LT(natural->compare("file2", "file10"), 0);
  EXPECT_GT(natural->compare("file10", "file2"), 0);
  EXPECT_TRUE(registry_->has_function_named("FNV1A"));
  const ScalarFunction* fnv = registry_->find_scalar("fnv1a", 1);
  ASSERT_NE(fnv, nullptr);
  Value arg = Value::Text("hello");
  Value h = fnv->call(std::span<const Value>(&arg, 1));
  EXPECT_FALSE(h.is_null());
  EXPECT_EQ(h, fnv->call(std::span<const Value>(&arg, 1)));  // deterministic
}

TEST_F(PluginLoaderTest, LoadsByPathWithSettings) {
  PluginSpec spec{(kPluginDir / "sample.so").string(), {}, {}, "deploy.yaml:7"};
  Status st = loader_->load(spec);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(loader_->loaded().at(0).manifest.name, manifest_of("sample")["name"]);
}

TEST_F(PluginLoaderTest, RefusesMissingFile) {
  std::string path = (tmp_ / "nope.so").string();
  expect_refused({path, {}, {}, ""}, path, "file not found");
  expect_refused({"no_such_plugin", {}, {}, ""}, "no_such_plugin", "file not found");
}

TEST_F(PluginLoaderTest, RefusesFileWithoutManifest) {
  fs::copy_file(fs::path(QUEREUS_SOURCE_DIR) / "CMakeLists.txt", tmp_ / "x.so");
  std::string path = (tmp_ / "x.so").string();
  expect_refused({path, {}, {}, ""}, path, "not a plugin");
}

TEST_F(PluginLoaderTest, RefusesMalformedManifest) {
  std::string path = copy_plugin("sample", "bad", "{ this is not json");
  expect_refused({path, {}, {}, ""}, path, "not a plugin: malformed manifest");
  std::string path2 = copy_plugin("sample", "bad2", R"({"name": "x"})");
  expect_refused({path2, {}, {}, ""}, path2, "missing string 'version'");
}

TEST_F(PluginLoaderTest, RefusesLibraryWithoutEntrySymbol) {
  fs::path system_lib;
  for (const char* p : {"/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1",
                        "/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                        "/lib64/libm.so.6", "/usr/lib64/libm.so.6"})
    if (fs::exists(p)) {
      system_lib = p;
      break;
    }
  if (system_lib.empty()) GTEST_SKIP() << "no system shared library to copy";
  fs::copy_file(system_lib, tmp_ / "nosym.so");
  write_file(tmp_ / "nosym.plugin.json", manifest_of("sample").dump());
  std::string path = (tmp_ / "nosym.so").string();
  expect_refused({path, {}, {}, ""}, path, "not a plugin: no qrs_plugin_entry_v1 symbol");
}

TEST_F(PluginLoaderTest, RefusesAbiMajorMismatch) {
  nlohmann::json m = manifest_of("sample");
  m["abi"]["major"] = 2;
  std::string path = copy_plugin("sample", "sample", m.dump());
  expect_refused({path, {}, {}, ""}, path,
                 "ABI major mismatch: plugin built for ABI 2, host speaks ABI 1");
  EXPECT_EQ(registry_->find_collation("NATURAL"), nullptr);
}

TEST_F(PluginLoaderTest, RefusesManifestThatDiffersFromEmbedded) {
  nlohmann::json m = manifest_of("sample");
  m["version"] = "999.0.0";
  std::string path = copy_plugin("sample", "sample", m.dump());
  expect_refused({path, {}, {}, ""}, path, "embedded manifest differs");
}

TEST_F(PluginLoaderTest, VerifiesPinnedHash) {
  std::string path = copy_plugin("sample", "sample");
  std::string wrong(64, '0');
  Status st = expect_refused({path, wrong, {}, "deploy.yaml:3"}, path, "SHA-256 mismatch");
  std::string actual = sha256_hex(path);
  EXPECT_NE(st.message().find("expected " + wrong), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("actual " + actual), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("deploy.yaml:3"), std::string::npos) << st.message();
  EXPECT_TRUE(loader_->loaded().empty());

  std::string upper = actual;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  st = loader_->load({path, upper, {}, ""});  // hex digests compare case-insensitively
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_NE(registry_->find_collation("NATURAL"), nullptr);
}

TEST_F(PluginLoaderTest, RefusesDuplicateNames) {
  ASSERT_TRUE(loader_->load({"sample", {}, {}, ""}).ok());
  std::string again = (kPluginDir / "sample.so").lexically_normal().string();
  expect_refused({"sample", {}, {}, ""}, again, "duplicate");
  std::string copy = copy_plugin("sample", "sample_copy");
  Status st =
      expect_refused({copy, {}, {}, ""}, copy, "already registered by plugin '" + again + "'");
  EXPECT_EQ(loader_->loaded().size(), 1u);
}

// A refused plugin registers nothing, whichever of its registrations collided.
TEST_F(PluginLoaderTest, RefusedPluginRegistersNothing) {
  // Collide on the collation: the functions must not appear.
  registry_->add_collation(std::make_shared<const Collation>("NATURAL", nullptr, nullptr, 0),
                           "builtin");
  std::string path = (kPluginDir / "sample.so").lexically_normal().string();
  expect_refused({"sample", {}, {}, ""}, path,
                 "duplicate collation name 'NATURAL': already registered by builtin");
  EXPECT_FALSE(registry_->has_function_named("fnv1a"));
  EXPECT_TRUE(loader_->loaded().empty());

  // Collide on the function: the collation must not appear.
  auto other = std::make_shared<Registry>();
  ASSERT_TRUE(PluginLoader(other, {kPluginDir}).load({"sample", {}, {}, ""}).ok());
  int arity = -2;
  for (int n = -1; n <= 4 && arity == -2; ++n)
    if (auto* f = other->find_scalar("fnv1a", n); f && f->num_args == n) arity = n;
  ASSERT_NE(arity, -2);
  auto fresh = std::make_shared<Registry>();
  ScalarFunction fn;
  fn.name = "fnv1a";
  fn.num_args = arity;
  fn.call = [](std::span<const Value>) { return Value(); };
  fresh->add_scalar(fn, "builtin");
  PluginLoader loader(fresh, {kPluginDir});
  Status st = loader.load({"sample", {}, {}, ""});
  EXPECT_EQ(st.code(), StatusCode::kPlugin);
  EXPECT_NE(st.message().find("duplicate function name 'fnv1a'"), std::string::npos)
      << st.message();
  EXPECT_EQ(fresh->find_collation("NATURAL"), nullptr);
  EXPECT_TRUE(loader.loaded().empty());
}

// ---- the module adapter, end to end through mem.so ----

TableSchema people_schema() {
  auto col = [](std::string name, qrs_logical_type t, bool pk) {
    ColumnSchema c;
    c.name = std::move(name);
    c.type_name = t == QRS_LT_INTEGER ? "INTEGER" : "TEXT";
    c.logical_type = t;
    c.not_null = pk;
    c.primary_key = pk;
    c.collation =
        std::shared_ptr<const Collation>(std::shared_ptr<const Collation>(), &Collation::binary());
    return c;
  };
  TableSchema s;
  s.schema_name = "main";
  s.name = "people";
  s.module_name = "memory";
  s.columns = {col("id", QRS_LT_INTEGER, true), col("name", QRS_LT_TEXT, false)};
  s.primary_key = {{0, false}};
  s.primary_key_declared = true;
  return s;
}

std::vector<Row> scan(VtabTable& table, const PlanRequest& req, PlanResult* plan_out = nullptr) {
  PlanResult plan = table.best_access_plan(req);
  ScanArgs args;
  args.plan_id = plan.plan_id;
  args.filters = req.filters;
  for (FilterSpec& f : args.filters) f.has_value = true;
  args.handled = plan.handled;
  args.provides_ordering = plan.provides_ordering;
  args.ordering = req.ordering;
  args.limit = req.limit;
  auto cursor = table.open_cursor(args);
  std::vector<Row> all, batch;
  while (cursor->next_batch(batch)) all.insert(all.end(), batch.begin(), batch.end());
  if (plan_out) *plan_out = plan;
  return all;
}

std::vector<int64_t> ids(const std::vector<Row>& rows) {
  std::vector<int64_t> out;
  for (const Row& r : rows) out.push_back(r.at(0).as_int());
  return out;
}

TEST_F(PluginLoaderTest, MemTableRoundTripThroughAdapters) {
  ASSERT_TRUE(loader_->load({"mem", {}, {}, ""}).ok());
  std::shared_ptr<VtabModule> module = registry_->find_module("memory");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(module->capabilities().persistent);
  std::unique_ptr<VtabTable> table = module->create(people_schema());
  ASSERT_NE(table, nullptr);
  auto conn = table->open_connection();  // may be null: the module need not take part
  if (conn) conn->begin();

  for (auto [id, name] : {std::pair{3, "carol"}, {1, "alice"}, {2, "bob"}}) {
    Row row{Value::Integer(id), Value::Text(name)};
    UpdateResult r = table->update(RowOp::kInsert, row, {}, ConflictAction::kAbort);
    EXPECT_EQ(r.outcome, UpdateResult::Outcome::kOk);
    // The module stores the row unchanged: the adapter reports that instead of copying.
    EXPECT_TRUE(r.row_as_written);
    if (r.row) {
      EXPECT_EQ(*r.row, row);
    }
  }
  Row dup{Value::Integer(2), Value::Text("bobby")};
  UpdateResult r = table->update(RowOp::kInsert, dup, {}, ConflictAction::kAbort);
  EXPECT_EQ(r.outcome, UpdateResult::Outcome::kConstraint);
  EXPECT_EQ(r.constraint_kind, QRS_CONSTRAINT_UNIQUE);

  // Full scan in primary-key order, across batches.
  std::vector<Row> rows = scan(*table, PlanRequest{});
  EXPECT_EQ(ids(rows), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(rows.at(1).at(1).str(), "bob");

  // Primary-key equality seek.
  PlanRequest seek;
  FilterSpec eq;
  eq.column = 0;
  eq.op = QRS_OP_EQ;
  eq.value = Value::Integer(2);
  seek.filters.push_back(eq);
  PlanResult plan;
  rows = scan(*table, seek, &plan);
  ASSERT_EQ(plan.handled.size(), 1u);
  EXPECT_TRUE(plan.handled[0]) << plan.explain;
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at(1).str(), "bob");

  // Update and delete by key.
  Value key2 = Value::Integer(2), key1 = Value::Integer(1), key9 = Value::Integer(9);
  Row bobby{Value::Integer(2), Value::Text("bobby")};
  r = table->update(RowOp::kUpdate, bobby, std::span<const Value>(&key2, 1),
                    ConflictAction::kAbort);
  EXPECT_EQ(r.outcome, UpdateResult::Outcome::kOk);
  r = table->update(RowOp::kDelete, {}, std::span<const Value>(&key1, 1), ConflictAction::kAbort);
  EXPECT_EQ(r.outcome, UpdateResult::Outcome::kOk);
  r = table->update(RowOp::kDelete, {}, std::span<const Value>(&key9, 1), ConflictAction::kAbort);
  EXPECT_EQ(r.outcome, UpdateResult::Outcome::kNoop);
  if (conn) conn->commit();

  rows = scan(*table, PlanRequest{});
  EXPECT_EQ(ids(rows), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(rows.at(0).at(1).str(), "bobby");
}

// Objects a plugin created keep it loaded after the loader and registry are gone.
TEST_F(PluginLoaderTest, AdaptersKeepThePluginLoaded) {
  ASSERT_TRUE(loader_->load({"mem", {}, {}, ""}).ok());
  ASSERT_TRUE(loader_->load({"sample", {}, {}, ""}).ok());
  std::shared_ptr<VtabModule> module = registry_->find_module("memory");
  std::shared_ptr<const Collation> natural = registry_->find_collation("NATURAL");
  loader_.reset();
  registry_.reset();

  EXPECT_LT(natural->compare("a9", "a10"), 0);
  auto table = module->create(people_schema());
  module.reset();  // the table keeps its module alive
  Row row{Value::Integer(1), Value::Text("x")};
  EXPECT_EQ(table->update(RowOp::kInsert, row, {}, ConflictAction::kAbort).outcome,
            UpdateResult::Outcome::kOk);
  ScanArgs args;
  args.plan_id = table->best_access_plan(PlanRequest{}).plan_id;
  auto cursor = table->open_cursor(args);
  table.reset();  // the cursor keeps its table alive
  std::vector<Row> batch;
  ASSERT_TRUE(cursor->next_batch(batch));
  EXPECT_EQ(batch.at(0).at(1).str(), "x");
}

// ---- registry and built-in collations ----

TEST(RegistryTest, BuiltinCollationsAndDuplicates) {
  Registry reg;
  for (const char* name : {"BINARY", "nocase", "Rtrim"})
    EXPECT_NE(reg.find_collation(name), nullptr);
  try {
    reg.add_collation(std::make_shared<const Collation>("NOCASE", nullptr, nullptr, 0), "me");
    FAIL() << "duplicate accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kPlugin);
    EXPECT_STREQ(e.what(), "duplicate collation name 'NOCASE': already registered by builtin");
  }
  ScalarFunction f;
  f.name = "Twice";
  f.num_args = 1;
  reg.add_scalar(f, "a");
  f.num_args = -1;
  reg.add_scalar(f, "b");  // another arity is an overload, not a duplicate
  EXPECT_EQ(reg.find_scalar("TWICE", 1)->num_args, 1);
  EXPECT_EQ(reg.find_scalar("twice", 3)->num_args, -1);
  EXPECT_THROW(reg.add_scalar(f, "c"), Error);
}

TEST(CollationTest, BuiltinOrders) {
  const Collation& bin = Collation::binary();
  EXPECT_LT(bin.compare("a", "b"), 0);
  EXPECT_LT(bin.compare("ab", "abc"), 0);
  EXPECT_GT(bin.compare("B", "A"), 0);
  EXPECT_LT(bin.compare("B", "a"), 0);
  const Collation& nocase = Collation::nocase();
  EXPECT_EQ(nocase.compare("HeLLo", "hello"), 0);
  EXPECT_LT(nocase.compare("a", "B"), 0);
  EXPECT_LT(nocase.compare("_", "A"), 0);  // like SQLite: folds to lower case, '_' < 'a'
  // Unicode folds as JavaScript's toLowerCase does: 'é' = 'É', 'σ'/'ς' = 'Σ', 'ß' stays.
  EXPECT_EQ(nocase.compare("\xc3\xa9", "\xc3\x89"), 0);
  EXPECT_EQ(nocase.compare("\xce\x9f\xce\x94\xce\x9f\xce\xa3", "\xce\xbf\xce\xb4\xce\xbf\xcf\x82"), 0);
  EXPECT_NE(nocase.compare("stra\xc3\x9f" "e", "STRASSE"), 0);
  EXPECT_LT(nocase.compare("zoe", "\xc3\x89mile"), 0);  // code point order of the folds
  EXPECT_LT(nocase.compare("\xc3\x89", "\xc3\xaa"), 0);  // 'É' folds to 'é' < 'ê'
  EXPECT_GT(nocase.compare("\xc3\x89", "E"), 0);
  const Collation& rtrim = Collation::rtrim();
  EXPECT_EQ(rtrim.compare("abc  ", "abc"), 0);
  EXPECT_LT(rtrim.compare(" abc", "abc"), 0);
  qrs_collation_ref ref = nocase.ref();
  EXPECT_EQ(std::string(ref.name.data, ref.name.len), "NOCASE");
  EXPECT_EQ(ref.compare(ref.user, "A", 1, "a", 1), 0);
  EXPECT_EQ(Collation::binary().ref().compare, nullptr);
}

}  // namespace
}  // namespace quereus
