// Timeline: which instructions become boxes, of which kind, in which order; the palette.
#include <QSet>
#include <QtTest>

#include "tests/views/ViewTestPlans.h"
#include "views/Timeline.h"

using namespace mario;
using namespace mario::views;

class TimelineTest : public QObject {
    Q_OBJECT
private slots:
    void computeAndWaitsBecomeBoxes();
    void lanesAreSortedAndFindable();
    void checkpointedForwardsAreMarked();
    void waitBoxesSayWhatTheyWaitedFor();
    void paletteIsDistinct();
};

void TimelineTest::computeAndWaitsBecomeBoxes() {
    const Plan plan = viewtest::unitPlan(Scheme::OneFOneB, 4, 4);
    const SimResult sim = viewtest::simulate(plan);
    const Timeline timeline = buildTimeline(plan, sim);
    QCOMPARE(timeline.lanes.size(), std::size_t(4));
    QCOMPARE(timeline.makespan, sim.makespan_ms);
    // Counted straight from the plan and the timings, independently of buildTimeline.
    for (int d = 0; d < 4; ++d) {
        const auto& program = plan.devices[d].program;
        int forwards = 0, backwards = 0, waits = 0, other = 0;
        for (std::size_t i = 0; i < program.size(); ++i) {
            const auto& timing = sim.devices[d].timings[i];
            if (timing.end <= timing.start) continue;
            switch (program[i].op) {
                case Op::Forward: ++forwards; break;
                case Op::Backward: ++backwards; break;
                case Op::RecvForward:
                case Op::RecvBackward: ++waits; break;
                default: ++other;
            }
        }
        QCOMPARE(forwards, 4);  // every micro-batch, unit cost 1 > 0
        QCOMPARE(backwards, 4);
        int seenF = 0, seenB = 0, seenWait = 0, seenOther = 0;
        for (const TimelineBox& box : timeline.lanes[d]) {
            QCOMPARE(box.lane, d);
            QVERIFY(box.end > box.start);
            if (box.kind == BoxKind::Forward) ++seenF;
            else if (box.kind == BoxKind::Backward) ++seenB;
            else if (box.kind == BoxKind::Wait) ++seenWait;
            else ++seenOther;
        }
        QCOMPARE(seenF, forwards);
        QCOMPARE(seenB, backwards);
        QCOMPARE(seenWait, waits);
        QCOMPARE(seenOther, other);
    }
    // In 1F1B the last device waits 3 forward-times for its first activation.
    QVERIFY(!timeline.lanes[3].empty());
    QCOMPARE(timeline.lanes[3].front().kind, BoxKind::Wait);
    QCOMPARE(timeline.lanes[3].front().end, 3.0);
}

void TimelineTest::lanesAreSortedAndFindable() {
    const Plan plan = viewtest::unitPlan(Scheme::Chimera, 4, 8);
    const Timeline timeline = buildTimeline(plan, viewtest::simulate(plan));
    QVERIFY(timeline.boxCount() > 0);
    for (const auto& lane : timeline.lanes) {
        for (std::size_t i = 1; i < lane.size(); ++i) {
            QVERIFY(lane[i - 1].start <= lane[i].start);
            QVERIFY(lane[i - 1].end <= lane[i].start + 1e-12);  // one device, one thing at a time
        }
        for (const TimelineBox& box : lane) {
            const TimelineBox* found = timeline.find({box.lane, box.program_index});
            QVERIFY(found == &box);
        }
    }
    QVERIFY(timeline.find({0, -1}) == nullptr);
    QVERIFY(timeline.find({99, 0}) == nullptr);
}

void TimelineTest::checkpointedForwardsAreMarked() {
    Plan plan = viewtest::unitPlan(Scheme::OneFOneB, 4, 4);
    viewtest::applyPasses(plan, "checkpoint");
    const Timeline timeline = buildTimeline(plan, viewtest::simulate(plan));
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        // A forward is checkpointed exactly when its (stage, mb) has an R in the program.
        QSet<QPair<int, int>> recomputed;
        for (const Instruction& ins : plan.devices[d].program)
            if (ins.op == Op::Recompute) recomputed.insert({ins.stage, ins.microbatch});
        int checkpointedBoxes = 0, recomputeBoxes = 0;
        for (const TimelineBox& box : timeline.lanes[d]) {
            if (box.kind == BoxKind::CheckpointedForward) {
                ++checkpointedBoxes;
                QVERIFY(recomputed.contains({box.stage, box.microbatch}));
            }
            if (box.kind == BoxKind::Forward) QVERIFY(!recomputed.contains({box.stage, box.microbatch}));
            if (box.kind == BoxKind::Recompute) ++recomputeBoxes;
        }
        QCOMPARE(checkpointedBoxes, static_cast<int>(recomputed.size()));
        QCOMPARE(recomputeBoxes, static_cast<int>(recomputed.size()));
    }
}

void TimelineTest::waitBoxesSayWhatTheyWaitedFor() {
    const Plan plan = viewtest::unitPlan(Scheme::OneFOneB, 4, 4);
    const Timeline timeline = buildTimeline(plan, viewtest::simulate(plan));
    // Device 2's first wait is for stage 1's activation of micro-batch 0, sent by device 1.
    const TimelineBox& wait = timeline.lanes[2].front();
    QCOMPARE(wait.kind, BoxKind::Wait);
    QCOMPARE(actionOf(wait), QStringLiteral("2RECV_F0"));
    QVERIFY(wait.note >= 0);
    QCOMPARE(timeline.notes[wait.note], QStringLiteral("the activation 1SEND_F0 from device 1"));
}

void TimelineTest::paletteIsDistinct() {
    QSet<QRgb> colors;
    QSet<QString> labels;
    for (int k = 0; k < static_cast<int>(BoxKind::Count); ++k) {
        colors.insert(colorOf(static_cast<BoxKind>(k)).rgb());
        labels.insert(labelOf(static_cast<BoxKind>(k)));
    }
    QCOMPARE(colors.size(), static_cast<int>(BoxKind::Count));
    QCOMPARE(labels.size(), static_cast<int>(BoxKind::Count));
    QVERIFY(overlayOf(BoxKind::CheckpointedForward).style() != Qt::NoBrush);
    QCOMPARE(overlayOf(BoxKind::Forward).style(), Qt::NoBrush);
    QCOMPARE(textColorOn(BoxKind::Forward), QColor(Qt::white));  // dark blue fill
}

QTEST_GUILESS_MAIN(TimelineTest)
#include "tst_timeline.moc"
