#pragma once

#include <string>

namespace taxicore::bench {

// The machine a result was measured on: figures from different machines do not compare.
struct MachineInfo {
    int cores = 0;
    std::string cpuModel;
    std::string kernel;

    static MachineInfo current();
};

} // namespace taxicore::bench
