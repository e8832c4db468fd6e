#pragma once

#include "LoadSettings.h"

#include <string>
#include <string_view>

namespace taxicore::bench {

// Turns a method, path and body into the request bytes for one HTTP mode. Plans render their
// fixed requests once, before the run; the taxi flow renders per request.
class RequestRenderer {
public:
    RequestRenderer(std::string hostHeader, HttpMode mode);

    // `extraHeaders`: whole header lines, each ending in \r\n (e.g. an Authorization).
    std::string render(std::string_view method, std::string_view path, std::string_view jsonBody = {},
                       std::string_view extraHeaders = {}) const;
    HttpMode mode() const { return m_mode; }

private:
    std::string m_hostHeader;
    HttpMode m_mode;
};

} // namespace taxicore::bench
