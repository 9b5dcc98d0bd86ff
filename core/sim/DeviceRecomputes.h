#pragma once
// One device of a plan seen without its recomputations, as the recompute bound
// (core/sim/RecomputeBound.h) reads it: where each R's forward and backward stand, how long
// the R runs and what keeping its forward's activations instead costs, and how many forwards'
// full activations the memory budget has room for at every point of the program.
//
// The memory program is the device's program with every R just before its backward, where a
// kept R costs the least memory; an R dropped instead holds its forward's activations over
// [memoryFrom, memoryTo) there.
#include <cstddef>
#include <vector>

#include "core/schedule/Plan.h"

namespace mario {

// Rs of more sizes than this on one device are all counted at the smallest.
constexpr std::size_t kMostSizes = 8;

struct Recomputation {
    std::size_t forward = 0, backward = 0;  // indices in the program without its Rs
    double ms = 0;
    std::size_t memoryFrom = 0, memoryTo = 0;  // [from, to) in the memory program
    double extraBytes = 0;                     // what keeping the activations instead costs
    int size = 0;                              // into DeviceRecomputes::capacityBySize
};

struct DeviceRecomputes {
    std::vector<Recomputation> rs;                   // those whose backward is on the device
    std::vector<std::vector<std::size_t>> endingAt;  // per instruction: the Rs (into rs) it is the backward of
    std::vector<std::size_t> backwards;              // the instructions that are, in program order
    std::vector<double> ms;                          // per instruction: its compute time
    std::vector<double> workBefore;                  // per instruction, and one past the end: the compute before it
    std::vector<std::size_t> memoryAt;               // per instruction: where it stands in the memory program
    // Per point of the memory program: how many forwards' activations fit above what is held
    // there, each at the device's smallest extra (so never too few).
    std::vector<int> capacity;
    // Where the Rs come in several sizes (a V's or Chimera's two stages): per size, smallest
    // first, how many of that size alone fit at each point. Empty with one size, more than
    // kMostSizes, or no limit.
    std::vector<std::vector<int>> capacityBySize;
    // The most Rs that can go at once: the dropped ones' intervals packed under `capacity`.
    int droppable = 0;
};

// `plan` with its Rs and `bare` the same plan without them; `room`: the device's budget less
// its static bytes (infinite: no limit).
DeviceRecomputes describeRecomputes(const Plan& plan, const Plan& bare, std::size_t device, double room);

}  // namespace mario
