// Fuzzes the connection guard's framing check (server/http/RequestFraming) the way
// ConnectionGuard drives it: a connection's bytes arrive in reads of any size, and whenever the
// check stops early (an upgrade head, too many heads ahead) the dispatcher takes a head and it
// goes on. The stream is checked twice, whole and cut in three reads where the first two input
// bytes say: the verdict and the heads must not depend on where the reads end.

#include "FuzzChecks.h"
#include "wire/RequestFraming.h"

#include <algorithm>
#include <vector>

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

struct Run {
    FramingError error;
    qsizetype consumed = 0;
    std::vector<RequestTraits> heads;
    std::vector<long long> starts; // where each head starts in the stream
};

// Feeds `data` in reads ending at `cuts`, taking heads as a dispatcher would.
Run check(const ConnectionLimits &limits, const char *data, qsizetype size, std::vector<qsizetype> cuts)
{
    Run run;
    RequestFraming framing(limits);
    cuts.push_back(size);
    qsizetype begin = 0;
    for (qsizetype end : cuts) {
        end = std::max(begin, std::min(end, size));
        while (begin < end) {
            const qsizetype n = framing.feed(data + begin, end - begin, 1 + begin);
            TAXICORE_FUZZ_CHECK(n >= 0 && n <= end - begin);
            begin += n;
            run.consumed += n;
            if (framing.failed() || begin == end)
                break;
            // Stopped early: only ever to wait for the dispatcher, which takes the oldest head.
            TAXICORE_FUZZ_CHECK(framing.hasPendingHead());
            run.starts.push_back(framing.pendingHeadStart());
            run.heads.push_back(framing.takeHead());
        }
        if (framing.failed())
            break;
    }
    TAXICORE_FUZZ_CHECK(framing.headsAhead() >= 0 && framing.headsAhead() <= RequestFraming::kMaxHeadsAhead);
    while (framing.hasPendingHead()) {
        run.starts.push_back(framing.pendingHeadStart());
        run.heads.push_back(framing.takeHead());
    }
    run.error = framing.error();
    return run;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    static const ConnectionLimits limits = fuzzLimits();
    const char *bytes = reinterpret_cast<const char *>(data + 2);
    const auto length = qsizetype(size - 2);
    const qsizetype first = data[0] % (length + 1);
    const qsizetype second = first + data[1] % (length - first + 1);

    const Run whole = check(limits, bytes, length, {});
    const Run pieces = check(limits, bytes, length, {first, second});
    if (whole.error.refused()) {
        const int s = whole.error.status;
        TAXICORE_FUZZ_CHECK(s == 400 || s == 413 || s == 414 || s == 431);
        TAXICORE_FUZZ_CHECK(*whole.error.code != '\0' && *whole.error.message != '\0');
    } else {
        TAXICORE_FUZZ_CHECK(whole.consumed == length);
    }
    // Where the reads end changes nothing: same refusal at the same byte, same heads.
    TAXICORE_FUZZ_CHECK(whole.error.status == pieces.error.status);
    TAXICORE_FUZZ_CHECK(whole.consumed == pieces.consumed);
    TAXICORE_FUZZ_CHECK(whole.heads.size() == pieces.heads.size());
    for (std::size_t i = 0; i < whole.heads.size(); ++i) {
        TAXICORE_FUZZ_CHECK(whole.heads[i].http10 == pieces.heads[i].http10);
        TAXICORE_FUZZ_CHECK(whole.heads[i].wantsClose == pieces.heads[i].wantsClose);
        TAXICORE_FUZZ_CHECK(whole.starts[i] == pieces.starts[i]); // the direct path's anchors (fuzz_plain_request)
    }
    return 0;
}
