// ASCII case folding for SQL names and keywords (identifiers compare case-insensitively).
#pragma once

#include <string>
#include <string_view>

namespace quereus {

std::string to_lower(std::string_view s);
std::string to_upper(std::string_view s);
bool iequals(std::string_view a, std::string_view b);

}  // namespace quereus
