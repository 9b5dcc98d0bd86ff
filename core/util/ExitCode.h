#pragma once
// The exit codes of every program in the project (`mario`, `mario-executor`,
// `mario-workbench --screenshot`): one table, so a script that drives them can tell a bad
// file from a deadlock from a failed run the same way whichever program it ran.
namespace mario {

enum ExitCode : int {
    kOk = 0,
    kBadInput = 2,     // unreadable, malformed or out-of-range input; also the last-resort handler
    kDeadlock = 3,     // the plan deadlocks (the message names the chain of waits)
    kNothingFits = 4,  // the tuner found no configuration under the memory limit (capacity: not even MIN)
    kRunFailed = 5,    // a run started and a worker or rank failed (the message names which)
};

}  // namespace mario
