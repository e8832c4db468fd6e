#include "JsonPeek.h"

#include <charconv>

namespace taxicore::bench {

namespace {

bool isSpace(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// End of the JSON string starting at the quote `start` (index of its closing quote), or npos.
std::size_t stringEnd(std::string_view json, std::size_t start)
{
    for (std::size_t i = start + 1; i < json.size(); ++i) {
        if (json[i] == '\\')
            ++i;
        else if (json[i] == '"')
            return i;
    }
    return std::string_view::npos;
}

// Position of the value of `field` in the outermost object, or npos. Keys of nested objects
// ({"car":{"state":...},"state":...}) are skipped: only depth 1 counts.
std::size_t valueStart(std::string_view json, std::string_view field)
{
    int depth = 0;
    bool expectKey = false;
    for (std::size_t i = 0; i < json.size(); ++i) {
        const char c = json[i];
        if (c == '"') {
            const std::size_t end = stringEnd(json, i);
            if (end == std::string_view::npos)
                return end;
            if (depth == 1 && expectKey) {
                std::size_t colon = end + 1;
                while (colon < json.size() && isSpace(json[colon]))
                    ++colon;
                if (colon < json.size() && json[colon] == ':') {
                    if (json.substr(i + 1, end - i - 1) == field) {
                        std::size_t value = colon + 1;
                        while (value < json.size() && isSpace(json[value]))
                            ++value;
                        return value < json.size() ? value : std::string_view::npos;
                    }
                    expectKey = false;
                    i = colon;
                    continue;
                }
            }
            i = end;
        } else if (c == '{') {
            ++depth;
            expectKey = depth == 1;
        } else if (c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            --depth;
        } else if (c == ',' && depth == 1) {
            expectKey = true;
        }
    }
    return std::string_view::npos;
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
    const std::size_t end = stringEnd(json, pos);
    if (end == std::string_view::npos)
        return std::nullopt;
    return json.substr(pos + 1, end - pos - 1);
}

} // namespace taxicore::bench
