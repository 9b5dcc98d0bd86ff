#include "core/sim/Validator.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <unordered_map>

#include "core/schedule/PipelineTopology.h"
#include "core/sim/DeadlockExplainer.h"
#include "core/sim/Simulator.h"
#include "core/sim/StepFlops.h"

namespace mario {
namespace {

std::string programPath(int device, int index) {
    return "devices[" + std::to_string(device) + "].program[" + std::to_string(index) + "]";
}

// Position of each kind of instruction for every (stage, micro-batch) that occurs in the plan,
// -1 when absent. Sparse on purpose: a plan of N instructions can name N micro-batches on
// thousands of stages, and dense stages × micro-batches tables made a 260 KB plan take 6 GB.
class Positions {
public:
    static constexpr int kKinds = 9;  // Op values 0..8 carry micro-batches
    explicit Positions(std::size_t expected) { slots_.reserve(expected); }
    int& at(Op op, int stage, int microbatch) {
        return slots_[stageMicrobatchKey(stage, microbatch)][static_cast<int>(op)];
    }
    int get(Op op, int stage, int microbatch) const {
        const auto it = slots_.find(stageMicrobatchKey(stage, microbatch));
        return it == slots_.end() ? -1 : it->second[static_cast<int>(op)];
    }
    // Every (stage, micro-batch) with an instruction, stage-major: the order issues are reported in.
    std::vector<std::pair<int, int>> pairs() const {
        std::vector<std::pair<int, int>> out;
        out.reserve(slots_.size());
        for (const auto& [k, slots] : slots_)
            out.emplace_back(static_cast<int>(k >> 32), static_cast<int>(k & 0xffffffffu));
        std::sort(out.begin(), out.end());
        return out;
    }

private:
    struct Slots {
        std::array<int, kKinds> at;
        Slots() { at.fill(-1); }
        int& operator[](int kind) { return at[kind]; }
        int operator[](int kind) const { return at[kind]; }
    };
    std::unordered_map<std::uint64_t, Slots> slots_;
};

// A broken plan can have a problem at nearly every instruction; the report keeps the first
// ones and stops looking, so that checking stays linear and the message stays one line.
constexpr std::size_t kMaxIssues = 100;

class StructureChecker {
public:
    StructureChecker(const Plan& plan, const PipelineTopology& topology)
        : plan_(plan), topology_(topology), positions_(plan.instructionCount() / 2) {}

    std::vector<PlanIssue> run() {
        if (collect()) {
            for (const auto& [s, m] : positions_.pairs()) {
                if (full()) {
                    truncated_ = true;
                    break;
                }
                checkPair(s, m);
            }
            checkChains();
            checkGradientSync();
        }
        if (truncated_)
            issues_.push_back({"", "the check stopped after the first " + std::to_string(kMaxIssues) + " problems"});
        return issues_;
    }

private:
    void add(std::string path, std::string message) {
        if (full()) {
            truncated_ = true;
            return;
        }
        issues_.push_back({std::move(path), std::move(message)});
    }
    bool full() const { return issues_.size() >= kMaxIssues; }
    int pos(Op op, int s, int m) const { return positions_.get(op, s, m); }

    bool collect() {
        for (int d = 0; d < static_cast<int>(plan_.devices.size()); ++d) {
            const auto& program = plan_.devices[d].program;
            for (int i = 0; i < static_cast<int>(program.size()); ++i) {
                const Instruction& ins = program[i];
                // Worded only for a problem: building the path for every instruction was a
                // sixteenth of `mario simulate`'s whole process on a valid 1F1B 8 × 32 (issue 45).
                auto where = [&] { return programPath(d, i); };
                if (ins.stage < 0 || ins.stage >= topology_.stageCount()) {
                    add(where(), "\"" + toActionString(ins) + "\" names stage " + std::to_string(ins.stage) +
                                   ", which does not exist");
                    continue;
                }
                if (topology_.deviceOf(ins.stage) != d) {
                    add(where(), "\"" + toActionString(ins) + "\" belongs to stage " + std::to_string(ins.stage) +
                                   " on device " + std::to_string(topology_.deviceOf(ins.stage)) + ", not device " +
                                   std::to_string(d));
                    continue;
                }
                if (ins.overlapped) checkOverlap(program, d, i);
                if (!hasMicrobatch(ins.op)) continue;
                int& slot = positions_.at(ins.op, ins.stage, ins.microbatch);
                if (slot >= 0) add(where(), "\"" + toActionString(ins) + "\" appears twice on this device");
                slot = i;
            }
        }
        return issues_.empty();
    }

    // An overlapped pair is a forward and the backward right after it (Instruction.h).
    void checkOverlap(const std::vector<Instruction>& program, int d, int i) {
        const Instruction& ins = program[i];
        if (ins.op != Op::Forward)
            add(programPath(d, i), "\"" + toActionString(ins) + "\" is marked overlapped; only a forward opens a pair");
        else if (i + 1 >= static_cast<int>(program.size()) || !canCloseOverlap(program[i + 1].op))
            add(programPath(d, i),
                "\"" + toActionString(ins) + "\" opens an overlapped pair, but " +
                    (i + 1 < static_cast<int>(program.size()) ? "\"" + toActionString(program[i + 1]) + "\" follows it"
                                                              : std::string("nothing follows it")) +
                    " (a pair needs a backward, B or I, right after its forward)");
    }

    // Order and presence on the owning device for one (stage, micro-batch).
    void checkPair(int s, int m) {
        const int d = topology_.deviceOf(s);
        const int f = pos(Op::Forward, s, m), r = pos(Op::Recompute, s, m), b = pos(Op::Backward, s, m);
        const int in = pos(Op::BackwardInput, s, m), w = pos(Op::BackwardWeight, s, m);
        const bool any = f >= 0 || r >= 0 || b >= 0 || in >= 0 || w >= 0;
        if (!any) {
            for (Op op : {Op::SendForward, Op::RecvForward, Op::SendBackward, Op::RecvBackward})
                if (pos(op, s, m) >= 0)
                    add(programPath(d, pos(op, s, m)), "communication for stage " + std::to_string(s) +
                                                           " micro-batch " + std::to_string(m) +
                                                           " without its compute");
            return;
        }
        auto name = [&](Op op) { return toActionString({op, s, m}); };
        const std::string deviceText = "device " + std::to_string(d);
        if (f < 0)
            add("devices[" + std::to_string(d) + "].program", name(Op::Forward) + " is missing on " + deviceText);
        const bool split = in >= 0 || w >= 0;
        const int backward = split ? in : b;
        if (split && b >= 0) add(programPath(d, b), name(Op::Backward) + " and a split backward (I/W) both appear");
        if (split && (in < 0 || w < 0))
            add("devices[" + std::to_string(d) + "].program",
                (in < 0 ? name(Op::BackwardInput) : name(Op::BackwardWeight)) + " is missing: I and W come in pairs");
        if (!split && b < 0)
            add("devices[" + std::to_string(d) + "].program", name(Op::Backward) + " is missing on " + deviceText);
        if (f >= 0 && backward >= 0 && backward < f)
            add(programPath(d, backward),
                name(split ? Op::BackwardInput : Op::Backward) + " comes before " + name(Op::Forward));
        if (split && in >= 0 && w >= 0 && w < in)
            add(programPath(d, w), name(Op::BackwardWeight) + " comes before " + name(Op::BackwardInput));
        if (r >= 0 && ((f >= 0 && r < f) || (backward >= 0 && r > backward)))
            add(programPath(d, r), name(Op::Recompute) + " must stand after " + name(Op::Forward) + " and before " +
                                       name(split ? Op::BackwardInput : Op::Backward));
        checkLink(s, m, f, Op::RecvForward, Op::SendForward, topology_.previousStage(s), true);
        checkLink(s, m, backward, Op::RecvBackward, Op::SendBackward, topology_.nextStage(s), false);
        checkLocalOrder(s, m, f, topology_.previousStage(s), true);
        checkLocalOrder(s, m, backward, topology_.nextStage(s), false);
    }

    // Neighbouring stages on one device (V placement's turn, a one-device interleaving) pass
    // their data without SEND/RECV, so program order alone must put the producer first.
    void checkLocalOrder(int s, int m, int computeAt, int source, bool forwardDirection) {
        const int d = topology_.deviceOf(s);
        if (source < 0 || computeAt < 0 || topology_.deviceOf(source) != d) return;
        int sourceAt = pos(Op::Forward, source, m);
        if (!forwardDirection) {
            sourceAt = pos(Op::BackwardInput, source, m);
            if (sourceAt < 0) sourceAt = pos(Op::Backward, source, m);
        }
        if (sourceAt < 0 || sourceAt < computeAt) return;  // a missing one is reported on its own
        const Instruction& needs = plan_.devices[d].program[computeAt];
        const Instruction& producer = plan_.devices[d].program[sourceAt];
        add(programPath(d, computeAt), "\"" + toActionString(needs) + "\" comes before \"" + toActionString(producer) +
                                           "\", whose output it needs (both on device " + std::to_string(d) + ")");
    }

    // The RECV into (s, m) in one direction and the SEND out of its neighbour.
    void checkLink(int s, int m, int computeAt, Op recvOp, Op sendOp, int source, bool forwardDirection) {
        const int d = topology_.deviceOf(s);
        const int recv = pos(recvOp, s, m);
        const bool remote = source >= 0 && topology_.deviceOf(source) != d;
        const Instruction recvIns{recvOp, s, m};
        if (!remote) {
            if (recv >= 0)
                add(programPath(d, recv), "\"" + toActionString(recvIns) + "\" receives from no other device");
        } else {
            const int sd = topology_.deviceOf(source);
            const int send = pos(sendOp, source, m);
            const Instruction sendIns{sendOp, source, m};
            if (recv < 0 && computeAt >= 0)
                add(programPath(d, computeAt), "missing " + toActionString(recvIns) +
                                                   " before it: its input comes from device " + std::to_string(sd));
            if (recv >= 0 && computeAt >= 0 && recv > computeAt)
                add(programPath(d, recv),
                    "\"" + toActionString(recvIns) + "\" comes after the instruction that needs it");
            if (recv >= 0 && send < 0)
                add(programPath(d, recv), "\"" + toActionString(recvIns) + "\" has no matching " +
                                              toActionString(sendIns) + " on device " + std::to_string(sd));
            if (send >= 0 && recv < 0)
                add(programPath(sd, send), "\"" + toActionString(sendIns) + "\" has no matching " +
                                               toActionString(recvIns) + " on device " + std::to_string(d));
        }
        // A SEND must follow the compute that produces what it sends.
        const int producerStage = s;
        const Op producesOp = forwardDirection ? Op::SendForward : Op::SendBackward;
        const int send = pos(producesOp, producerStage, m);
        const int target = forwardDirection ? topology_.nextStage(s) : topology_.previousStage(s);
        if (send >= 0) {
            if (target < 0 || topology_.deviceOf(target) == d)
                add(programPath(d, send), "\"" + toActionString({producesOp, s, m}) + "\" sends to no other device");
            else if (computeAt >= 0 && send < computeAt)
                add(programPath(d, send),
                    "\"" + toActionString({producesOp, s, m}) + "\" comes before the instruction that produces it");
        }
    }

    // REDUCE_GRAD and OPT of a stage come once each, after every backward of that stage, and
    // the all-reduce before the optimizer step; otherwise the step would use partial gradients.
    // collect() has put every instruction on its stage's device, so one entry per stage will
    // do (per-device tables would be devices × stages).
    void checkGradientSync() {
        const int stages = topology_.stageCount();
        std::vector<int> lastBackward(stages, -1), reduceAt(stages, -1), optimizerAt(stages, -1);
        std::vector<std::vector<int>> stagesOf(plan_.devices.size());
        for (int s = 0; s < stages; ++s) stagesOf[topology_.deviceOf(s)].push_back(s);
        for (int d = 0; d < static_cast<int>(plan_.devices.size()); ++d) {
            const auto& program = plan_.devices[d].program;
            for (int i = 0; i < static_cast<int>(program.size()); ++i) {
                const Instruction& ins = program[i];
                if (ins.stage < 0 || ins.stage >= stages) continue;
                if (ins.op == Op::Backward || ins.op == Op::BackwardWeight) lastBackward[ins.stage] = i;
                if (ins.op != Op::ReduceGrad && ins.op != Op::Optimizer) continue;
                int& at = ins.op == Op::ReduceGrad ? reduceAt[ins.stage] : optimizerAt[ins.stage];
                if (at >= 0) add(programPath(d, i), "\"" + toActionString(ins) + "\" appears twice on this device");
                at = i;
            }
            for (int s : stagesOf[d]) {
                for (int at : {reduceAt[s], optimizerAt[s]})
                    if (at >= 0 && at < lastBackward[s])
                        add(programPath(d, at), "\"" + toActionString(program[at]) + "\" comes before " +
                                                    toActionString(program[lastBackward[s]]) +
                                                    ", a backward of its stage");
                if (reduceAt[s] >= 0 && optimizerAt[s] >= 0 && optimizerAt[s] < reduceAt[s])
                    add(programPath(d, optimizerAt[s]),
                        "\"" + toActionString(program[optimizerAt[s]]) + "\" comes before its stage's REDUCE_GRAD");
            }
        }
    }

    // Each micro-batch flows through exactly one whole chain. Only micro-batches with a
    // forward are visited, and the scan stops once the report is full: linear in the plan.
    void checkChains() {
        std::vector<std::pair<int, int>> forwards;  // (micro-batch, stage), one per forward
        for (const auto& [s, m] : positions_.pairs())
            if (pos(Op::Forward, s, m) >= 0) forwards.emplace_back(m, s);
        std::sort(forwards.begin(), forwards.end());
        for (std::size_t first = 0; first < forwards.size();) {
            if (full()) {
                truncated_ = true;
                return;
            }
            const int m = forwards[first].first;
            std::size_t last = first;
            const int chain = topology_.chainOf(forwards[first].second);
            for (; last < forwards.size() && forwards[last].first == m; ++last)
                if (topology_.chainOf(forwards[last].second) != chain) {
                    add("pipelines", "micro-batch " + std::to_string(m) + " runs forwards in two chains");
                    return;
                }
            for (int s : topology_.chains()[chain]) {
                if (full()) {
                    truncated_ = true;
                    return;
                }
                if (pos(Op::Forward, s, m) < 0)
                    add("devices[" + std::to_string(topology_.deviceOf(s)) + "].program",
                        "micro-batch " + std::to_string(m) + " skips stage " + std::to_string(s) + " of its chain");
            }
            first = last;
        }
    }

    const Plan& plan_;
    const PipelineTopology& topology_;
    Positions positions_;
    std::vector<PlanIssue> issues_;
    bool truncated_ = false;
};

}  // namespace

std::string ValidationReport::summary() const {
    if (!issues.empty()) {
        std::string text = issues.front().text();
        if (issues.size() > 1) text += " (and " + std::to_string(issues.size() - 1) + " more)";
        return text;
    }
    if (!deadlock.empty()) return "deadlock: " + describeDeadlock(deadlock);
    return "valid";
}

std::vector<PlanIssue> Validator::checkStructure(const Plan& plan) {
    for (int d = 0; d < static_cast<int>(plan.devices.size()); ++d)
        if (plan.devices[d].index != d)
            return {{"devices[" + std::to_string(d) + "].index",
                     "expected " + std::to_string(d) + ", got " + std::to_string(plan.devices[d].index)}};
    for (int s = 0; s < static_cast<int>(plan.stages.size()); ++s)
        if (plan.stages[s].index != s)
            return {{"stages[" + std::to_string(s) + "].index",
                     "expected " + std::to_string(s) + ", got " + std::to_string(plan.stages[s].index)}};
    auto topology = PipelineTopology::build(plan);
    if (!topology) return {{"", topology.error().message}};
    const auto limit = static_cast<std::int64_t>(plan.instructionCount());
    for (int d = 0; d < static_cast<int>(plan.devices.size()); ++d)
        for (int i = 0; i < static_cast<int>(plan.devices[d].program.size()); ++i)
            if (plan.devices[d].program[i].microbatch >= limit)
                return {{programPath(d, i), "micro-batch " + std::to_string(plan.devices[d].program[i].microbatch) +
                                                " is out of range (number micro-batches from 0)"}};
    return StructureChecker(plan, *topology).run();
}

ValidationReport Validator::validate(const Plan& plan, const CostNames* names) {
    ValidationReport report;
    report.issues = checkStructure(plan);
    if (!report.issues.empty()) return report;
    // Whether it deadlocks does not depend on durations: one timing, no summary, no contention rounds.
    SimOptions timeline = SimOptions::timelineOnly();
    timeline.names = names;
    auto sim = Simulator::run(plan, timeline);
    if (!sim) {
        report.issues.push_back({"", sim.error().message});
        return report;
    }
    report.deadlock = sim->blocked;
    // What `simulate` refuses, validate refuses too: costs faster than the hardware.
    if (!sim->deadlocked)
        if (auto problem = utilisationProblem(plan, stepFlops(plan, 0), sim->makespan_ms, names))
            report.issues.push_back({"", *problem});
    return report;
}

}  // namespace mario
