// Fuzzes the body of POST /api/v1/bookings through the readers TaxiApi::createBooking uses
// (server/http/RequestInput): either a 400 naming the problem or an order the fleet can take.

#include "ApiAnswerCheck.h"
#include "region/RegionLayout.h"
#include "wire/RequestInput.h"

using namespace taxicore;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ApiRequest request;
    request.body = fuzz::bytesOf(data, size);
    try {
        const BookingOrder order = readBookingOrder(readJsonObject(request));
        // The rider id must fit the shared region's fixed slot, NUL included.
        TAXICORE_FUZZ_CHECK(!order.riderId.isEmpty() && order.riderId.toUtf8().size() < kRiderIdBytes);
        TAXICORE_FUZZ_CHECK(serviceArea().contains(order.pickup));
        TAXICORE_FUZZ_CHECK(!order.dropoff || serviceArea().contains(*order.dropoff));
    } catch (const ApiException &refused) {
        fuzz::checkClientError(refused.response);
    }
    return 0;
}
