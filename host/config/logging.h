// Logging: applies LoggingOptions to spdlog.
#pragma once

#include "common/status.h"
#include "config/options.h"

namespace quereus {

// Replaces spdlog's default logger with one named "quereus" writing to the configured
// sinks at the configured level. Fails (kConfig) when a log file cannot be opened.
Status apply_logging(const LoggingOptions& options);

}  // namespace quereus
