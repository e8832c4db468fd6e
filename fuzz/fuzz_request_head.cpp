// Fuzzes the connection guard's request-head check (server/http/RequestHeadCheck) the way
// ConnectionGuard drives it: the bytes arrive in two reads, the second continuing after the
// last whole line of the first (QHttpServer consumes whole lines).

#include "FuzzChecks.h"
#include "http/RequestHeadCheck.h"

using namespace taxicore;

namespace {

// Small limits, so the fuzzer reaches every refusal with short inputs.
ConnectionLimits fuzzLimits()
{
    ConnectionLimits limits;
    limits.maxRequestLineBytes = 64;
    limits.maxHeaderBytes = 256;
    limits.maxHeaderFields = 8;
    limits.maxBodyBytes = 1024;
    return limits;
}

void checkState(const ConnectionState &state, const HeadVerdict &verdict, const ConnectionLimits &limits)
{
    if (verdict.refused()) {
        TAXICORE_FUZZ_CHECK(verdict.status == 400 || verdict.status == 413 || verdict.status == 414
                            || verdict.status == 431);
        TAXICORE_FUZZ_CHECK(*verdict.code != '\0' && !verdict.message.isEmpty());
        return;
    }
    // What the guard lets through respects every limit (the final blank line may add 2 bytes).
    TAXICORE_FUZZ_CHECK(state.headBytes >= 0 && state.headBytes <= limits.maxHeaderBytes + 2);
    TAXICORE_FUZZ_CHECK(state.headerFields <= limits.maxHeaderFields);
    TAXICORE_FUZZ_CHECK(state.contentLength >= 0 && state.contentLength <= limits.maxBodyBytes);
    TAXICORE_FUZZ_CHECK(!state.headComplete || !state.atRequestStart);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    static const ConnectionLimits limits = fuzzLimits();
    // The first byte picks where the first read ends; like the guard, peek at most a head's worth.
    const QByteArray input = fuzz::bytesOf(data + 1, size - 1).left(limits.maxHeaderBytes + 1);
    const qsizetype split = input.isEmpty() ? 0 : qsizetype(data[0]) % (input.size() + 1);

    ConnectionState state;
    const QByteArray first = input.left(split);
    HeadVerdict verdict = inspectRequestHead(first, limits, state, 1);
    checkState(state, verdict, limits);
    if (verdict.refused() || state.headComplete)
        return 0;
    const qsizetype lastLine = first.lastIndexOf("\r\n");
    const qsizetype consumed = lastLine < 0 ? 0 : lastLine + 2;
    verdict = inspectRequestHead(input.mid(consumed), limits, state, 2);
    checkState(state, verdict, limits);
    return 0;
}
