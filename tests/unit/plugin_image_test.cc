// Loading plugin libraries safely (issue 15, part 4): a truncated or malformed library is
// refused before it is mapped (no SIGBUS, no constructor run), refusals that can be
// decided on the file's bytes never run the library's code, and the bytes that were
// pinned are the bytes loaded even when the file is swapped or truncated in between.
#include "plugin/plugin_image.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "plugin/plugin_loader.h"

namespace quereus {
namespace {

namespace fs = std::filesystem;

const fs::path kPluginDir = QUEREUS_PLUGIN_DIR;
const fs::path kTestPluginDir = QUEREUS_TEST_PLUGIN_DIR;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

// Replaces every occurrence of `from` by `to` (same length) in `bytes`.
std::string replace_all(std::string bytes, const std::string& from, const std::string& to) {
  for (size_t at = bytes.find(from); at != std::string::npos; at = bytes.find(from, at + to.size()))
    bytes.replace(at, from.size(), to);
  return bytes;
}

class PluginImageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    tmp_ = fs::temp_directory_path() /
           ("quereus_image_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(tmp_);
    marker_ = tmp_ / "constructor.marker";
    setenv("QUEREUS_TEST_CTOR_MARKER", marker_.c_str(), 1);
    registry_ = std::make_shared<Registry>();
    loader_ = std::make_unique<PluginLoader>(registry_, std::vector<std::string>{kPluginDir});
  }
  void TearDown() override {
    unsetenv("QUEREUS_TEST_CTOR_MARKER");
    loader_.reset();
    registry_.reset();
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }

  // Writes `bytes` as <tmp>/<name>.so beside `manifest_of`'s sidecar; returns the path.
  std::string plant(const std::string& name, const std::string& bytes, const fs::path& manifest_of) {
    write_file(tmp_ / (name + ".so"), bytes);
    fs::copy_file(manifest_of, tmp_ / (name + ".plugin.json"), fs::copy_options::overwrite_existing);
    return (tmp_ / (name + ".so")).string();
  }
  std::string ctor_bytes() const { return read_file(kTestPluginDir / "ctor_marker.so"); }
  fs::path ctor_manifest() const { return kTestPluginDir / "ctor_marker.plugin.json"; }
  bool constructor_ran() const { return fs::exists(marker_); }

  Status expect_refused(const PluginSpec& spec, const std::string& reason) {
    Status st = loader_->load(spec);
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(st.code(), StatusCode::kPlugin);
    EXPECT_NE(st.message().find(reason), std::string::npos) << st.message();
    return st;
  }

  fs::path tmp_, marker_;
  std::shared_ptr<Registry> registry_;
  std::unique_ptr<PluginLoader> loader_;
};

TEST_F(PluginImageTest, TheMarkerPluginLeavesItsMarkWhenLoaded) {
  // The control for every "constructor did not run" below.
  std::string path = plant("ctor_marker", ctor_bytes(), ctor_manifest());
  ASSERT_FALSE(constructor_ran());
  Status st = loader_->load({path, {}, {}, ""});
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(constructor_ran());
  EXPECT_NE(registry_->find_scalar("ctor_marker", 0), nullptr);
}

TEST_F(PluginImageTest, TruncatedLibraryIsRefusedWithoutCrashOrConstructor) {
  const std::string whole = ctor_bytes();
  ASSERT_GT(whole.size(), 4096u);
  for (size_t size : {size_t{0}, size_t{10}, sizeof(Elf64_Ehdr), size_t{200}, size_t{4096}, whole.size() / 2,
                      whole.size() - 1}) {
    SCOPED_TRACE(size);
    std::string path = plant("cut" + std::to_string(size), whole.substr(0, size), ctor_manifest());
    expect_refused({path, {}, {}, ""}, "not a plugin: malformed library: ");
  }
  EXPECT_FALSE(constructor_ran());
  EXPECT_EQ(registry_->find_scalar("ctor_marker", 0), nullptr);
}

TEST_F(PluginImageTest, MalformedHeadersAreRefusedWithReasons) {
  const std::string whole = ctor_bytes();
  auto with_header = [&](auto edit) {
    std::string b = whole;
    Elf64_Ehdr eh;
    std::memcpy(&eh, b.data(), sizeof(eh));
    edit(eh);
    std::memcpy(b.data(), &eh, sizeof(eh));
    return b;
  };
  struct Case {
    std::string bytes;
    const char* reason;
  } cases[] = {
      {"not an elf file at all, just text" + std::string(100, ' '), "bad magic"},
      {with_header([](Elf64_Ehdr& e) { e.e_ident[EI_CLASS] = ELFCLASS32; }), "not a 64-bit ELF file"},
      {with_header([](Elf64_Ehdr& e) { e.e_type = ET_EXEC; }), "not a shared object"},
      {with_header([](Elf64_Ehdr& e) { e.e_machine = EM_RISCV; }), "built for another machine"},
      {with_header([](Elf64_Ehdr& e) { e.e_phoff = 1ull << 60; }), "program headers lie past the end"},
      {with_header([](Elf64_Ehdr& e) { e.e_phoff = UINT64_MAX - 8; }), "program headers lie past the end"},
      {with_header([](Elf64_Ehdr& e) { e.e_shoff = UINT64_MAX - 8; }), "section headers lie past the end"},
      {with_header([](Elf64_Ehdr& e) { e.e_phnum = 0; }), "no program headers"},
  };
  int i = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    std::string path = plant("bad" + std::to_string(i++), c.bytes, ctor_manifest());
    expect_refused({path, {}, {}, ""}, c.reason);
  }
  // A PT_LOAD whose file bytes run past the end of the file.
  std::string b = whole;
  Elf64_Ehdr eh;
  std::memcpy(&eh, b.data(), sizeof(eh));
  for (uint16_t k = 0; k < eh.e_phnum; ++k) {
    Elf64_Phdr ph;
    std::memcpy(&ph, b.data() + eh.e_phoff + k * sizeof(ph), sizeof(ph));
    if (ph.p_type != PT_LOAD) continue;
    ph.p_filesz = b.size() - ph.p_offset + 4096;  // one page past the end
    ph.p_memsz = std::max(ph.p_memsz, ph.p_filesz);
    std::memcpy(b.data() + eh.e_phoff + k * sizeof(ph), &ph, sizeof(ph));
    break;
  }
  expect_refused({plant("longseg", b, ctor_manifest()), {}, {}, ""}, "lies past the end of the file");
  EXPECT_FALSE(constructor_ran());
}

TEST_F(PluginImageTest, RefusalsBeforeLoadingDoNotRunConstructors) {
  const std::string whole = ctor_bytes();
  std::string path = plant("ctor_marker", whole, ctor_manifest());
  // A pin mismatch.
  expect_refused({path, std::string(64, 'a'), {}, ""}, "SHA-256 mismatch");
  // A setting the manifest does not declare.
  expect_refused({path, {}, {{"colour", Value::Text("red")}}, ""}, "unknown setting 'colour'");
  // No entry point in the dynamic symbol table (its name altered in the file).
  std::string renamed = replace_all(whole, QRS_PLUGIN_ENTRY_V1, "qrs_plugin_entry_x1");
  ASSERT_NE(renamed, whole);
  expect_refused({plant("noentry", renamed, ctor_manifest()), {}, {}, ""},
                 "not a plugin: no " QRS_PLUGIN_ENTRY_V1 " symbol");
  renamed = replace_all(whole, QRS_PLUGIN_MANIFEST_V1, "qrs_plugin_manifest_x1");
  expect_refused({plant("nomanifest", renamed, ctor_manifest()), {}, {}, ""},
                 "not a plugin: no " QRS_PLUGIN_MANIFEST_V1 " symbol");
  EXPECT_FALSE(constructor_ran());
  EXPECT_TRUE(loader_->loaded().empty());
}

TEST_F(PluginImageTest, SwappedFileAfterPinCheckLoadsThePinnedBytes) {
  // sample.so is pinned; between the checks and the load the file is replaced by another
  // plugin (ctor_marker.so, renamed over it). The pinned bytes are what gets loaded.
  const std::string sample = read_file(kPluginDir / "sample.so");
  std::string path = plant("p", sample, kPluginDir / "sample.plugin.json");
  const std::string pin = PluginImage::sha256_hex(sample);
  int calls = 0;
  loader_->set_before_load_for_testing([&](const std::string& p) {
    ++calls;
    EXPECT_EQ(p, fs::path(path).lexically_normal().string());
    write_file(tmp_ / "swap.so", ctor_bytes());
    fs::rename(tmp_ / "swap.so", p);
  });
  Status st = loader_->load({path, pin, {}, "deploy.yaml:3"});
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(read_file(path), ctor_bytes());  // the swap happened
  EXPECT_NE(registry_->find_collation("NATURAL"), nullptr);  // sample's registrations
  EXPECT_EQ(registry_->find_scalar("ctor_marker", 0), nullptr);
  EXPECT_FALSE(constructor_ran());
}

TEST_F(PluginImageTest, TruncatedAfterTheChecksCannotCrashTheHost) {
  // With a mapping of the file itself this is a SIGBUS on first touch of a lost page.
  std::string path = plant("ctor_marker", ctor_bytes(), ctor_manifest());
  loader_->set_before_load_for_testing([&](const std::string& p) { fs::resize_file(p, 0); });
  Status st = loader_->load({path, {}, {}, ""});
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(fs::file_size(path), 0u);
  const ScalarFunction* f = registry_->find_scalar("ctor_marker", 0);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->call({}), Value::Integer(1));
}

TEST_F(PluginImageTest, InTreePluginsAndSystemLibrariesPassTheElfChecks) {
  for (const fs::path& p : {kPluginDir / "mem.so", kPluginDir / "sample.so", kPluginDir / "store.so",
                            kTestPluginDir / "thrower.so", kTestPluginDir / "raw_thrower.so"}) {
    SCOPED_TRACE(p);
    PluginImage image;
    ASSERT_TRUE(PluginImage::read(p.string(), &image).ok());
    Status st = image.validate();
    EXPECT_TRUE(st.ok()) << st.message();
    EXPECT_TRUE(image.exports(QRS_PLUGIN_ENTRY_V1));
    EXPECT_FALSE(image.exports("qrs_no_such_symbol"));
    EXPECT_EQ(image.sha256(), sha256_file_hex(p.string()).value());
  }
  for (const char* p : {"/lib/x86_64-linux-gnu/libz.so.1", "/lib/x86_64-linux-gnu/libm.so.6",
                        "/lib/x86_64-linux-gnu/libstdc++.so.6", "/lib/x86_64-linux-gnu/libcrypto.so.3"}) {
    if (!fs::exists(p)) continue;
    SCOPED_TRACE(p);
    PluginImage image;
    ASSERT_TRUE(PluginImage::read(p, &image).ok());
    Status st = image.validate();
    EXPECT_TRUE(st.ok()) << st.message();
  }
}

TEST_F(PluginImageTest, NotARegularFileIsRefused) {
  PluginImage image;
  Status st = PluginImage::read(tmp_.string(), &image);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not a regular file"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace quereus
