#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace taxicore::bench {

// Reads one field of the outermost JSON object without a full parse (nested objects skipped): the
// hot path stays plain C++ and allocation-free. Good enough for TaxiCore's flat responses
// ({"booking_id":12,"state":"assigned",...}); not a general JSON reader.
std::optional<int64_t> peekJsonInteger(std::string_view json, std::string_view field);
std::optional<std::string_view> peekJsonString(std::string_view json, std::string_view field);

} // namespace taxicore::bench
