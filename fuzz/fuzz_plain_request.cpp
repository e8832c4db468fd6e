// Fuzzes the connection guard's direct path (server/wire/PlainRequest) the way ConnectionGuard
// drives it: the framing check (RequestFraming) reads the connection's bytes first and records
// where each request head starts; readPlainRequest then reads whole requests from the front, and
// the guard serves one only while it starts exactly where the framing check's next head does.
// A request read directly must end where the check's next head starts (only blank lines between,
// which Qt skips), or a direct read would desynchronise the two readers of one stream (request
// smuggling). Every view must lie inside the request's own bytes, and the request must read the
// same from its own bytes alone.

#include "FuzzChecks.h"
#include "wire/PlainRequest.h"
#include "wire/RequestFraming.h"

#include <vector>

using namespace taxicore;

namespace {

ConnectionLimits fuzzLimits()
{
    ConnectionLimits limits;
    limits.maxRequestLineBytes = 128;
    limits.maxHeaderBytes = 512;
    limits.maxHeaderFields = 12;
    limits.maxBodyBytes = 1024;
    return limits;
}

// An empty field may point anywhere (present but empty is not absent: not null).
bool inside(QByteArrayView view, const char *begin, qsizetype size)
{
    return view.isEmpty() || (view.data() >= begin && view.data() + view.size() <= begin + size);
}

// The framing check over the whole stream: how many bytes it passed and where each head starts.
struct Checked {
    qsizetype passed = 0;
    std::vector<long long> headStarts;
};

Checked check(const ConnectionLimits &limits, const char *data, qsizetype size)
{
    Checked checked;
    RequestFraming framing(limits);
    while (checked.passed < size) {
        const qsizetype n = framing.feed(data + checked.passed, size - checked.passed, 1);
        checked.passed += n;
        if (framing.failed() || checked.passed == size)
            break;
        TAXICORE_FUZZ_CHECK(framing.hasPendingHead()); // stopped early: the dispatcher takes one
        checked.headStarts.push_back(framing.pendingHeadStart());
        framing.takeHead();
    }
    while (framing.hasPendingHead()) {
        checked.headStarts.push_back(framing.pendingHeadStart());
        framing.takeHead();
    }
    return checked;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t length)
{
    static const ConnectionLimits limits = fuzzLimits();
    const char *data = reinterpret_cast<const char *>(bytes);
    const qsizetype size = qsizetype(length);
    const Checked checked = check(limits, data, size);

    // From every head the check found, as the guard reads one whose start it has reached.
    for (std::size_t head = 0; head < checked.headStarts.size(); ++head) {
        const long long at = checked.headStarts[head];
        TAXICORE_FUZZ_CHECK(at >= 0 && at < size && (head == 0 || at > checked.headStarts[head - 1]));
        const char *begin = data + at;
        PlainRequest request;
        const qsizetype n = readPlainRequest(QByteArrayView(begin, size - at), request);
        TAXICORE_FUZZ_CHECK(n >= 0 && n <= size - at);
        if (n == 0)
            continue; // Qt's to read
        TAXICORE_FUZZ_CHECK(inside(request.target, begin, n) && inside(request.path, begin, n));
        TAXICORE_FUZZ_CHECK(inside(request.acceptEncoding, begin, n) && inside(request.ifNoneMatch, begin, n));
        TAXICORE_FUZZ_CHECK(inside(request.authorization, begin, n) && inside(request.forwardedFor, begin, n));
        TAXICORE_FUZZ_CHECK(inside(request.body, begin, n));
        TAXICORE_FUZZ_CHECK(request.target.startsWith(request.path) && request.path.startsWith('/'));
        TAXICORE_FUZZ_CHECK(request.hasQuery == (request.target.size() > request.path.size()));
        TAXICORE_FUZZ_CHECK(request.body.isEmpty() || request.body.data() + request.body.size() == begin + n);
        // The same request from its own bytes alone, and not whole one byte short.
        PlainRequest alone;
        TAXICORE_FUZZ_CHECK(readPlainRequest(QByteArrayView(begin, n), alone) == n);
        TAXICORE_FUZZ_CHECK(alone.method == request.method && alone.body.size() == request.body.size());
        TAXICORE_FUZZ_CHECK(readPlainRequest(QByteArrayView(begin, n - 1), alone) == 0);
        // The check's next head starts where this request ends, after blank lines at most.
        if (head + 1 < checked.headStarts.size()) {
            const long long next = checked.headStarts[head + 1];
            TAXICORE_FUZZ_CHECK(next >= at + n);
            for (long long i = at + n; i < next; i += 2)
                TAXICORE_FUZZ_CHECK(i + 1 < next && data[i] == '\r' && data[i + 1] == '\n');
        }
    }
    return 0;
}
