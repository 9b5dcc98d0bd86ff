// The settings panel's cost modes with measured profiles: the costs box lists the library's
// profiles, a chosen profile reaches the document and sets the simulated stage costs, and a
// profile that does not fit the model is refused by name without touching the schedule.
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QWheelEvent>
#include <QtTest>
#include <algorithm>

#include <nlohmann/json.hpp>

#include "app/gui/ConfigPanel.h"
#include "app/gui/MainWindow.h"
#include "app/gui/SummaryPanel.h"
#include "core/io/ConfigJson.h"
#include "tests/app/JsonFiles.h"
#include "views/GanttView.h"

using namespace mario;
using namespace mario::gui;

namespace {

const QString kProfilesDir = QStringLiteral(MARIO_TEST_SOURCE_DIR "/profiles");
const QString kLlamaConfig = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples/llama2-13b-1f1b.config.json");

using test::readJsonObject;

QString profilePath(const QString& fileName) { return QDir::cleanPath(QDir(kProfilesDir).absoluteFilePath(fileName)); }

// The shape cpu-tiny.profile.json was measured on ("layers=8,hidden=32,heads=4,seq=16,vocab=64"),
// inline because no preset is that small; 1F1B over 4 stages of 2 blocks each.
nlohmann::json tinyConfig() {
    return {{"format", "mario-config"},
            {"version", 1},
            {"model",
             {{"name", "tiny"}, {"layers", 8}, {"hidden", 32}, {"heads", 4}, {"vocab", 64}, {"sequence_length", 16}}},
            {"hardware", "a100-40g"},
            {"parallel", {{"scheme", "1f1b"}, {"pp", 4}, {"micro_batch_size", 1}, {"global_batch_size", 8}}},
            {"passes", nlohmann::json::array()}};
}

bool writeFile(const QString& path, const nlohmann::json& document) {
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(QByteArray::fromStdString(document.dump(2))) > 0;
}

}  // namespace

class ConfigPanelTest : public QObject {
    Q_OBJECT
    PresetLibrary presets_{kProfilesDir.toStdString()};

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        // The window's document locates its presets; make it this source tree's, not an install.
        qputenv("MARIO_PROFILES_DIR", kProfilesDir.toUtf8());
    }

    void theCostsBoxListsEveryMeasuredProfile() {
        ConfigPanel panel(presets_);
        const QStringList files = QDir(kProfilesDir).entryList({"*.profile.json"}, QDir::Files, QDir::Name);
        QVERIFY(files.size() >= 2);
        QComboBox* costs = panel.costsBox();
        QCOMPARE(costs->count(), 2 + files.size());
        QCOMPARE(costs->itemText(0), QStringLiteral("analytical"));
        QCOMPARE(costs->itemText(1), QStringLiteral("unit (teaching)"));
        for (int i = 0; i < files.size(); ++i) {
            const QString stem = files[i].chopped(int(qstrlen(".profile.json")));
            QCOMPARE(costs->itemText(2 + i), QStringLiteral("measured: ") + stem);
            QCOMPARE(costs->itemData(2 + i).toString(), profilePath(files[i]));
            const QString tip = costs->itemData(2 + i, Qt::ToolTipRole).toString();
            QVERIFY2(tip.contains(profilePath(files[i])), qPrintable(tip));
            QVERIFY2(tip.contains(readJsonObject(profilePath(files[i])).value("model").toString()), qPrintable(tip));
        }
    }

    void choosingAProfileEmitsItsPathAndAnalyticalClearsIt() {
        ConfigPanel panel(presets_);
        auto config = readConfigFile(kLlamaConfig.toStdString(), presets_);
        QVERIFY(config.ok());
        panel.showConfig(*config);
        QCOMPARE(panel.costsBox()->currentText(), QStringLiteral("analytical"));
        QSignalSpy edited(&panel, &ConfigPanel::configEdited);
        panel.costsBox()->setCurrentText("measured: example-gpt-small");
        QCOMPARE(edited.count(), 0);  // debounced: nothing until the user pauses
        QTRY_COMPARE_WITH_TIMEOUT(edited.count(), 1, 3000);
        const Config measured = edited.last().at(0).value<Config>();
        QCOMPARE(measured.profile.value_or(""), profilePath("example-gpt-small.profile.json").toStdString());
        QVERIFY(!measured.unit_costs && !measured.microbatches);
        QCOMPARE(measured.model.name, std::string("llama2-13b"));
        QVERIFY(panel.findChild<QComboBox*>("model")->isEnabled());  // the profile needs the layer count

        panel.costsBox()->setCurrentText("analytical");
        QTRY_COMPARE_WITH_TIMEOUT(edited.count(), 2, 3000);
        QVERIFY(!edited.last().at(0).value<Config>().profile);

        panel.costsBox()->setCurrentText("unit (teaching)");
        QTRY_COMPARE_WITH_TIMEOUT(edited.count(), 3, 3000);
        const Config unit = edited.last().at(0).value<Config>();
        QVERIFY(unit.unit_costs && !unit.profile);
        QVERIFY(!panel.findChild<QComboBox*>("model")->isEnabled());
    }

    void noLimitNamesTheCardTheVerdictJudgesBy() {
        // The LLaMA example without its limit: "no limit" names one card, the one the memory
        // verdict then judges by, read from the preset files, and follows the hardware box.
        ConfigPanel panel(presets_);
        auto config = readConfigFile(kLlamaConfig.toStdString(), presets_);
        QVERIFY(config.ok());
        config->memory_limit_bytes.reset();
        panel.showConfig(*config);
        auto* memory = panel.findChild<QDoubleSpinBox*>("memory");
        QVERIFY(memory);
        auto cardText = [](const QString& hardware) {
            const double gb =
                readJsonObject(QStringLiteral(MARIO_TEST_SOURCE_DIR "/profiles/hardware/%1.json").arg(hardware))
                    .value("memory_gb")
                    .toDouble();
            return QStringLiteral("no limit (card %1 GB)").arg(gb);
        };
        QCOMPARE(memory->text(), cardText(QString::fromStdString(config->hardware.name)));
        panel.findChild<QComboBox*>("hardware")->setCurrentText("a100-40g");
        QCOMPARE(memory->text(), cardText("a100-40g"));
        // Unit costs have no card.
        panel.costsBox()->setCurrentText("unit (teaching)");
        QCOMPARE(memory->text(), QStringLiteral("no limit"));
    }

    void aConfigWithAProfileSelectsItAndRoundTrips() {
        ConfigPanel panel(presets_);
        nlohmann::json document = tinyConfig();
        document["profile"] = "cpu-tiny";  // the bare name, as the library lists it
        auto config = readConfig(document, presets_);
        QVERIFY2(config.ok(), config.ok() ? "" : config.error().message.c_str());
        panel.showConfig(*config);
        QCOMPARE(panel.costsBox()->currentText(), QStringLiteral("measured: cpu-tiny"));
        QCOMPARE(panel.costsBox()->currentData().toString(), profilePath("cpu-tiny.profile.json"));
        // Inline model included: nothing the panel shows may change the config.
        auto edited = panel.editedConfig();
        QVERIFY(edited);
        QCOMPARE(writeConfig(*edited).dump(), writeConfig(*config).dump());
    }

    void aProfileBesideAConfigGetsItsOwnEntryWhileShown() {
        ConfigPanel panel(presets_);
        const int libraryEntries = panel.costsBox()->count();
        QTemporaryDir dir;
        QVERIFY(QFile::copy(profilePath("cpu-tiny.profile.json"), dir.filePath("mine.profile.json")));
        nlohmann::json document = tinyConfig();
        document["profile"] = "mine.profile.json";
        QVERIFY(writeFile(dir.filePath("tiny.config.json"), document));
        auto config = readConfigFile(dir.filePath("tiny.config.json").toStdString(), presets_);
        QVERIFY2(config.ok(), config.ok() ? "" : config.error().message.c_str());
        panel.showConfig(*config);
        QCOMPARE(panel.costsBox()->count(), libraryEntries + 1);
        QCOMPARE(panel.costsBox()->currentText(), QStringLiteral("measured: mine"));
        QCOMPARE(panel.costsBox()->currentData().toString(), QDir::cleanPath(dir.filePath("mine.profile.json")));
        QCOMPARE(panel.editedConfig()->profile, config->profile);
        // Another config: the entry goes with the file it came from.
        panel.showConfig(*readConfigFile(kLlamaConfig.toStdString(), presets_));
        QCOMPARE(panel.costsBox()->count(), libraryEntries);
        QCOMPARE(panel.costsBox()->currentText(), QStringLiteral("analytical"));
    }

    void aMeasuredProfileSetsTheSimulatedStageCosts() {
        QTemporaryDir dir;
        const QString path = dir.filePath("tiny.config.json");
        QVERIFY(writeFile(path, tinyConfig()));
        MainWindow window;
        window.document()->setSynchronous(true);
        QVERIFY2(window.openFile(path), qPrintable(window.errorText()));
        window.configPanel()->costsBox()->setCurrentText("measured: cpu-tiny");
        QTRY_VERIFY_WITH_TIMEOUT(window.document()->state().config->profile.has_value(), 3000);
        QCOMPARE(QString::fromStdString(*window.document()->state().config->profile),
                 profilePath("cpu-tiny.profile.json"));

        const QJsonObject profile = readJsonObject(profilePath("cpu-tiny.profile.json"));
        const double a = profile["forward_ms"].toObject()["a"].toDouble();
        const double b = profile["forward_ms"].toObject()["b"].toDouble();
        const double embedding = profile["embedding"].toObject()["forward_ms"].toDouble();
        const double head = profile["head"].toObject()["forward_ms"].toDouble();
        QVERIFY(a > 0 && embedding > 0 && head > 0);
        const int blocks = 8 / 4;  // tinyConfig: 8 layers, 1F1B over pp = 4, micro-batch size as profiled
        const double expected[] = {a * blocks + b + embedding, a * blocks + b, a * blocks + b, a * blocks + b + head};

        const ComputedSchedule& shown = window.document()->current();
        QCOMPARE(shown.plan.stages.size(), std::size_t(4));
        for (int s = 0; s < 4; ++s) {
            QCOMPARE(shown.plan.stages[s].layers, std::make_pair(s * blocks, (s + 1) * blocks));
            QCOMPARE(shown.plan.stages[s].cost.forward_ms, expected[s]);
        }
        // The simulator runs each forward for exactly that long.
        for (int device = 0; device < 4; ++device) {
            const auto& program = shown.plan.devices[device].program;
            const auto forward =
                std::find_if(program.begin(), program.end(), [](const Instruction& i) { return i.op == Op::Forward; });
            QVERIFY(forward != program.end());
            const InstructionTiming& timing = shown.result.devices[device].timings[forward - program.begin()];
            QCOMPARE(timing.end - timing.start, expected[device]);
        }
    }

    void materialisedAttentionChosenByKeyKeepsTheScoresAndCostsMemory() {
        // LLaMA-2 13B 1F1B: FlashAttention by default; Down on the focused attention box picks
        // Megatron's materialised scores, which the activations then keep: 5·a·s/h more bytes
        // per s·b·h of every block (Korthikanti et al.), so every stage's activations grow.
        MainWindow window;
        window.document()->setSynchronous(true);
        QVERIFY2(window.openFile(kLlamaConfig), qPrintable(window.errorText()));
        const ComputedSchedule flash = window.document()->current();
        QCOMPARE(flash.plan.info.scheme, std::string("1f1b"));
        auto* attention = window.configPanel()->findChild<QComboBox*>("attention");
        QVERIFY(attention && attention->isEnabled());
        QCOMPARE(attention->currentText(), QStringLiteral("FlashAttention"));
        attention->setFocus();
        QTest::keyClick(attention, Qt::Key_Down);
        QTRY_VERIFY_WITH_TIMEOUT(
            window.document()->state().config->training.attention == TrainingConfig::Attention::Materialized, 3000);
        const ComputedSchedule& kept = window.document()->current();
        const Config& c = *window.document()->state().config;
        const double s = c.model.sequence_length, a = c.model.heads, b = 1;  // LLaMA: no dropout
        for (std::size_t i = 0; i < kept.plan.stages.size(); ++i) {
            const auto [begin, end] = *kept.plan.stages[i].layers;
            const double extra = (end - begin) * 2 * b * a * s * s;  // the softmax output, 2 bytes a score
            const double lse = (end - begin) * 4 * b * a * s;        // FlashAttention's log-sum-exp, gone
            QCOMPARE(kept.plan.stages[i].cost.activation_bytes - flash.plan.stages[i].cost.activation_bytes,
                     extra - lse);
        }
        // The framework-recompute box is there too, and unit costs have nothing to price.
        window.configPanel()->costsBox()->setCurrentText("unit (teaching)");
        QVERIFY(!attention->isEnabled());
        QVERIFY(!window.configPanel()->findChild<QComboBox*>("recompute")->isEnabled());
    }

    void aSchemeTheFileReaderRefusesIsNeverDrawnOrSaved() {
        // GPT-3 13B (40 layers) on 32 devices: zbv needs 64 stages. The CLI refuses that config
        // at once; the window did draw devices doing nothing and saved a file it could not reopen.
        QTemporaryDir dir;
        MainWindow window;
        window.document()->setSynchronous(true);
        QVERIFY(
            window.openFile(QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples/gpt3-13b-chimera.config.json")));
        const double step = window.document()->current().result.makespan_ms;
        QComboBox* scheme = window.configPanel()->schemeBox();
        scheme->setFocus();
        const int zbv = scheme->findText("zbv");
        QVERIFY(zbv >= 0);
        while (scheme->currentIndex() != zbv)
            QTest::keyClick(scheme, scheme->currentIndex() < zbv ? Qt::Key_Down : Qt::Key_Up);
        QTRY_VERIFY_WITH_TIMEOUT(window.errorText().contains("cannot fill the 64 stages"), 3000);
        QCOMPARE(window.document()->current().plan.info.scheme, std::string("chimera"));  // the last valid one
        QCOMPARE(window.document()->current().result.makespan_ms, step);
        const QString saved = dir.filePath("saved.config.json");
        QString error;
        QVERIFY2(window.document()->saveAs(saved, &error), qPrintable(error));
        auto reread = readConfigFile(saved.toStdString(), presets_);
        QVERIFY2(reread.ok(), reread.ok() ? "" : reread.error().message.c_str());
        QCOMPARE(reread->parallel.scheme, Scheme::Chimera);
    }

    void aProfileForAnotherSequenceLengthIsRefusedByName() {
        MainWindow window;
        window.document()->setSynchronous(true);
        QVERIFY(window.openFile(kLlamaConfig));
        const Plan before = window.document()->current().plan;
        const QString stepBefore = window.summary()->stepTimeText();
        const int undoBefore = window.document()->undoStack()->count();

        window.configPanel()->costsBox()->setCurrentText("measured: cpu-tiny");
        QTRY_VERIFY_WITH_TIMEOUT(!window.errorText().isEmpty(), 3000);
        const QString error = window.errorText();
        const int profileSeq = readJsonObject(profilePath("cpu-tiny.profile.json"))["sequence_length"].toInt();
        const int modelSeq = readJsonObject(kProfilesDir + "/models/llama2-13b.json")["sequence_length"].toInt();
        QVERIFY(profileSeq > 0 && modelSeq > 0 && profileSeq != modelSeq);
        QVERIFY2(error.contains("\"cpu-tiny\"") && error.contains("sequence length " + QString::number(profileSeq)) &&
                     error.contains(QString::number(modelSeq)),
                 qPrintable(error));

        // Nothing of the user's schedule is lost: same config, plan, step time and history.
        QVERIFY(!window.document()->state().config->profile);
        QCOMPARE(window.document()->undoStack()->count(), undoBefore);
        QCOMPARE(window.document()->current().plan.devices.size(), before.devices.size());
        for (std::size_t d = 0; d < before.devices.size(); ++d)
            QCOMPARE(window.document()->current().plan.devices[d].program, before.devices[d].program);
        QCOMPARE(window.document()->current().plan.stages.front().cost.forward_ms,
                 before.stages.front().cost.forward_ms);
        QCOMPARE(window.summary()->stepTimeText(), stepBefore);
    }

    // Issue 14: with a plan file (or nothing) open, the greyed-out settings showed another
    // schedule's values (gpt3-1.6b, gpipe, PP 1); now there are none to show.
    void aPlanFileShowsNoSettingsInsteadOfWrongOnes() {
        MainWindow window;
        window.document()->setSynchronous(true);
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto* pp = window.configPanel()->findChild<QSpinBox*>("pp");
        QVERIFY(pp->isHidden());  // nothing open yet
        QVERIFY(window.openFile(kLlamaConfig));
        QVERIFY(pp->isVisible());
        QCOMPARE(pp->value(), window.document()->state().config->parallel.pp);
        QTemporaryDir dir;
        const QString plan = dir.filePath("llama.mario.json");
        QString error;
        QVERIFY2(window.document()->saveAs(plan, &error), qPrintable(error));
        QVERIFY(window.openFile(plan));
        QVERIFY(pp->isHidden());
        QVERIFY(!window.configPanel()->isEnabled());
    }

    // Issue 14: the wheel over a spin box changed PP while the user scrolled the panel.
    void theWheelOverASettingChangesItOnlyWhenItHasFocus() {
        MainWindow window;
        window.document()->setSynchronous(true);
        window.resize(1400, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openFile(kLlamaConfig));
        auto* pp = window.configPanel()->findChild<QSpinBox*>("pp");
        auto* scheme = window.configPanel()->findChild<QComboBox*>("scheme");
        QVERIFY(pp && scheme);
        const int ppBefore = pp->value();
        const QString schemeBefore = scheme->currentText();
        auto wheel = [](QWidget* widget) {
            const QPointF at(widget->width() / 2.0, widget->height() / 2.0);
            QWheelEvent event(at, widget->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                              Qt::NoScrollPhase, false);
            QApplication::sendEvent(widget, &event);
        };
        window.gantt()->setFocus();
        wheel(pp);
        wheel(scheme);
        QCOMPARE(pp->value(), ppBefore);
        QCOMPARE(scheme->currentText(), schemeBefore);
        pp->setFocus();  // clicked or tabbed into: now the wheel is for it
        QTRY_VERIFY(pp->hasFocus());
        wheel(pp);
        QCOMPARE(pp->value(), ppBefore - 1);
    }
};

QTEST_MAIN(ConfigPanelTest)
#include "config_panel_test.moc"
