// libFuzzer target for the SQL front end: parsing never crashes, hangs or trips a
// sanitizer, and print → parse → print is a fixed point for everything that parses.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/status.h"
#include "parser/ast_printer.h"
#include "parser/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view sql(reinterpret_cast<const char*>(data), size);
  try {
    auto stmts = quereus::Parser::parse(sql);
    for (auto& s : stmts) {
      std::string once = quereus::statement_to_string(*s);
      auto again = quereus::Parser::parse(once);
      if (again.size() != 1) std::abort();
      if (quereus::statement_to_string(*again[0]) != once) std::abort();
    }
  } catch (const quereus::Error&) {
    // a clean error is the expected outcome for most inputs
  }
  return 0;
}
