// Colour by kind, micro-batch, chunk or direction: what buildTimeline records per box (the
// placements are the schemes' published ones, written out here), the styles and legend
// entries of each mode, and the pixels the Gantt plottable paints.
#include <QtTest>
#include <memory>
#include <qcustomplot.h>

#include "tests/views/ViewTestPlans.h"
#include "views/BoxBatcher.h"
#include "views/ColorMode.h"
#include "views/GanttPlottable.h"

using namespace mario;
using namespace mario::views;

namespace {

Plan chunkedPlan(Scheme scheme, int devices, int microbatches, int chunks) {
    auto plan = test::makeUnitPlan(scheme, devices, microbatches, chunks);
    if (!plan) qFatal("%s", plan.error().message.c_str());
    return std::move(plan).value();
}

Timeline timelineOf(const Plan& plan) { return buildTimeline(plan, viewtest::simulate(plan)); }

QStringList labels(const std::vector<LegendEntry>& entries) {
    QStringList list;
    for (const LegendEntry& entry : entries) list << entry.label;
    return list;
}

}  // namespace

class ColorModeTest : public QObject {
    Q_OBJECT
private slots:
    void interleavedChunksFollowTheStages();
    void vShapeHasTwoChunksOneDirection();
    void chimeraHasTwoDirections();
    void groupsCycleAndSharedKindsStayPut();
    void kindModeKeepsTodaysColours();
    void otherModesKeepKindsReadable();
    void legendNamesWhatOccurs();
    void legendCyclesManyMicrobatches();
    void plottablePaintsTheMicrobatchColour();
    void batcherSortsBoxesIntoSlots();
};

void ColorModeTest::interleavedChunksFollowTheStages() {
    // Interleaved, 2 devices, 2 chunks: stage s on device s mod 2, so device 0 holds stages 0
    // (chunk 0) and 2 (chunk 1), device 1 stages 1 and 3. One chain: one direction.
    const Timeline timeline = timelineOf(chunkedPlan(Scheme::Interleaved, 2, 4, 2));
    int seen = 0;
    for (const auto& lane : timeline.lanes)
        for (const TimelineBox& box : lane) {
            if (box.kind == BoxKind::Wait || box.kind == BoxKind::Optimizer) continue;
            QCOMPARE(int(box.chunk), box.stage / 2);
            QCOMPARE(int(box.direction), 0);
            ++seen;
        }
    QVERIFY(seen > 0);
    QCOMPARE(timeline.pipelineEnds, (std::vector<std::pair<int, int>>{{0, 1}}));
}

void ColorModeTest::vShapeHasTwoChunksOneDirection() {
    // ZB-V, 2 devices: one chain of 4 stages in a V, device d holding d and 3 − d.
    const Timeline timeline = timelineOf(chunkedPlan(Scheme::Zbv, 2, 4, 1));
    for (const auto& lane : timeline.lanes)
        for (const TimelineBox& box : lane) {
            if (box.kind == BoxKind::Wait || box.kind == BoxKind::Optimizer) continue;
            QCOMPARE(int(box.chunk), box.stage < 2 ? 0 : 1);
            QCOMPARE(int(box.direction), 0);
        }
    QCOMPARE(timeline.pipelineEnds, (std::vector<std::pair<int, int>>{{0, 0}}));
}

void ColorModeTest::chimeraHasTwoDirections() {
    // Chimera, 4 devices: the down chain is stages 0..3 on devices 0..3, the up chain
    // stages 4..7 on devices 3..0.
    const Timeline timeline = timelineOf(chunkedPlan(Scheme::Chimera, 4, 4, 1));
    bool both[2] = {false, false};
    for (const auto& lane : timeline.lanes)
        for (const TimelineBox& box : lane) {
            if (box.kind == BoxKind::Wait || box.kind == BoxKind::Optimizer || box.kind == BoxKind::ReduceGrad)
                continue;
            QCOMPARE(int(box.direction), box.stage < 4 ? 0 : 1);
            both[box.direction] = true;
        }
    QVERIFY(both[0] && both[1]);
    QCOMPARE(timeline.pipelineEnds, (std::vector<std::pair<int, int>>{{0, 3}, {3, 0}}));
    QCOMPARE(labels(legendEntries(ColorMode::Direction, timeline)).mid(0, 2),
             (QStringList{QString::fromUtf8("pipeline 0: device 0 \u2192 3"),
                          QString::fromUtf8("pipeline 1: device 3 \u2192 0")}));
}

void ColorModeTest::groupsCycleAndSharedKindsStayPut() {
    TimelineBox box;
    box.kind = BoxKind::Forward;
    box.microbatch = 13;
    box.chunk = 1;
    box.direction = 1;
    QCOMPARE(colorGroupOf(box, ColorMode::Kind), 0);
    QCOMPARE(colorGroupOf(box, ColorMode::Microbatch), 3);  // ten colours: 13 → 3
    QCOMPARE(colorGroupOf(box, ColorMode::Chunk), 1);
    QCOMPARE(colorGroupOf(box, ColorMode::Direction), 1);
    for (BoxKind shared : {BoxKind::Wait, BoxKind::Optimizer, BoxKind::ReduceGrad}) {
        box.kind = shared;
        QCOMPARE(colorGroupOf(box, ColorMode::Microbatch), 0);
    }
}

void ColorModeTest::kindModeKeepsTodaysColours() {
    for (int k = 0; k < int(BoxKind::Count); ++k) {
        const auto kind = static_cast<BoxKind>(k);
        const BoxStyle style = boxStyle(kind, 0, ColorMode::Kind);
        QCOMPARE(style.fill, colorOf(kind));
        QCOMPARE(style.overlay.style(), overlayOf(kind).style());
        QCOMPARE(style.text, textColorOn(kind));
    }
}

void ColorModeTest::otherModesKeepKindsReadable() {
    // Micro-batch 0 is Tableau's blue #4E79A7, micro-batch 1 its orange #F28E2B.
    const BoxStyle f0 = boxStyle(BoxKind::Forward, 0, ColorMode::Microbatch);
    QCOMPARE(f0.fill, QColor(0x4E, 0x79, 0xA7));
    QCOMPARE(boxStyle(BoxKind::Forward, 1, ColorMode::Microbatch).fill, QColor(0xF2, 0x8E, 0x2B));
    // The kind moves to lightness and pattern: backward lighter than forward, weight
    // gradient lighter still; checkpointed forward hatched, recompute cross-hatched.
    const BoxStyle b0 = boxStyle(BoxKind::Backward, 0, ColorMode::Microbatch);
    const BoxStyle w0 = boxStyle(BoxKind::BackwardWeight, 0, ColorMode::Microbatch);
    QVERIFY(b0.fill.lightnessF() > f0.fill.lightnessF());
    QVERIFY(w0.fill.lightnessF() > b0.fill.lightnessF());
    QCOMPARE(b0.fill.hslHue(), f0.fill.hslHue());
    QCOMPARE(boxStyle(BoxKind::CheckpointedForward, 0, ColorMode::Microbatch).overlay.style(), Qt::BDiagPattern);
    QCOMPARE(boxStyle(BoxKind::Recompute, 0, ColorMode::Microbatch).overlay.style(), Qt::DiagCrossPattern);
    QCOMPARE(f0.overlay.style(), Qt::NoBrush);
    // Chunk and direction modes start from Okabe–Ito blue and orange / vermilion.
    QCOMPARE(boxStyle(BoxKind::Forward, 1, ColorMode::Chunk).fill, QColor(0xE6, 0x9F, 0x00));
    QCOMPARE(boxStyle(BoxKind::Forward, 1, ColorMode::Direction).fill, QColor(0xD5, 0x5E, 0x00));
    // The optimizer belongs to no micro-batch: it keeps its kind colour.
    QCOMPARE(boxStyle(BoxKind::Optimizer, 0, ColorMode::Microbatch).fill, colorOf(BoxKind::Optimizer));
}

void ColorModeTest::legendNamesWhatOccurs() {
    // Figure 2: 4 micro-batches, forwards and backwards (no recomputation, free links: no waits
    // on device 0's first forwards, but other devices wait).
    const Plan plan = viewtest::unitPlan(Scheme::OneFOneB, 4, 4);
    const Timeline timeline = timelineOf(plan);
    const QStringList byMicrobatch = labels(legendEntries(ColorMode::Microbatch, timeline));
    QCOMPARE(byMicrobatch.mid(0, 6), (QStringList{"micro-batch 0", "micro-batch 1", "micro-batch 2", "micro-batch 3",
                                                  "forward (full colour)", "backward (light)"}));
    QVERIFY(byMicrobatch.contains("waiting (RECV)"));
    const QStringList byKind = labels(legendEntries(ColorMode::Kind, timeline));
    QVERIFY(byKind.startsWith("forward"));
    QVERIFY(byKind.contains("backward"));
    QVERIFY(!byKind.contains("recompute"));
    // One chain, one chunk per device.
    QCOMPARE(labels(legendEntries(ColorMode::Chunk, timeline)).first(), QStringLiteral("chunk 0"));
    QCOMPARE(labels(legendEntries(ColorMode::Direction, timeline)).first(),
             QString::fromUtf8("pipeline 0: device 0 \u2192 3"));
}

void ColorModeTest::legendCyclesManyMicrobatches() {
    const Timeline timeline = timelineOf(viewtest::unitPlan(Scheme::OneFOneB, 2, 25));
    const QStringList list = labels(legendEntries(ColorMode::Microbatch, timeline));
    // 25 micro-batches over ten colours: 0, 10, 20 share one; 5, 15 another.
    QCOMPARE(list[0], QStringLiteral("micro-batches 0, 10, 20"));
    QCOMPARE(list[5], QStringLiteral("micro-batches 5, 15"));
    QCOMPARE(list[9], QStringLiteral("micro-batches 9, 19"));
    const Timeline many = timelineOf(viewtest::unitPlan(Scheme::OneFOneB, 2, 64));
    QCOMPARE(labels(legendEntries(ColorMode::Microbatch, many))[1],
             QString::fromUtf8("micro-batches 1, 11, 21, \u2026"));
}

void ColorModeTest::plottablePaintsTheMicrobatchColour() {
    const Plan plan = viewtest::unitPlan(Scheme::OneFOneB, 4, 4);
    const Timeline timeline = timelineOf(plan);
    QCustomPlot plot;
    plot.resize(900, 400);
    auto* boxes = new GanttPlottable(plot.xAxis, plot.yAxis);
    boxes->setTimeline(&timeline);
    boxes->setColorMode(ColorMode::Microbatch);
    plot.xAxis->setRange(0, timeline.makespan);
    plot.yAxis->setRange(-0.5, 3.5);
    plot.replot();
    const QImage image = plot.toPixmap(900, 400).toImage();
    // Device 0 runs F0..F3 over [0,4] (1F1B's warm-up): each forward in its micro-batch's
    // colour, sampled a little inside its left edge (the number sits in the middle).
    const QColor expected[] = {QColor(0x4E, 0x79, 0xA7), QColor(0xF2, 0x8E, 0x2B), QColor(0xE1, 0x57, 0x59),
                               QColor(0x76, 0xB7, 0xB2)};
    for (int mb = 0; mb < 4; ++mb) {
        const int x = qRound(plot.xAxis->coordToPixel(mb + 0.15));
        const int y = qRound(plot.yAxis->coordToPixel(0.0));
        QCOMPARE(image.pixelColor(x, y), expected[mb]);
    }
    boxes->setColorMode(ColorMode::Kind);
    plot.replot();
    const QImage kinds = plot.toPixmap(900, 400).toImage();
    QCOMPARE(kinds.pixelColor(qRound(plot.xAxis->coordToPixel(1.15)), qRound(plot.yAxis->coordToPixel(0.0))),
             colorOf(BoxKind::Forward));
}

void ColorModeTest::batcherSortsBoxesIntoSlots() {
    const Timeline timeline = timelineOf(viewtest::unitPlan(Scheme::OneFOneB, 4, 4));
    VisibleWindow window;
    window.lowKey = 0;
    window.highKey = timeline.makespan;
    window.clipLeft = 0;
    window.clipRight = 2100;
    window.toPixel = {0, 100};  // 100 px per time unit: no box is folded
    BoxBatcher batcher;
    batcher.setColorMode(ColorMode::Microbatch);
    batcher.clear();
    batcher.addLane(timeline.lanes[0], window, 0, 20, false, timeline.makespan);
    // Device 0 runs one forward and one backward of each of the 4 micro-batches.
    for (int mb = 0; mb < 4; ++mb) {
        QCOMPARE(batcher.slotRects(BoxBatcher::slotOf(BoxKind::Forward, mb)).size(), 1);
        QCOMPARE(batcher.slotRects(BoxBatcher::slotOf(BoxKind::Backward, mb)).size(), 1);
    }
    QCOMPARE(batcher.slotCount(), 10 * int(BoxKind::Count));
    batcher.setColorMode(ColorMode::Kind);
    batcher.clear();
    batcher.addLane(timeline.lanes[0], window, 0, 20, false, timeline.makespan);
    QCOMPARE(batcher.rects(BoxKind::Forward).size(), 4);
    QCOMPARE(batcher.slotCount(), int(BoxKind::Count));
}

QTEST_MAIN(ColorModeTest)
#include "tst_color_mode.moc"
