// mario-workbench [FILE] [--screenshot OUT.png [--size WxH] [--view NAMES] [--what-if KEY=VALUES]]: the GUI. With
// --screenshot it renders the window offscreen into a PNG and exits (tests, docs, the README's
// pictures) with the exit codes of core/util/ExitCode.h; it writes no autosave and offers none back.
#include <QAction>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QTimer>
#include <cstdio>

#include "app/gui/CompareWindow.h"
#include "app/gui/GuardedApplication.h"
#include "app/gui/MainWindow.h"
#include "app/gui/PassStepper.h"
#include "app/gui/SessionAutosave.h"
#include "app/gui/WhatIfPanel.h"
#include "core/sweep/SweepKnob.h"
#include "core/util/ExitCode.h"

namespace {

bool wantsScreenshot(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (QByteArray(argv[i]).startsWith("--screenshot")) return true;
    return false;
}

// The bundled example: beside the build tree or in the installed share folder.
QString defaultExample() {
    const QString exe = QCoreApplication::applicationDirPath();
    for (const QString& candidate :
         {exe + "/../../resources/examples/figure2.config.json", exe + "/../share/mario/examples/figure2.config.json",
          QStringLiteral(MARIO_SOURCE_EXAMPLES_DIR "/figure2.config.json")})
        if (QFileInfo::exists(candidate)) return QDir::cleanPath(candidate);
    return {};
}

int fail(mario::ExitCode code, const QString& message) {
    std::fprintf(stderr, "mario-workbench: %s\n", qPrintable(message));
    return code;
}

int screenshot(mario::gui::MainWindow& window, const QCommandLineParser& parser, const QString& file) {
    using namespace mario;
    window.document()->setSynchronous(true);
    if (!file.isEmpty()) {
        QString error;
        bool deadlocked = false;
        if (!window.document()->open(file, &error, &deadlocked)) return fail(deadlocked ? kDeadlock : kBadInput, error);
        if (!window.document()->hasSchedule())
            return fail(kBadInput, QStringLiteral("%1: cannot compute the schedule").arg(file));
    }
    if (parser.isSet("step")) {
        bool ok = false;
        const int steps = parser.value("step").toInt(&ok);
        if (!ok || steps < 0 || steps > 64)
            return fail(kBadInput, QStringLiteral("--step: expected an integer in [0, 64]"));
        for (int i = 0; i <= steps; ++i) window.stepper()->next();
    }
    // View toggles by their object names (criticalPath, boundChain, recomputeCover,
    // shadeBubbles), so that every README screenshot renders offscreen, without a display.
    for (const QString& name : parser.value("view").split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        auto* action = window.findChild<QAction*>(name.trimmed());
        if (!action || !action->isCheckable() || !action->isEnabled())
            return fail(kBadInput, QStringLiteral("--view: no View toggle \"%1\" for this schedule").arg(name));
        action->setChecked(true);
    }
    QSize size(1600, 1000);
    if (parser.isSet("size")) {
        // WxH, as small laptops and docs want it (1024x700: the smallest size the charts are tested at).
        const QStringList wh = parser.value("size").split(QLatin1Char('x'));
        bool okW = false, okH = false;
        if (wh.size() == 2) size = QSize(wh[0].toInt(&okW), wh[1].toInt(&okH));
        if (!okW || !okH || size.width() < 320 || size.height() < 240 || size.width() > 8192 || size.height() > 8192)
            return fail(kBadInput,
                        QStringLiteral("--size: expected WxH, width in [320, 8192] and height in [240, 8192]"));
    }
    window.resize(size);
    window.show();
    QApplication::processEvents();
    QWidget* shown = &window;
    if (parser.isSet("compare-base")) {
        shown = window.compareWithBase();
        if (!shown) return fail(kBadInput, QStringLiteral("--compare-base: no schedule to compare"));
        shown->resize(size);
        QApplication::processEvents();
    }
    if (parser.isSet("what-if")) {
        // The What-if view with a sweep run to its end: KEY=VALUES as --vary reads them, with
        // --schemes and --passes as `mario sweep` takes them.
        gui::WhatIfPanel* whatIf = window.whatIf();
        gui::WhatIfSettings settings;
        const QString vary = parser.value("what-if");
        // The key as `mario sweep --vary` resolves it (a leaf name too); an unknown one is refused
        // here, where the picker would keep its own knob and sweep something else.
        const auto knob = findKnob(vary.section(QLatin1Char('='), 0, 0).toStdString());
        if (!knob) return fail(kBadInput, QStringLiteral("--what-if: %1").arg(QString::fromStdString(knob.error().message)));
        settings.knob = QString::fromUtf8((*knob)->key.data(), static_cast<int>((*knob)->key.size()));
        settings.values = vary.section(QLatin1Char('='), 1);
        settings.schemes = parser.value("schemes");
        if (parser.isSet("passes")) settings.passSets = parser.value("passes");
        whatIf->applySettings(settings);
        if (!whatIf->run()) return fail(kBadInput, QStringLiteral("--what-if: %1").arg(whatIf->statusText()));
        while (whatIf->isRunning()) QApplication::processEvents(QEventLoop::WaitForMoreEvents, 100);
        QApplication::processEvents();
    }
    const QString out = parser.value("screenshot");
    if (!shown->grab().save(out, "PNG")) return fail(kBadInput, QStringLiteral("cannot write %1").arg(out));
    return kOk;
}

}  // namespace

int main(int argc, char** argv) {
    const bool shot = wantsScreenshot(argc, argv);
    if (shot && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    const bool headless = shot || qgetenv("QT_QPA_PLATFORM") == "offscreen";
    mario::gui::GuardedApplication app(argc, argv, headless);
    QApplication::setApplicationName("mario-workbench");
    QApplication::setOrganizationName("Mario Workbench");
    QApplication::setApplicationVersion(MARIO_VERSION);

    QCommandLineParser parser;
    parser.setApplicationDescription("See, tune and run pipeline-parallel schedules.");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("file", "A config (*.config.json) or plan (*.mario.json) to open.");
    parser.addOption({"screenshot", "Render the window into PNG file OUT and exit.", "OUT"});
    parser.addOption({"step", "With --screenshot: show pass step N of the pass stepper (0 = before any pass).", "N"});
    parser.addOption({"size", "With --screenshot: the window's size, WxH (default 1600x1000).", "WxH"});
    parser.addOption({"view",
                      "With --screenshot: turn these View toggles on, comma-separated (criticalPath, boundChain, "
                      "recomputeCover, shadeBubbles).",
                      "NAMES"});
    parser.addOption({"compare-base", "With --screenshot: render the compare window (this schedule vs the base one)."});
    parser.addOption({"what-if",
                      "With --screenshot: the What-if view after a sweep of KEY=VALUES (as mario sweep --vary reads "
                      "it).",
                      "KEY=VALUES"});
    parser.addOption({"schemes", "With --what-if: the schemes to compare, as mario sweep --schemes.", "LIST"});
    parser.addOption({"passes", "With --what-if: the pass sets to compare, as mario sweep --passes.", "LIST"});
    parser.process(app);

    mario::gui::MainWindow window;
    QString file = parser.positionalArguments().value(0);
    if (file.isEmpty()) file = defaultExample();
    if (shot) return screenshot(window, parser, file);

    window.document()->enableAutosave(mario::gui::SessionAutosave::defaultDirectory());
    window.show();
    // After a crash the choice comes first, whatever file was asked for: Restore opens the
    // crashed session instead; Discard and Later open the file.
    QTimer::singleShot(0, &window, [&window, file] {
        if (window.offerRestore(mario::gui::SessionAutosave::defaultDirectory())) return;
        if (!file.isEmpty()) window.openFile(file);
    });
    return app.exec();
}
