#include "RequestRenderer.h"

#include "Version.h"

namespace taxicore::bench {

RequestRenderer::RequestRenderer(std::string hostHeader, HttpMode mode)
    : m_hostHeader(std::move(hostHeader))
    , m_mode(mode)
{
}

std::string RequestRenderer::render(std::string_view method, std::string_view path, std::string_view jsonBody,
                                    std::string_view extraHeaders) const
{
    std::string request;
    request.reserve(160 + path.size() + jsonBody.size() + extraHeaders.size());
    request.append(method).append(" ").append(path);
    request.append(m_mode == HttpMode::Http10 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
    request.append("Host: ").append(m_hostHeader).append("\r\n");
    request.append("User-Agent: taxicore-bench/").append(kBenchVersion).append("\r\n");
    request.append("Accept: */*\r\n");
    request.append(extraHeaders);
    // HTTP/1.0 closes by default, like ab without -k; HTTP/1.1 keeps alive unless told not to.
    if (m_mode == HttpMode::ConnectionPerRequest)
        request.append("Connection: close\r\n");
    if (!jsonBody.empty() || method == "POST" || method == "PUT") {
        request.append("Content-Type: application/json\r\n");
        request.append("Content-Length: ").append(std::to_string(jsonBody.size())).append("\r\n");
    }
    request.append("\r\n").append(jsonBody);
    return request;
}

} // namespace taxicore::bench
