// parallel.layer_split in the window: the settings panel's layer-split box, chosen by mouse
// and keys, rebuilds the schedule with the balanced split, the device table lists each
// device's layers as the core's answer worked out here by brute force over every split, and
// Ctrl+Z brings the even split back.
#include <QAbstractItemView>
#include <QComboBox>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <limits>
#include <qcustomplot.h>

#include <nlohmann/json.hpp>

#include "app/gui/ConfigPanel.h"
#include "app/gui/MainWindow.h"
#include "app/gui/ScheduleDocument.h"
#include "app/gui/SummaryPanel.h"
#include "core/io/ConfigJson.h"
#include "core/session/PlanBuilder.h"
#include "views/GanttView.h"

using namespace mario;
using namespace mario::gui;

namespace {

const QString kProfilesDir = QStringLiteral(MARIO_TEST_SOURCE_DIR "/profiles");
constexpr int kLayersColumn = 1;

// GPT-3 1.6B (32 layers, a 51 200-word head) in 1F1B on 4 A100s: the head makes the last stage
// the heaviest of an even split, so the balanced split differs from it.
nlohmann::json gptConfig() {
    return {{"format", "mario-config"},
            {"version", 1},
            {"model", "gpt3-1.6b"},
            {"hardware", "a100-40g"},
            {"parallel", {{"scheme", "1f1b"}, {"pp", 4}, {"micro_batch_size", 1}, {"global_batch_size", 8}}}};
}

// Brute force over every split of the layers into four positions of at least one layer: the
// smallest largest F + B + R, ties to the split nearest to 8-8-8-8; stage costs one at a time.
std::vector<int> bruteForceBalanced(const Config& config) {
    const int layers = config.model.layers;
    auto load = [&](int p, int k) {
        const auto cost = computeStageCosts(config, {StageLayout{0, k, p == 0, p == 3}});
        return (*cost)[0].forward_ms + (*cost)[0].backward_ms + (*cost)[0].recompute_ms;
    };
    std::vector<std::vector<double>> table(4, std::vector<double>(layers + 1));
    for (int p = 0; p < 4; ++p)
        for (int k = 1; k <= layers; ++k) table[p][k] = load(p, k);
    double best = std::numeric_limits<double>::infinity();
    std::vector<int> chosen;
    int nearest = std::numeric_limits<int>::max();
    for (int pass = 0; pass < 2; ++pass)
        for (int a = 1; a < layers; ++a)
            for (int b = 1; a + b < layers; ++b)
                for (int c = 1; a + b + c < layers; ++c) {
                    const std::vector<int> split{a, b, c, layers - a - b - c};
                    double worst = 0;
                    for (int p = 0; p < 4; ++p) worst = std::max(worst, table[p][split[p]]);
                    if (pass == 0) {
                        best = std::min(best, worst);
                        continue;
                    }
                    if (worst > best * (1 + 1e-9)) continue;
                    int moved = 0;
                    for (int k : split) moved += std::abs(k - layers / 4);
                    if (moved < nearest) nearest = moved, chosen = split;
                }
    return chosen;
}

QStringList layerCells(MainWindow& window) {
    auto* table = window.summary()->findChild<QTableView*>("deviceTable");
    QStringList cells;
    for (int row = 0; table && row < table->model()->rowCount(); ++row)
        cells << table->model()->index(row, kLayersColumn).data().toString();
    return cells;
}

QStringList cellsOf(const std::vector<int>& counts) {
    QStringList cells;
    int begin = 0;
    for (int k : counts) {
        cells << QStringLiteral("%1–%2 (%3)").arg(begin).arg(begin + k - 1).arg(k);
        begin += k;
    }
    return cells;
}

}  // namespace

class LayerSplitWindowTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        qputenv("MARIO_PROFILES_DIR", kProfilesDir.toUtf8());
    }

    void balancedChosenByMouseShowsTheBruteForceSplitAndUndoRestoresEven() {
        QTemporaryDir dir;
        const QString path = dir.filePath("gpt.config.json");
        {
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(QByteArray::fromStdString(gptConfig().dump(2)));
        }
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));  // Ctrl+Z reaches the Edit menu's Undo
        window.document()->setSynchronous(true);
        QVERIFY2(window.openFile(path), qPrintable(window.errorText()));
        QCOMPARE(layerCells(window), cellsOf({8, 8, 8, 8}));

        const PresetLibrary presets(kProfilesDir.toStdString());
        auto config = readConfig(gptConfig(), presets);
        QVERIFY(config.ok());
        const std::vector<int> expected = bruteForceBalanced(*config);
        QVERIFY(expected != (std::vector<int>{8, 8, 8, 8}));

        QComboBox* split = window.configPanel()->layerSplitBox();
        QCOMPARE(split->currentText(), QStringLiteral("even"));
        QTest::mouseClick(split, Qt::LeftButton);
        QTRY_VERIFY(split->view()->isVisible());
        QTest::keyClick(split->view(), Qt::Key_Down);
        QTest::keyClick(split->view(), Qt::Key_Return);
        QTRY_COMPARE_WITH_TIMEOUT(window.document()->state().config->parallel.layer_split.kind,
                                  LayerSplitKind::Balanced, 3000);
        QTRY_COMPARE_WITH_TIMEOUT(layerCells(window), cellsOf(expected), 3000);

        const int undoable = window.document()->undoStack()->index();
        QVERIFY(undoable > 0);
        window.activateWindow();  // the combo's popup had the focus
        QVERIFY(QTest::qWaitForWindowActive(&window));
        window.gantt()->setFocus();  // Ctrl+Z from the chart: the document's undo
        QTRY_VERIFY(window.gantt()->plot()->hasFocus());
        QTest::qWait(100);
        QTest::keyClick(window.gantt(), Qt::Key_Z, Qt::ControlModifier);
        QTRY_COMPARE(window.document()->undoStack()->index(), undoable - 1);
        QTRY_COMPARE_WITH_TIMEOUT(layerCells(window), cellsOf({8, 8, 8, 8}), 3000);
        QCOMPARE(split->currentText(), QStringLiteral("even"));
        QVERIFY(window.document()->state().config->parallel.layer_split.isEven());
    }

    // A file that says "search" opens with its split searched; the box names it, and an edit of
    // another setting (the global batch, typed) keeps "search" rather than turning it to even.
    void aSearchedSplitFromTheFileSurvivesAnotherSettingsEdit() {
        QTemporaryDir dir;
        const QString path = dir.filePath("gpt-search.config.json");
        nlohmann::json json = gptConfig();
        json["parallel"]["layer_split"] = "search";
        {
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(QByteArray::fromStdString(json.dump(2)));
        }
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.document()->setSynchronous(true);
        QVERIFY2(window.openFile(path), qPrintable(window.errorText()));
        QComboBox* split = window.configPanel()->layerSplitBox();
        QCOMPARE(split->currentText(), QStringLiteral("as in the file: search (with the file's passes)"));

        auto* global = window.configPanel()->findChild<QSpinBox*>("globalBatch");
        QVERIFY(global);
        QVERIFY(global->isEnabled());
        QTest::mouseDClick(global, Qt::LeftButton);
        QTest::keyClick(global, Qt::Key_A, Qt::ControlModifier);
        QTest::keyClicks(global, "12");
        QTest::keyClick(global, Qt::Key_Return);
        QTRY_COMPARE_WITH_TIMEOUT(window.document()->state().config->parallel.global_batch_size, 12, 3000);
        QCOMPARE(window.document()->state().config->parallel.layer_split.kind, LayerSplitKind::Search);
        QCOMPARE(split->currentText(), QStringLiteral("as in the file: search (with the file's passes)"));
    }
};

QTEST_MAIN(LayerSplitWindowTest)
#include "layer_split_window_test.moc"
