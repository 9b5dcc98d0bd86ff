// mario-workbench [FILE] [--screenshot OUT.png]: the GUI. With --screenshot it renders the
// window offscreen into a PNG and exits (tests, docs, the README's picture).
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QTimer>
#include <cstdio>

#include "MainWindow.h"
#include "CompareWindow.h"
#include "PassStepper.h"

namespace {

bool wantsScreenshot(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (QByteArray(argv[i]).startsWith("--screenshot")) return true;
    return false;
}

// The bundled example: beside the build tree or in the installed share folder.
QString defaultExample() {
    const QString exe = QCoreApplication::applicationDirPath();
    for (const QString& candidate : {exe + "/../../resources/examples/figure2.config.json",
                                     exe + "/../share/mario/examples/figure2.config.json",
                                     QStringLiteral(MARIO_SOURCE_EXAMPLES_DIR "/figure2.config.json")})
        if (QFileInfo::exists(candidate)) return QDir::cleanPath(candidate);
    return {};
}

}  // namespace

int main(int argc, char** argv) {
    const bool screenshot = wantsScreenshot(argc, argv);
    if (screenshot && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setApplicationName("mario-workbench");
    QApplication::setOrganizationName("Mario Workbench");
    QApplication::setApplicationVersion(MARIO_VERSION);

    QCommandLineParser parser;
    parser.setApplicationDescription("See, tune and run pipeline-parallel schedules.");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("file", "A config (*.config.json) or plan (*.mario.json) to open.");
    QCommandLineOption shot("screenshot", "Render the window into PNG file OUT and exit.", "OUT");
    parser.addOption(shot);
    QCommandLineOption step("step", "With --screenshot: show pass step N of the pass stepper (0 = before any pass).", "N");
    parser.addOption(step);
    QCommandLineOption compare("compare-base", "With --screenshot: render the compare window (this schedule vs the base one).");
    parser.addOption(compare);
    parser.process(app);

    mario::gui::MainWindow window;
    QString file = parser.positionalArguments().value(0);
    QSettings settings;
    const bool crashed = !screenshot && settings.contains("cleanExit") && !settings.value("cleanExit").toBool();
    settings.setValue("cleanExit", false);
    if (file.isEmpty() && crashed && QFileInfo::exists(mario::gui::ScheduleDocument::autosavePath()))
        file = mario::gui::ScheduleDocument::autosavePath();  // the last session ended without closing
    if (file.isEmpty()) file = defaultExample();

    if (screenshot) {
        window.document()->setSynchronous(true);
        if (!file.isEmpty() && !window.openFile(file)) {
            std::fprintf(stderr, "mario-workbench: %s\n", qPrintable(window.errorText()));
            return 2;
        }
        if (parser.isSet(step))
            for (int i = 0; i <= parser.value(step).toInt(); ++i) window.stepper()->next();
        window.resize(1600, 1000);
        window.show();
        QApplication::processEvents();
        const QString out = parser.value(shot);
        QWidget* shown = &window;
        if (parser.isSet(compare)) {
            shown = window.compareWithBase();
            if (!shown) return 2;
            shown->resize(1600, 1000);
            QApplication::processEvents();
        }
        if (!shown->grab().save(out, "PNG")) {
            std::fprintf(stderr, "mario-workbench: cannot write %s\n", qPrintable(out));
            return 2;
        }
        return 0;
    }
    window.show();
    if (!file.isEmpty()) QTimer::singleShot(0, &window, [&window, file] { window.openFile(file); });
    return app.exec();
}
