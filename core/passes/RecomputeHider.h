#pragma once
// The search inside hide-recompute (HideRecompute.cpp runs it from several starts): on one
// plan, within one memory budget per device, it places each recomputation where it costs least
// on its device. Three kinds of step, each keeping the plan valid and never making the step
// longer:
//  - move earlier: an R moves up to stand before an earlier receive that the device waited on,
//    so it runs in that bubble. Its activations then live from there to its backward, so the
//    move is checked against the budget, and kept when the timeline says the step did not grow.
//  - move later: an R on a longest path of the timeline moves toward its backward, to stand
//    before one of the next receives in its window or right before the backward, whichever
//    makes the step shortest; kept only when the step gets shorter. Places are tried only past
//    a send whose message some device waited for (nothing else can start earlier). It frees
//    memory, so it needs no budget check. Without it an R that stands early (in a plan written
//    by hand, imported, or edited) could only be dropped: on random valid plans whose Rs stood
//    early hide ended up to 22.7% above the exhaustive optimum (issue 30).
//  - drop: an R that delays its backward goes, and its forward keeps its activations, where the
//    budget holds them. Removing work never delays anything in this execution model, so a drop
//    needs no simulation, only a memory check over the program.
// Moves are tried one at a time, device after device, on an incremental timeline
// (sim/IncrementalTimeline.h): a kept move re-times a few dozen instructions, a losing one is
// given up as soon as its delay provably lengthens the step. (Batches split by bisection, as
// prepose-forward tries its moves, were slower here: a losing batch delays the whole rest of
// the step, and every bisection level re-times it.)
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/passes/PassReport.h"
#include "core/passes/TriedMoves.h"
#include "core/passes/WindowPeaks.h"
#include "core/schedule/Plan.h"
#include "core/schedule/StageMicrobatchTable.h"
#include "core/sim/IncrementalTimeline.h"
#include "core/util/Result.h"

namespace mario {

class RecomputeHider {
public:
    // `timeline`: the plan's simulation as it stands (not deadlocked). `maxSimulations` 0: no cap.
    RecomputeHider(Plan& plan, IncrementalTimeline timeline, const std::vector<double>& budget,
                   const std::atomic<bool>* cancel, int maxSimulations);

    // `dropsFirst`: drop what is exposed before the first moves (see hideRecompute).
    Result<PassReport> run(bool dropsFirst);

    // The simulation of the plan as the search leaves it.
    const IncrementalTimeline& timeline() const { return current_; }

private:
    struct Move {
        int device = 0;
        std::size_t from = 0;  // the R's index
        std::size_t to = 0;    // the index it has after the move (either side of `from`)
        Instruction recompute;
    };
    // What the earlier moves need of a device's program, kept up to date move by move (a move
    // touches only the range it rotates) instead of rebuilt per trial: O(L) per trial was most
    // of hide's time on 32 × 128 plans.
    struct ProgramIndex {
        bool fresh = false;
        WindowPeaks levels;                                        // memoryLevels of the program
        StageMicrobatchTable forwardAt;                            // (stage, micro-batch) -> index of its F, or -1
        std::vector<std::size_t> recomputes;                       // where the Rs stand, ascending
    };
    bool stopped() const;
    double budgetOf(int device) const;
    bool waited(int device, std::size_t receive) const;

    Result<bool> dropExposed(PassReport& report);
    Result<bool> moveEarlier(PassReport& report);
    Result<bool> moveLater(PassReport& report);
    std::optional<Move> firstEarlierMove(int d);
    std::vector<std::size_t> laterTargets(int d, std::size_t r) const;
    std::vector<std::vector<double>> chainsAfter();

    ProgramIndex& indexOf(int d);
    void indexMoved(const Move& move);

    // Applies the moves and re-times: kept when the step ends no later than before (and below
    // `keepBelow` when given), undone otherwise.
    Result<bool> tryMoves(const std::vector<Move>& moves, std::optional<double> keepBelow = std::nullopt);
    // The step with `move` applied, or nothing when it would end after `giveUpAbove`; undone.
    Result<std::optional<double>> measure(const Move& move, double giveUpAbove);
    void apply(const Move& move);
    void revert(const Move& move);

    Plan& plan_;
    const std::vector<double>& budget_;
    const std::vector<double> statics_;  // per device: hide moves and drops Rs, never static memory
    const std::atomic<bool>* cancel_;
    int maxSimulations_;
    int simulations_ = 0;
    IncrementalTimeline current_;
    TriedMoves tried_;       // (device, R's stage, R's micro-batch, receive it was tried before)
    TriedMoves triedLater_;  // the same, `at`: the instruction the R was tried before
    std::vector<std::size_t> cursor_;                  // per device: the first receive still worth a look
    std::vector<ProgramIndex> indices_;
};

}  // namespace mario
