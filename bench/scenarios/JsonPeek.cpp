#include "JsonPeek.h"

#include <charconv>

namespace taxicore::bench {

namespace {

// Position just after `"field"` and the following colon, or npos.
std::size_t valueStart(std::string_view json, std::string_view field)
{
    std::size_t from = 0;
    while (true) {
        const std::size_t quote = json.find(field, from);
        if (quote == std::string_view::npos)
            return quote;
        from = quote + field.size();
        const bool quotedBefore = quote > 0 && json[quote - 1] == '"';
        const bool quotedAfter = from < json.size() && json[from] == '"';
        if (!quotedBefore || !quotedAfter)
            continue;
        std::size_t pos = from + 1;
        while (pos < json.size() && (json[pos] == ' ' || json[pos] == '\t' || json[pos] == '\n' || json[pos] == '\r'))
            ++pos;
        if (pos >= json.size() || json[pos] != ':')
            continue;
        ++pos;
        while (pos < json.size() && (json[pos] == ' ' || json[pos] == '\t' || json[pos] == '\n' || json[pos] == '\r'))
            ++pos;
        return pos;
    }
}

} // namespace

std::optional<int64_t> peekJsonInteger(std::string_view json, std::string_view field)
{
    const std::size_t pos = valueStart(json, field);
    if (pos == std::string_view::npos)
        return std::nullopt;
    int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(json.data() + pos, json.data() + json.size(), value);
    if (ec != std::errc() || ptr == json.data() + pos)
        return std::nullopt;
    return value;
}

std::optional<std::string_view> peekJsonString(std::string_view json, std::string_view field)
{
    const std::size_t pos = valueStart(json, field);
    if (pos == std::string_view::npos || json[pos] != '"')
        return std::nullopt;
    const std::size_t end = json.find('"', pos + 1);
    if (end == std::string_view::npos)
        return std::nullopt;
    return json.substr(pos + 1, end - pos - 1);
}

} // namespace taxicore::bench
