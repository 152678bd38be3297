// Logging: LoggingOptions → spdlog's default logger.
#include "config/logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/daily_file_sink.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace quereus {

static spdlog::level::level_enum to_spdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return spdlog::level::trace;
    case LogLevel::kDebug: return spdlog::level::debug;
    case LogLevel::kInfo: return spdlog::level::info;
    case LogLevel::kWarn: return spdlog::level::warn;
    case LogLevel::kError: return spdlog::level::err;
    case LogLevel::kOff: return spdlog::level::off;
  }
  return spdlog::level::warn;
}

Status apply_logging(const LoggingOptions& options) {
  std::vector<spdlog::sink_ptr> sinks;
  try {
    for (const LogSink& s : options.sinks) {
      switch (s.type) {
        case LogSinkType::kStderr: sinks.push_back(std::make_shared<spdlog::sinks::stderr_sink_mt>()); break;
        case LogSinkType::kStdout: sinks.push_back(std::make_shared<spdlog::sinks::stdout_sink_mt>()); break;
        case LogSinkType::kFile:
          sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(s.path));
          break;
        case LogSinkType::kRotatingFile:
          sinks.push_back(std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
              s.path, static_cast<size_t>(s.max_size), static_cast<size_t>(s.max_files)));
          break;
        case LogSinkType::kDailyFile:
          sinks.push_back(std::make_shared<spdlog::sinks::daily_file_sink_mt>(
              s.path, static_cast<int>(s.rotation_hour), static_cast<int>(s.rotation_minute), false,
              static_cast<uint16_t>(s.max_files)));
          break;
      }
    }
  } catch (const spdlog::spdlog_ex& e) {
    return Status(StatusCode::kConfig, std::string("cannot open log sink: ") + e.what());
  }
  auto logger = std::make_shared<spdlog::logger>("quereus", sinks.begin(), sinks.end());
  logger->set_level(to_spdlog(options.level));
  logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
  spdlog::set_default_logger(std::move(logger));
  return Status::Ok();
}

}  // namespace quereus
