#include "MachineInfo.h"

#include <sys/utsname.h>

#include <fstream>
#include <thread>

namespace taxicore::bench {

MachineInfo MachineInfo::current()
{
    MachineInfo info;
    info.cores = static_cast<int>(std::thread::hardware_concurrency());
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
        if (line.rfind("model name", 0) == 0) {
            const std::size_t colon = line.find(':');
            if (colon != std::string::npos)
                info.cpuModel = line.substr(line.find_first_not_of(' ', colon + 1));
            break;
        }
    }
    utsname names{};
    if (uname(&names) == 0)
        info.kernel = std::string(names.sysname) + " " + names.release;
    return info;
}

} // namespace taxicore::bench
