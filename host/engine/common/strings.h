// ASCII case folding for SQL names and keywords (identifiers compare case-insensitively).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace quereus {

std::string to_lower(std::string_view s);
std::string to_upper(std::string_view s);
bool iequals(std::string_view a, std::string_view b);
// `items` separated by `sep`.
std::string join(const std::vector<std::string>& items, std::string_view sep);

}  // namespace quereus
