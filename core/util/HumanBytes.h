#pragma once
// "1.03 KB", "23.24 GB": decimal units, two decimals above bytes; beyond a thousand TB three
// significant digits ("2.1e+13 TB"), so an absurd size still reads as one short word. One
// wording for the CLI, the workbench's summary and its compare window, and the executor's
// memory refusals.
#include <cstdio>
#include <string>

namespace mario {

inline std::string humanBytes(double bytes) {
    const char* units[] = {"B", "KB", "MB", "GB", "TB"};
    int unit = 0;
    while (bytes >= 1000 && unit < 4) {
        bytes /= 1000;
        ++unit;
    }
    char text[48];
    std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : bytes >= 1000 ? "%.3g %s" : "%.2f %s", bytes, units[unit]);
    return text;
}

}  // namespace mario
