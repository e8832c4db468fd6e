#pragma once

#include "wire/ConnectionLimits.h"

#include <QtGlobal>
#include <array>
#include <cstdint>

namespace taxicore {

// What a request head said that its answer depends on.
struct RequestTraits {
    bool http10 = false;
    bool wantsClose = false;
};

// Why the bytes of a connection were refused: status, a stable error code and a message (its
// `%1`, if any, is `limit`).
struct FramingError {
    int status = 0; // 0: nothing wrong so far
    const char *code = "";
    const char *message = "";
    long long limit = 0;
    bool refused() const { return status != 0; }
};

// A strict, incremental check of every byte of one connection, request after request, before
// QHttpServer's parser sees it (docs/QT64.md §4, §10). It accepts only what Qt's lenient parser
// frames the same way (RFC 9112): CRLF line ends, no obs-fold, no control bytes in fields, one
// valid Content-Length, no Content-Length with Transfer-Encoding, `chunked` as the only coding,
// chunk framing parsed here, the body limit counted on the bytes received; and exactly one Host
// in HTTP/1.1, at most one in HTTP/1.0, its value a host[:port] (RFC 9112 §3.2). Anything else is an error, after which
// nothing more of the connection may reach Qt (request smuggling).
// Fixed-size state and no allocation: it runs on every byte of every request. Pure (no socket,
// no clock) so it can be fuzzed.
class RequestFraming {
public:
    // Completed heads not yet taken by the dispatcher; the check pauses when this many wait.
    static constexpr int kMaxHeadsAhead = 64;
    // Chunk-size lines and CRLFs of one chunked body, on top of the body limit (413 beyond).
    static constexpr long long kChunkFramingAllowance = 16 * 1024;

    explicit RequestFraming(const ConnectionLimits &limits)
        : m_limits(&limits)
    {
    }

    // Checks the next `size` bytes of the stream and returns how many it consumed: all of them,
    // or fewer when it must wait for the dispatcher (after a head asking for an upgrade, or with
    // kMaxHeadsAhead heads waiting) or after an error. `nowMs` stamps the start of a request head.
    qsizetype feed(const char *data, qsizetype size, long long nowMs)
    {
        const qsizetype consumed = check(data, size, nowMs);
        m_streamBytes += consumed;
        return consumed;
    }

    bool failed() const { return m_error.refused(); }
    const FramingError &error() const { return m_error; }

    // The traits of the oldest complete head not yet dispatched, in request order (the caller
    // checks hasPendingHead first). Taking the head of an upgrade request lets the check go on.
    bool hasPendingHead() const { return m_headsAhead > 0; }
    RequestTraits takeHead();
    int headsAhead() const { return m_headsAhead; }
    // Of those, the requests whose body is complete too (after an error: the ones still to serve).
    int completeHeadsAhead() const { return m_headsAhead - (m_inBody ? 1 : 0); }
    // Where the oldest head not yet taken starts in the connection's stream (bytes fed before its
    // first byte): the guard serves it itself only if nothing of it was read by Qt's parser.
    long long pendingHeadStart() const { return m_headStarts[std::size_t(m_firstHead)]; }

    // When the current request's head started arriving; 0 outside a head (sweep: header timeout).
    long long headStartedMs() const { return m_headStartedMs; }
    // When the head of the request whose body is being read was complete; 0 outside a body (sweep:
    // the body gets the header timeout again, so a body trickled a byte at a time ends too).
    long long bodyStartedMs() const { return m_bodyStartedMs; }
    // The HTTP version of the request being read (for an error answer).
    bool currentIsHttp10() const { return m_http10; }
    // True once after a head with `Expect: 100-continue` whose body has not started.
    bool takeContinue();
    // The stream ends between the CR and the LF that close a chunked body (Qt 6.4 would eat a
    // byte of the next request: docs/QT64.md §10).
    bool endsInsideFinalCrlf() const { return m_phase == Phase::LastChunkLf; }
    // Waiting for the dispatcher to take an upgrade request's head.
    bool awaitingUpgrade() const { return m_phase == Phase::AwaitingUpgrade; }

private:
    enum class Phase : std::uint8_t {
        Idle,
        IdleLf,
        Method,
        Target,
        Version,
        RequestLineLf,
        FieldStart,
        FieldName,
        FieldValue,
        FieldLf,
        HeadEndLf,
        FixedBody,
        ChunkSizeStart,
        ChunkSize,
        ChunkSizeSpace,
        ChunkExtension,
        ChunkSizeLf,
        ChunkData,
        ChunkDataCr,
        ChunkDataLf,
        LastChunkCr,
        LastChunkLf,
        AwaitingUpgrade,
        Failed,
    };
    // The header fields whose value the check reads; every other one is only validated.
    enum class Field : std::uint8_t { Other, ContentLength, TransferEncoding, Connection, Expect, Upgrade, Host };
    // Where a value's syntax is: leading whitespace, the value, trailing whitespace.
    enum class ValueStep : std::uint8_t { Leading, Inside, Trailing, Bad };

    qsizetype check(const char *data, qsizetype size, long long nowMs);
    qsizetype fail(int status, const char *code, const char *message, long long limit, qsizetype consumed);
    void startRequest(long long nowMs);
    bool finishFieldName();
    bool valueByte(unsigned char c);
    bool finishField();
    bool finishHead();
    void finishRequest();
    void connectionToken();

    const ConnectionLimits *m_limits;
    FramingError m_error;
    Phase m_phase = Phase::Idle;

    long long m_streamBytes = 0; // fed and consumed so far
    // The request being read.
    long long m_requestStart = 0; // its first byte's offset in the stream
    long long m_headStartedMs = 0;
    long long m_bodyStartedMs = 0;
    long long m_fedAtMs = 0; // the `nowMs` of the bytes being checked
    int m_lineBytes = 0;     // of the current line, without its CRLF
    int m_headBytes = 0;     // request line and fields with their CRLFs
    int m_fields = 0;
    int m_blankLines = 0; // before the request line
    int m_partBytes = 0;  // of the method or the target being read
    std::uint8_t m_versionIndex = 0;
    bool m_http10 = false;
    bool m_sawLength = false;
    bool m_chunked = false;
    bool m_closeToken = false;
    bool m_keepAliveToken = false;
    bool m_expectContinue = false;
    bool m_upgrade = false;
    std::uint8_t m_hostFields = 0; // Host lines of the head, counted up to 2
    bool m_continuePending = false;
    bool m_inBody = false; // the newest head's body is still being read
    long long m_contentLength = 0;

    // The header field being read: its name (lower case, only as long as the names we read).
    Field m_field = Field::Other;
    ValueStep m_valueStep = ValueStep::Leading;
    std::uint8_t m_nameLength = 0;
    std::array<char, 18> m_name{};
    long long m_number = 0; // Content-Length digits so far
    int m_matched = 0;      // characters of `chunked` / `100-continue` matched, or of a token
    std::array<char, 12> m_token{};

    // The body being read.
    long long m_remaining = 0;    // of the fixed-length body or the current chunk
    long long m_bodyBytes = 0;    // chunk data so far
    long long m_framingBytes = 0; // chunk-size lines and CRLFs so far
    int m_chunkLineBytes = 0;

    // Complete heads waiting for the dispatcher, oldest first.
    std::array<RequestTraits, kMaxHeadsAhead> m_heads{};
    std::array<long long, kMaxHeadsAhead> m_headStarts{}; // stream offsets, as pendingHeadStart()
    int m_firstHead = 0;
    int m_headsAhead = 0;
};

} // namespace taxicore
