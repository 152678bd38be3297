// tests/sdk/ctor_marker — a plugin whose library constructor leaves a trace: it appends
// "constructor\n" to the file named by QUEREUS_TEST_CTOR_MARKER (when set). The loader
// must refuse a library before mapping it whenever it can (a pin mismatch, a malformed or
// truncated file, missing entry points), so tests/unit/plugin_image_test.cc checks that
// the marker stays absent after such refusals. Its entry registers the function
// ctor_marker() → 1.
#include <quereus/sdk.hpp>

#include <cstdio>
#include <cstdlib>

namespace sdk = quereus::sdk;

extern const char kCtorMarkerManifest[];

__attribute__((constructor)) static void leave_marker() {
  if (const char* path = std::getenv("QUEREUS_TEST_CTOR_MARKER")) {
    if (std::FILE* f = std::fopen(path, "a")) {
      std::fputs("constructor\n", f);
      std::fclose(f);
    }
  }
}

static void register_all(sdk::Registrar& r) {
  r.add_scalar("ctor_marker", 0, QRS_FUNC_DETERMINISTIC, QRS_LT_INTEGER,
               [](std::span<const sdk::Value>) { return sdk::Value::integer(1); });
}

QUEREUS_PLUGIN(kCtorMarkerManifest, register_all)
