#pragma once

namespace taxicore::bench {

#ifdef TAXICORE_VERSION
inline constexpr const char *kBenchVersion = TAXICORE_VERSION;
#else
inline constexpr const char *kBenchVersion = "0.0.0";
#endif

// Bumped whenever a field of the JSON result changes meaning or disappears.
inline constexpr int kResultSchemaVersion = 1;

} // namespace taxicore::bench
