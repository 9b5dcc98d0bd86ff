#pragma once
// Where an instruction stands in a device's program, by its action string ("0F3"): the tests
// that drag, edit or step through plans name instructions as the user sees them.
#include "core/schedule/Plan.h"

namespace mario::test {

// The index of `action` in device `device`'s program, or -1 when it is not there.
inline int indexOf(const Plan& plan, int device, const char* action) {
    const auto& program = plan.devices[device].program;
    for (int i = 0; i < static_cast<int>(program.size()); ++i)
        if (toActionString(program[i]) == action) return i;
    return -1;
}

}  // namespace mario::test
