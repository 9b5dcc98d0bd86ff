#include "executor/MemoryLimits.h"

#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "executor/ProcFiles.h"

namespace mario::exec {
namespace {

namespace fs = std::filesystem;

// "MemAvailable:   22505772 kB" (kernels since 3.14 have it).
std::optional<double> memAvailable(const std::string& meminfo) {
    std::istringstream lines(meminfo);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("MemAvailable:", 0) != 0) continue;
        std::istringstream fields(line.substr(13));
        double value = 0;
        std::string unit;
        if (!(fields >> value)) return std::nullopt;
        fields >> unit;
        return unit == "kB" ? value * 1024 : value;
    }
    return std::nullopt;
}

// A cgroup limit file's number of bytes; none for "max" (v2's no limit) and v1's stand-in for no
// limit (the largest page-aligned 64-bit number, 9223372036854771712).
std::optional<double> limitBytes(const fs::path& file) {
    auto text = readProcText(file);
    if (!text) return std::nullopt;
    std::istringstream in(*text);
    double value = 0;
    if (!(in >> value) || value <= 0 || value >= 4.6e18) return std::nullopt;
    return value;
}

// The tightest limit of the cgroup at `path` and its ancestors under `mount`. A cgroup namespace
// can show a path that is not under the mount (the process's cgroup is the mount's root then);
// the walk reaches the mount's own file either way.
std::optional<double> tightestLimit(const fs::path& mount, std::string path, const std::string& file) {
    std::optional<double> tightest;
    while (true) {
        const auto limit = limitBytes(mount / fs::path(path).relative_path() / file);
        if (limit && (!tightest || *limit < *tightest)) tightest = limit;
        if (path.empty() || path == "/") break;
        const auto slash = path.find_last_of('/');
        path = slash == std::string::npos ? "" : path.substr(0, slash);
    }
    return tightest;
}

// From /proc/self/cgroup: "0::/path" (v2) or "4:memory:/path" (v1's memory controller).
std::optional<double> cgroupLimit(const fs::path& root) {
    const auto table = readProcText(underRoot(root, "/proc/self/cgroup"));
    if (!table) return std::nullopt;
    std::optional<double> tightest;
    auto keep = [&tightest](std::optional<double> limit) {
        if (limit && (!tightest || *limit < *tightest)) tightest = limit;
    };
    std::istringstream lines(*table);
    for (std::string line; std::getline(lines, line);) {
        const auto first = line.find(':'), second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos) continue;
        const std::string controllers = line.substr(first + 1, second - first - 1), path = line.substr(second + 1);
        if (line.substr(0, first) == "0" && controllers.empty())
            keep(tightestLimit(underRoot(root, "/sys/fs/cgroup"), path, "memory.max"));
        std::istringstream names(controllers);
        for (std::string name; std::getline(names, name, ',');)
            if (name == "memory")
                keep(tightestLimit(underRoot(root, "/sys/fs/cgroup/memory"), path, "memory.limit_in_bytes"));
    }
    return tightest;
}

}  // namespace

Result<MemoryLimit> hostMemoryLimit(const fs::path& root) {
    const auto meminfo = readProcText(underRoot(root, "/proc/meminfo"));
    // -1: unknown (plain doubles: GCC's -Wmaybe-uninitialized misreads two optionals compared).
    const double available = meminfo ? memAvailable(*meminfo).value_or(-1) : -1;
    const double cgroup = cgroupLimit(root).value_or(-1);
    if (cgroup > 0 && (available < 0 || cgroup < available))
        return MemoryLimit{cgroup, "this process's memory cgroup allows"};
    if (available >= 0) return MemoryLimit{available, "this machine has available"};
    return makeError(meminfo ? "/proc/meminfo has no MemAvailable line" : "/proc/meminfo cannot be read");
}

}  // namespace mario::exec
