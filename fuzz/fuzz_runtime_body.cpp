// Fuzzes the body of PUT /admin/v1/runtime through what the AdminApi handler does with it:
// readJsonObject, then RuntimeSettings::mergedWith on top of the current settings.

#include "ApiAnswerCheck.h"
#include "wire/RequestInput.h"
#include "control/RuntimeSettings.h"

using namespace taxicore;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ApiRequest request;
    request.body = fuzz::bytesOf(data, size);
    QJsonObject json;
    try {
        json = readJsonObject(request);
    } catch (const ApiException &refused) {
        fuzz::checkClientError(refused.response);
        return 0;
    }
    const RuntimeSettings current{RuntimeMode::Pool, 2, 4, DistributionPolicy::RoundRobin};
    QString error;
    const std::optional<RuntimeSettings> wanted = current.mergedWith(json, error);
    if (!wanted) {
        TAXICORE_FUZZ_CHECK(!error.isEmpty()); // the 400 names the bad field
        return 0;
    }
    TAXICORE_FUZZ_CHECK(wanted->workers >= 1 && wanted->workers <= kMaxWorkerProcesses);
    TAXICORE_FUZZ_CHECK(wanted->threads >= 1 && wanted->threads <= kMaxPoolThreads);
    // What was accepted survives the round trip the primary's mailbox makes.
    TAXICORE_FUZZ_CHECK(RuntimeSettings{}.mergedWith(wanted->toJson(), error) == wanted);
    return 0;
}
