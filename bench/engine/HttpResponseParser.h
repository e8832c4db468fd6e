#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace taxicore::bench {

// Incremental HTTP/1.x response parser: status line, headers, then a body delimited by
// Content-Length, chunked transfer coding, or the end of the connection. Feed it bytes as they
// arrive; it says when a whole response has been read. Bodies are kept only when asked (the taxi
// flow reads booking ids from them); otherwise they are counted and dropped.
class HttpResponseParser {
public:
    enum class State { NeedMore, Complete, Error };

    // Header blocks beyond this size are treated as a broken response, not buffered forever.
    static constexpr std::size_t kMaxHeaderBytes = 64 * 1024;
    // A kept body is truncated here; the flow only needs the first fields of small JSON bodies.
    static constexpr std::size_t kMaxKeptBodyBytes = 64 * 1024;

    void reset(bool keepBody);
    // Consumes bytes; returns the state after them. Bytes past the end of a complete response
    // are ignored (the client never pipelines).
    State feed(const char *data, std::size_t size);
    // The connection ended: completes a body delimited by the close, otherwise an error.
    State finishOnClose();

    State state() const { return m_state; }
    int status() const { return m_status; }
    bool keepAlive() const { return m_keepAlive; }
    std::string_view body() const { return m_body; }
    std::size_t bytesReceived() const { return m_bytesReceived; }
    std::string_view error() const { return m_error; }

private:
    enum class Phase { Head, FixedBody, ChunkSize, ChunkData, ChunkDataEnd, Trailers, UntilClose, Done };

    std::size_t consumeHead(const char *data, std::size_t size);
    bool parseHead(std::string_view head);
    bool parseStatusLine(std::string_view line);
    void parseHeader(std::string_view line);
    std::size_t consumeBody(const char *data, std::size_t size);
    std::size_t consumeLine(const char *data, std::size_t size, bool &complete);
    void keep(const char *data, std::size_t size);
    void fail(const char *why);
    void finish();

    State m_state = State::NeedMore;
    Phase m_phase = Phase::Head;
    std::string m_buffer; // the head, or the current chunk-size/trailer line
    std::string m_body;
    bool m_keepBody = false;
    int m_status = 0;
    bool m_http10 = false;
    bool m_keepAlive = true;
    bool m_chunked = false;
    bool m_hasContentLength = false;
    uint64_t m_remaining = 0;
    std::size_t m_bytesReceived = 0;
    const char *m_error = "";
};

} // namespace taxicore::bench
