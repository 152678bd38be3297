// Reading deployment files: YAML text → HostOptions (yaml-cpp), with validation.
//
// Every error is a Status with code kConfig whose message starts with the place it
// refers to, "<file>:<line>: ", and names the key:
//   config/x.yaml:12: unknown key 'plugns' in top level (did you mean 'plugins'?)
//   config/x.yaml:7: key 'level' must be one of trace, debug, info, warn, error, off
//   config/x.yaml:3: environment variable 'HOME_DIR' is not set (in key 'plugin_dir')
//   config/missing.yaml: cannot open file
//
// Scalar values may use ${VAR} and ${VAR:-default} (used when VAR is unset or empty);
// $${ writes a literal ${. Keys are never interpolated.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "config/options.h"

namespace quereus {

// Reads and parses the file at `path`. A relative plugin_dir is resolved against the
// file's directory. On failure *out is left unspecified.
Status load_config(const std::string& path, HostOptions* out);

// Parses YAML text; `display_name` is the file name used in error messages and origins.
// Fields the text does not mention keep the defaults of HostOptions.
Status parse_config(std::string_view yaml_text, const std::string& display_name, HostOptions* out);

// Names used in YAML for the enums (e.g. "warn", "file").
// A hub database id (SyncClientConfig::database_id, the hub's directory names): 1 to 128
// characters of A-Z a-z 0-9 _ : . -, not "." or "..".
bool valid_hub_database_id(std::string_view id);

const char* log_level_name(LogLevel level);
const char* log_sink_type_name(LogSinkType type);

}  // namespace quereus
