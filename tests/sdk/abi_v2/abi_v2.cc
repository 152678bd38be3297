// tests/sdk/abi_v2 — a plugin for a (hypothetical) ABI major 2: it exports the v2 entry
// points only. An ABI-1 host must refuse it by its manifest before loading the library,
// and, given a sidecar that lies about the major, because the v1 entry is missing
// (tests/unit/abi_versions_test.cc). Running any of this code is a test failure: the
// entry aborts.
#include <quereus/abi.h>

#include <cstdlib>

extern const char kAbiV2Manifest[];

extern "C" QRS_EXPORT const char* qrs_plugin_manifest_v2(void) { return kAbiV2Manifest; }
extern "C" QRS_EXPORT int qrs_plugin_entry_v2(const void*, void*, void*) { std::abort(); }
