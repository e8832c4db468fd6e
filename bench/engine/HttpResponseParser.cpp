#include "HttpResponseParser.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

namespace taxicore::bench {

namespace {

constexpr std::string_view kHeadEnd = "\r\n\r\n";
// A chunk-size line is hex digits plus optional extensions: anything longer is garbage.
constexpr std::size_t kMaxChunkLineBytes = 1024;

bool equalsIgnoreCase(std::string_view a, std::string_view b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

bool containsTokenIgnoreCase(std::string_view value, std::string_view token)
{
    if (value.size() < token.size())
        return false;
    for (std::size_t i = 0; i + token.size() <= value.size(); ++i) {
        if (equalsIgnoreCase(value.substr(i, token.size()), token))
            return true;
    }
    return false;
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

} // namespace

void HttpResponseParser::reset(bool keepBody)
{
    m_state = State::NeedMore;
    m_phase = Phase::Head;
    m_buffer.clear();
    m_body.clear();
    m_keepBody = keepBody;
    m_status = 0;
    m_http10 = false;
    m_keepAlive = true;
    m_chunked = false;
    m_hasContentLength = false;
    m_remaining = 0;
    m_bytesReceived = 0;
    m_error = "";
}

HttpResponseParser::State HttpResponseParser::feed(const char *data, std::size_t size)
{
    m_bytesReceived += size;
    while (size > 0 && m_state == State::NeedMore) {
        const std::size_t used = m_phase == Phase::Head ? consumeHead(data, size) : consumeBody(data, size);
        data += used;
        size -= used;
    }
    return m_state;
}

HttpResponseParser::State HttpResponseParser::finishOnClose()
{
    if (m_state != State::NeedMore)
        return m_state;
    if (m_phase == Phase::UntilClose)
        finish();
    else
        fail("connection closed before the response was complete");
    return m_state;
}

std::size_t HttpResponseParser::consumeHead(const char *data, std::size_t size)
{
    // Search only the new bytes plus the three before them for the blank line.
    const std::size_t searchFrom = m_buffer.size() >= 3 ? m_buffer.size() - 3 : 0;
    m_buffer.append(data, size);
    const std::size_t end = m_buffer.find(kHeadEnd, searchFrom);
    if (end == std::string::npos) {
        if (m_buffer.size() > kMaxHeaderBytes)
            fail("response head too large");
        return size;
    }
    const std::size_t headBytes = end + kHeadEnd.size();
    const std::size_t usedFromThisFeed = headBytes - (m_buffer.size() - size);
    if (!parseHead(std::string_view(m_buffer).substr(0, end)))
        return size;
    m_buffer.clear();
    return usedFromThisFeed;
}

bool HttpResponseParser::parseHead(std::string_view head)
{
    const std::size_t lineEnd = head.find("\r\n");
    if (!parseStatusLine(head.substr(0, lineEnd)))
        return false;
    std::size_t pos = lineEnd == std::string_view::npos ? head.size() : lineEnd + 2;
    while (pos < head.size()) {
        std::size_t next = head.find("\r\n", pos);
        if (next == std::string_view::npos)
            next = head.size();
        parseHeader(head.substr(pos, next - pos));
        pos = next + 2;
    }
    // 1xx, 204 and 304 never have a body.
    const bool noBody = (m_status >= 100 && m_status < 200) || m_status == 204 || m_status == 304;
    if (noBody || (m_hasContentLength && !m_chunked && m_remaining == 0)) {
        finish();
    } else if (m_chunked) {
        m_phase = Phase::ChunkSize;
    } else if (m_hasContentLength) {
        m_phase = Phase::FixedBody;
    } else {
        m_phase = Phase::UntilClose;
        m_keepAlive = false;
    }
    return true;
}

bool HttpResponseParser::parseStatusLine(std::string_view line)
{
    // "HTTP/1.1 200 OK"
    if (line.size() < 12 || line.substr(0, 5) != "HTTP/" || line[8] != ' ') {
        fail("malformed status line");
        return false;
    }
    m_http10 = line.substr(5, 3) == "1.0";
    m_keepAlive = !m_http10;
    const std::string_view code = line.substr(9, 3);
    const auto [ptr, ec] = std::from_chars(code.data(), code.data() + code.size(), m_status);
    if (ec != std::errc() || ptr != code.data() + code.size() || m_status < 100 || m_status > 599) {
        fail("malformed status code");
        return false;
    }
    return true;
}

void HttpResponseParser::parseHeader(std::string_view line)
{
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos)
        return;
    const std::string_view name = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (equalsIgnoreCase(name, "content-length")) {
        uint64_t length = 0;
        const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
        if (ec == std::errc() && ptr == value.data() + value.size()) {
            m_hasContentLength = true;
            m_remaining = length;
        } else {
            fail("malformed Content-Length");
        }
    } else if (equalsIgnoreCase(name, "transfer-encoding")) {
        m_chunked = containsTokenIgnoreCase(value, "chunked");
    } else if (equalsIgnoreCase(name, "connection")) {
        if (containsTokenIgnoreCase(value, "close"))
            m_keepAlive = false;
        else if (containsTokenIgnoreCase(value, "keep-alive"))
            m_keepAlive = true;
    }
}

std::size_t HttpResponseParser::consumeBody(const char *data, std::size_t size)
{
    switch (m_phase) {
    case Phase::FixedBody:
    case Phase::ChunkData: {
        const auto take = static_cast<std::size_t>(std::min<uint64_t>(m_remaining, size));
        keep(data, take);
        m_remaining -= take;
        if (m_remaining == 0) {
            if (m_phase == Phase::FixedBody)
                finish();
            else
                m_phase = Phase::ChunkDataEnd;
        }
        return take;
    }
    case Phase::ChunkDataEnd:
    case Phase::ChunkSize:
    case Phase::Trailers: {
        bool complete = false;
        const std::size_t used = consumeLine(data, size, complete);
        if (!complete || m_state != State::NeedMore)
            return used;
        const std::string line = std::move(m_buffer);
        m_buffer.clear();
        if (m_phase == Phase::ChunkDataEnd) {
            if (!line.empty())
                fail("chunk not followed by CRLF");
            m_phase = Phase::ChunkSize;
        } else if (m_phase == Phase::ChunkSize) {
            const std::string_view digits = trim(std::string_view(line).substr(0, line.find(';')));
            uint64_t chunkSize = 0;
            const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), chunkSize, 16);
            if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size()) {
                fail("malformed chunk size");
            } else if (chunkSize == 0) {
                m_phase = Phase::Trailers;
            } else {
                m_remaining = chunkSize;
                m_phase = Phase::ChunkData;
            }
        } else if (line.empty()) { // the blank line after the trailers ends the message
            finish();
        }
        return used;
    }
    case Phase::UntilClose:
        keep(data, size);
        return size;
    case Phase::Head:
    case Phase::Done:
        break;
    }
    return size;
}

std::size_t HttpResponseParser::consumeLine(const char *data, std::size_t size, bool &complete)
{
    const auto *newline = static_cast<const char *>(std::memchr(data, '\n', size));
    const std::size_t used = newline ? static_cast<std::size_t>(newline - data) + 1 : size;
    m_buffer.append(data, newline ? used - 1 : used);
    complete = newline != nullptr;
    if (complete && !m_buffer.empty() && m_buffer.back() == '\r')
        m_buffer.pop_back();
    if (m_buffer.size() > kMaxChunkLineBytes)
        fail("chunk line too long");
    return used;
}

void HttpResponseParser::keep(const char *data, std::size_t size)
{
    if (m_keepBody && m_body.size() < kMaxKeptBodyBytes)
        m_body.append(data, std::min(size, kMaxKeptBodyBytes - m_body.size()));
}

void HttpResponseParser::fail(const char *why)
{
    m_state = State::Error;
    m_error = why;
    m_keepAlive = false;
}

void HttpResponseParser::finish()
{
    m_phase = Phase::Done;
    m_state = State::Complete;
}

} // namespace taxicore::bench
