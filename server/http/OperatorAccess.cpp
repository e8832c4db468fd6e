#include "http/OperatorAccess.h"

#include "http/RequestInput.h"

namespace taxicore {

void requireOperator(const ApiRequest &request)
{
    if (!request.remote.isLoopback())
        throwApiError(403, "forbidden", QStringLiteral("operator endpoints are only served to loopback clients"));
}

} // namespace taxicore
