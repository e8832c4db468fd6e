#include "RequestPlan.h"

namespace taxicore::bench {

ResponseClass classifyStatus(int status)
{
    return status >= 200 && status < 300 ? ResponseClass::Success : ResponseClass::HttpError;
}

ResponseClass RequestSource::onResponse(int status, std::string_view)
{
    return classifyStatus(status);
}

} // namespace taxicore::bench
