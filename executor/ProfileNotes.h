#pragma once
// The descriptive half of a profile document (`mario-executor profile`): its notes, which say how
// every number was measured, and its source, every measured point (alone and beside busy
// neighbours) with every fit's R². The numbers the simulator reads go through core's
// ProfileJson; these are what a person reading the file reads. Torch-free.
#include <string>

#include <nlohmann/json.hpp>

#include "executor/Profiler.h"

namespace mario::exec {

// Where and how a profile was measured, beyond its options.
struct ProfileSetting {
    std::string place;  // "cuda:0, SM partition 0 of 4 × 32 SMs", "cpu"
    bool cuda = false;
    bool partitioned = false;
    int intra_op_threads = 1;
    int neighbours = 0;  // busy neighbours each block stage was measured beside (0: alone only)
};

std::string profileNotes(const ProfileOptions& options, const ProfileSetting& setting);

// {"tool", "r2", "points"} and, with neighbours, "contention": the busy points and the result.
nlohmann::json profileSource(const ProfileResult& result, int neighbours);

}  // namespace mario::exec
