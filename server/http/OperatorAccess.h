#pragma once

#include "http/HttpTypes.h"

namespace taxicore {

// Operator endpoints (/admin/...) are answered only to loopback clients; anyone else gets 403.
void requireOperator(const ApiRequest &request);

} // namespace taxicore
