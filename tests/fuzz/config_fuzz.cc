// libFuzzer target for the deployment loader: any text gives options or a CONFIG status,
// never a crash, a stack overflow or unbounded memory (alias bombs, huge numbers).
#include <cstdint>
#include <string_view>

#include "config/config_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  quereus::HostOptions options;
  quereus::Status s = quereus::parse_config(std::string_view(reinterpret_cast<const char*>(data), size),
                                            "fuzz.yaml", &options);
  if (!s.ok() && s.code() != quereus::StatusCode::kConfig) __builtin_trap();
  return 0;
}
