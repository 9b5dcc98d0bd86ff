#include "app/gui/GuardedApplication.h"

#include <QMessageBox>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

#include "core/util/ExitCode.h"

namespace mario::gui {

GuardedApplication::GuardedApplication(int& argc, char** argv, bool headless)
    : QApplication(argc, argv), headless_(headless) {}

bool GuardedApplication::notify(QObject* receiver, QEvent* event) {
    try {
        return QApplication::notify(receiver, event);
    } catch (const std::bad_alloc&) {
        report(QStringLiteral("out of memory"));
    } catch (const std::exception& e) {
        report(QString::fromLocal8Bit(e.what()));
    } catch (...) {
        report(QStringLiteral("an unknown exception"));
    }
    return false;  // the event counts as not handled
}

void GuardedApplication::report(const QString& what) {
    ++caught_;
    const QString line = QStringLiteral("mario-workbench: internal error: %1").arg(what).simplified();
    if (reporter_) return reporter_(line);
    if (headless_) {
        // No one to answer a dialog: one line and the bad-input code, without running the
        // destructors of a state that just threw.
        std::fprintf(stderr, "%s\n", qPrintable(line));
        std::fflush(stderr);
        std::_Exit(kBadInput);
    }
    if (reporting_) {
        std::fprintf(stderr, "%s\n", qPrintable(line));
        return;
    }
    reporting_ = true;
    QMessageBox::critical(activeWindow(), tr("Mario Workbench"),
                          tr("%1\n\nThe session is kept (and autosaved); save your work and restart if the window "
                             "misbehaves.")
                              .arg(line));
    reporting_ = false;
}

}  // namespace mario::gui
