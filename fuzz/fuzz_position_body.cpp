// Fuzzes the body of PUT /api/v1/cars/{id}/position through the readers TaxiApi::putPosition
// uses (server/http/RequestInput): either a 400 naming the problem or a report within range.

#include "ApiAnswerCheck.h"
#include "wire/RequestInput.h"

#include <cmath>

using namespace taxicore;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ApiRequest request;
    request.body = fuzz::bytesOf(data, size);
    try {
        const PositionReport report = readPositionReport(readJsonObject(request));
        TAXICORE_FUZZ_CHECK(serviceArea().contains(report.position));
        TAXICORE_FUZZ_CHECK(std::isfinite(report.heading) && report.heading >= 0 && report.heading <= 360);
        TAXICORE_FUZZ_CHECK(std::isfinite(report.speedKmh) && report.speedKmh >= 0 && report.speedKmh <= 250);
        // The fleet stores them as floats: they must stay finite there too.
        TAXICORE_FUZZ_CHECK(std::isfinite(float(report.heading)) && std::isfinite(float(report.speedKmh)));
    } catch (const ApiException &refused) {
        fuzz::checkClientError(refused.response);
    }
    return 0;
}
