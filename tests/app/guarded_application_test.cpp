// The window's last-resort handler (issue 10): an exception escaping an event handler is
// reported once, the event is dropped, and the application, its windows and its session
// go on. Runs under GuardedApplication itself (its own main, not QTEST_MAIN).
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <stdexcept>

#include "app/gui/GuardedApplication.h"
#include "app/gui/MainWindow.h"
#include "app/gui/SessionAutosave.h"

using namespace mario::gui;

namespace {

class ThrowingObject : public QObject {
public:
    int handled = 0;
    bool event(QEvent* event) override {
        if (event->type() == QEvent::User) throw std::runtime_error("boom in an event handler");
        if (event->type() == QEvent::User + 1) ++handled;
        return QObject::event(event);
    }
};

}  // namespace

class GuardedApplicationTest : public QObject {
    Q_OBJECT
    GuardedApplication* app() { return static_cast<GuardedApplication*>(QCoreApplication::instance()); }

private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void anEscapingExceptionIsReportedOnceAndTheAppGoesOn() {
        QStringList reports;
        app()->setReporter([&](const QString& line) { reports << line; });
        ThrowingObject object;
        QEvent boom(QEvent::User);
        QVERIFY(!QCoreApplication::sendEvent(&object, &boom));
        QCOMPARE(reports, QStringList{"mario-workbench: internal error: boom in an event handler"});
        // Posted events go through the same door, from the event loop.
        QCoreApplication::postEvent(&object, new QEvent(QEvent::User));
        QCoreApplication::postEvent(&object, new QEvent(QEvent::Type(QEvent::User + 1)));
        QTRY_COMPARE(object.handled, 1);
        QCOMPARE(reports.size(), 2);
    }

    void theSessionAndItsAutosaveAreKept() {
        QTemporaryDir dir;
        app()->setReporter([](const QString&) {});
        MainWindow window;
        window.document()->setSynchronous(true);
        window.document()->enableAutosave(dir.path());
        QVERIFY(window.openFile(QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples/figure2.config.json")));
        window.document()->autosave()->waitForPendingWrite();
        // A slot of the window throws (a stand-in for any handler bug).
        QObject::connect(
            window.document(), &ScheduleDocument::computed, &window, [] { throw std::logic_error("a slot failed"); },
            Qt::QueuedConnection);
        const int before = app()->caughtCount();
        window.document()->setPasses({}, "base");
        QTRY_VERIFY(app()->caughtCount() > before);
        QVERIFY(window.document()->hasSchedule());
        QCOMPARE(window.document()->current().plan.devices.size(), std::size_t(4));
        QVERIFY(QFile::exists(window.document()->autosave()->path()));
    }
};

int main(int argc, char** argv) {
    GuardedApplication app(argc, argv, /*headless=*/true);
    GuardedApplicationTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "guarded_application_test.moc"
