#include "app/gui/ScheduleDifference.h"

#include <QObject>
#include <QStringList>
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

namespace mario::gui {
namespace {

// What an instruction is on its device, with its occurrence among equal ones.
using Key = std::tuple<int, int, int, int>;  // op, stage, micro-batch, occurrence

struct Compute {
    int index = 0;  // in the device's program
    Key key;
};

std::vector<Compute> computeOf(const Plan& plan, std::size_t device) {
    std::vector<Compute> out;
    if (device >= plan.devices.size()) return out;
    std::map<std::tuple<int, int, int>, int> seen;
    const auto& program = plan.devices[device].program;
    for (std::size_t i = 0; i < program.size(); ++i) {
        const Instruction& ins = program[i];
        if (!isCompute(ins.op)) continue;
        const int occurrence = seen[{static_cast<int>(ins.op), ins.stage, ins.microbatch}]++;
        out.push_back({static_cast<int>(i), Key{static_cast<int>(ins.op), ins.stage, ins.microbatch, occurrence}});
    }
    return out;
}

std::optional<double> startOf(const SimResult& result, std::size_t device, int index) {
    if (device >= result.devices.size()) return std::nullopt;
    const auto& timings = result.devices[device].timings;
    if (index < 0 || static_cast<std::size_t>(index) >= timings.size()) return std::nullopt;
    return timings[static_cast<std::size_t>(index)].start;
}

}  // namespace

int ScheduleDifference::total() const {
    int sum = 0;
    for (const DeviceDifference& d : devices) sum += d.total();
    return sum;
}

ScheduleDifference compareSchedules(const Plan& a, const SimResult& resultA, const Plan& b, const SimResult& resultB) {
    ScheduleDifference out;
    const std::size_t devices = std::max(a.devices.size(), b.devices.size());
    out.devices.resize(devices);
    // Rounding in two simulations of the same times must not read as a difference.
    const double tolerance = 1e-9 * std::max({resultA.makespan_ms, resultB.makespan_ms, 1e-3});
    for (std::size_t d = 0; d < devices; ++d) {
        const std::vector<Compute> inA = computeOf(a, d), inB = computeOf(b, d);
        out.computeA += static_cast<int>(inA.size());
        out.computeB += static_cast<int>(inB.size());
        std::map<Key, int> positionInB;  // key → index into inB
        for (std::size_t j = 0; j < inB.size(); ++j) positionInB[inB[j].key] = static_cast<int>(j);
        // Ranks among the instructions both have, in each device order.
        std::vector<int> rankOfB(inB.size(), -1);
        std::vector<int> matchOfA(inA.size(), -1);
        for (std::size_t i = 0; i < inA.size(); ++i)
            if (auto it = positionInB.find(inA[i].key); it != positionInB.end()) matchOfA[i] = it->second;
        int rank = 0;
        std::vector<bool> matchedB(inB.size(), false);
        for (int j : matchOfA)
            if (j >= 0) matchedB[static_cast<std::size_t>(j)] = true;
        for (std::size_t j = 0; j < inB.size(); ++j)
            if (matchedB[j]) rankOfB[j] = rank++;
        rank = 0;
        DeviceDifference& diff = out.devices[d];
        const int lane = static_cast<int>(d);
        for (std::size_t i = 0; i < inA.size(); ++i) {
            const int j = matchOfA[i];
            if (j < 0) {
                ++diff.onlyInA;
                out.inA.push_back({lane, inA[i].index});
                continue;
            }
            const Compute& other = inB[static_cast<std::size_t>(j)];
            const bool moved = rankOfB[static_cast<std::size_t>(j)] != rank++;
            const auto startA = startOf(resultA, d, inA[i].index), startB = startOf(resultB, d, other.index);
            const bool retimed = startA && startB && std::abs(*startA - *startB) > tolerance;
            if (!moved && !retimed) continue;
            ++(moved ? diff.moved : diff.retimed);
            out.inA.push_back({lane, inA[i].index});
            out.inB.push_back({lane, other.index});
        }
        for (std::size_t j = 0; j < inB.size(); ++j)
            if (!matchedB[j]) {
                ++diff.onlyInB;
                out.inB.push_back({lane, inB[j].index});
            }
    }
    return out;
}

QString describeDifferences(const ScheduleDifference& difference, int listedDevices) {
    const int total = difference.total();
    if (total == 0)
        return QObject::tr("Both schedules run every compute instruction in the same order at the same time.");
    int moved = 0, retimed = 0, onlyA = 0, onlyB = 0;
    for (const DeviceDifference& d : difference.devices) {
        moved += d.moved;
        retimed += d.retimed;
        onlyA += d.onlyInA;
        onlyB += d.onlyInB;
    }
    QStringList kinds;
    if (moved) kinds << QObject::tr("%1 moved in their device's order").arg(moved);
    if (retimed) kinds << QObject::tr("%1 start at another time").arg(retimed);
    if (onlyA) kinds << QObject::tr("%1 only in A").arg(onlyA);
    if (onlyB) kinds << QObject::tr("%1 only in B").arg(onlyB);
    QStringList perDevice;
    int listed = 0, differing = 0;
    for (std::size_t d = 0; d < difference.devices.size(); ++d) {
        const int n = difference.devices[d].total();
        if (n == 0) continue;
        ++differing;
        if (listed < listedDevices) {
            perDevice << QObject::tr("device %1: %2").arg(d).arg(n);
            ++listed;
        }
    }
    if (differing > listed) perDevice << QStringLiteral("…");
    const QString count = total == 1 ? QObject::tr("1 compute instruction differs")
                                     : QObject::tr("%1 compute instructions differ").arg(total);
    return QObject::tr("%1 (%2) — %3")
        .arg(count, kinds.join(QStringLiteral(", ")), perDevice.join(QStringLiteral(", ")));
}

}  // namespace mario::gui
