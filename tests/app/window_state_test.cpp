// What the window shows stays true after a change (issue 31), driven with real mouse and key
// events (offscreen): View → Fit shows every row again, a box's tooltip goes with the schedule
// it described, a failed compare's banner goes once something succeeds, stepping through the
// passes never widens the side panel, and Help's links between pages open them.
#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTimer>
#include <QToolTip>
#include <QtTest>
#include <qcustomplot.h>

#include "app/gui/CompareWindow.h"
#include "app/gui/MainWindow.h"
#include "app/gui/PassPanel.h"
#include "app/gui/PassStepper.h"
#include "views/GanttNavigation.h"
#include "views/GanttView.h"

using namespace mario;
using namespace mario::gui;

namespace {

const QString kExamples = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples");

// The window at the smallest size it is made for, on screen, with `example` open.
bool showExample(MainWindow& window, const QString& example) {
    window.document()->setSynchronous(true);
    window.resize(1024, 700);
    window.show();
    return QTest::qWaitForWindowExposed(&window) && window.openFile(kExamples + "/" + example);
}

// Where the link to `href` is drawn in `browser`'s viewport, scrolled into view; (-1, -1) if none.
QPoint linkPosition(QTextBrowser* browser, const QString& href) {
    for (QTextBlock block = browser->document()->begin(); block.isValid(); block = block.next())
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextFragment fragment = it.fragment();
            if (!fragment.charFormat().isAnchor() || fragment.charFormat().anchorHref() != href) continue;
            QTextCursor cursor(browser->document());
            cursor.setPosition(fragment.position() + fragment.length() / 2);
            browser->setTextCursor(cursor);
            browser->ensureCursorVisible();
            return browser->cursorRect(cursor).center();
        }
    return {-1, -1};
}

}  // namespace

class WindowStateTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // Rows zoomed tall (+), then F: the whole schedule again, every device's row on screen
    // (Fit used to fit the time only, keeping the one row the user had zoomed to).
    void fitShowsEveryRowAgain() {
        MainWindow window;
        QVERIFY(showExample(window, "gpt3-13b-chimera.config.json"));
        views::GanttView* gantt = window.gantt();
        QWidget* plot = gantt->plotWidget();
        const int lanes = static_cast<int>(gantt->timeline().lanes.size());
        QCOMPARE(lanes, 32);
        plot->setFocus();
        for (int i = 0; i < 20; ++i) QTest::keyClick(plot, Qt::Key_Plus);
        QTest::keyClick(plot, Qt::Key_W);  // and zoomed into time
        QVERIFY(gantt->navigation()->visibleLanes() < 4);
        QTest::keyClick(&window, Qt::Key_F);
        QCOMPARE(gantt->navigation()->visibleLanes(), lanes);
        const QCPRange time = gantt->plot()->xAxis->range();
        QVERIFY(time.lower <= 0 && time.upper >= gantt->timeline().makespan);
        gantt->plot()->replot();
        const QRect area = gantt->plot()->axisRect()->rect();
        for (int lane = 0; lane < lanes; ++lane) {
            const QPoint at = plot->mapFrom(gantt, gantt->pointAt(lane, gantt->timeline().makespan / 2));
            QVERIFY2(area.contains(at), qPrintable(QStringLiteral("device %1's row is off the chart").arg(lane)));
        }
        QVERIFY(!gantt->userZoomed());
    }

    // A tooltip shown over a box names that box's instruction and times; once the schedule is
    // replaced it must not stay up describing the old one. Clicks and keys hide tooltips
    // anyway (QToolTip's own rule), so what left them up was a change with no input event: a
    // result from the worker thread (a file opened, a pass toggle computed) landing while the
    // pointer rests on a box.
    void aBoxTooltipGoesWithTheScheduleItDescribed() {
        MainWindow window;
        QVERIFY(showExample(window, "figure2.config.json"));
        views::GanttView* gantt = window.gantt();
        QWidget* plot = gantt->plotWidget();
        QTRY_VERIFY(plot->hasFocus());  // as after any open: a later open moves no focus
        auto hoverABox = [&] {
            const QPoint box = plot->mapFrom(gantt, gantt->boxCenter({1, 0}));
            QTest::mouseMove(plot, box + QPoint(1, 0));  // Qt drops a move to where the pointer is
            QTest::mouseMove(plot, box);
            return QTest::qWaitFor([] { return QToolTip::isVisible(); }, 2000);
        };
        QVERIFY(hoverABox());
        const QString described = QToolTip::text();
        QVERIFY2(described.contains("device 1"), qPrintable(described));
        // Another file, opened on the worker thread as the window does, arrives under the pointer.
        window.document()->setSynchronous(false);
        QSignalSpy opened(window.document(), &ScheduleDocument::openFinished);
        QVERIFY(window.openFile(kExamples + "/cpu-small-measured.config.json"));
        QVERIFY(opened.wait(20000));
        QTRY_VERIFY(window.document()->current().plan.devices.size() != 4);
        // (QToolTip fades out over 300 ms; left alone, a tip stays up 10 s.)
        QTRY_VERIFY2_WITH_TIMEOUT(!QToolTip::isVisible() || QToolTip::text() != described, qPrintable(QToolTip::text()),
                                  2000);
        // A pass toggle's result the same way (the document's own path, without a click).
        QVERIFY(hoverABox());
        const QString again = QToolTip::text();
        QSignalSpy computed(window.document(), &ScheduleDocument::computed);
        window.document()->setPassEnabled(PassId::Prepose, false);
        QVERIFY(computed.wait(20000));
        QTRY_VERIFY2_WITH_TIMEOUT(!QToolTip::isVisible() || QToolTip::text() != again, qPrintable(QToolTip::text()),
                                  2000);
    }

    // View → Compare with a file…, a file that cannot be compared: the banner says why. Then
    // a compare that works (Ctrl+K, with the base schedule): the banner must go, it no longer
    // describes anything on screen.
    void aFailedComparesBannerGoesOnceACompareWorks() {
        MainWindow window;
        QVERIFY(showExample(window, "figure2.config.json"));
        QTemporaryDir dir;
        const QString bad = dir.filePath("broken.config.json");
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{\"format\": \"mario-config\", \"version\": 1, \"model\": ");
        file.close();
        // The dialog the action opens, answered as a user would.
        QTimer::singleShot(0, [bad] {
            QTRY_VERIFY(qobject_cast<QFileDialog*>(QApplication::activeModalWidget()));
            auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
            dialog->selectFile(bad);
            auto* buttons = dialog->findChild<QDialogButtonBox*>();
            QVERIFY(buttons && buttons->button(QDialogButtonBox::Open));
            QTest::mouseClick(buttons->button(QDialogButtonBox::Open), Qt::LeftButton);
        });
        window.findChild<QAction*>("compareWithFile")->trigger();
        QVERIFY2(window.errorText().startsWith("Could not compare with broken.config.json"),
                 qPrintable(window.errorText()));
        window.activateWindow();  // back from the dialog
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QTest::keyClick(&window, Qt::Key_K, Qt::ControlModifier);
        QVERIFY(window.findChild<CompareWindow*>());
        QVERIFY2(window.errorText().isEmpty(), qPrintable(window.errorText()));
        // And the same after an export that worked.
        QVERIFY(!window.compareWithFile(bad));
        QVERIFY(!window.errorText().isEmpty());
        QVERIFY(window.exportTo(dir.filePath("trace.json")));
        QVERIFY2(window.errorText().isEmpty(), qPrintable(window.errorText()));
    }

    // ▶ through every pass step of three examples: the side panel keeps its width, and the
    // stepper (its position, its buttons, its caption) stays inside it, the caption whole.
    // "step 1 of 6" beside the three buttons made it 365 px wide in a 330 px panel, cutting
    // off the right edge of every control in it.
    void steppingKeepsTheSidePanelsWidth() {
        for (const char* example :
             {"figure2.config.json", "gpt3-13b-chimera.config.json", "llama2-13b-zbv.config.json"}) {
            MainWindow window;
            QVERIFY(showExample(window, example));
            auto* scroll = qobject_cast<QScrollArea*>(window.findChild<QDockWidget*>("sideDock")->widget());
            QVERIFY(scroll);
            QWidget* side = scroll->widget();
            const int width = side->width();
            QVERIFY(width <= scroll->viewport()->width());
            auto* next = window.stepper()->findChild<QPushButton*>("stepNext");
            int steps = 0;
            while (next->isEnabled() && steps < 16) {
                QTest::mouseClick(next, Qt::LeftButton);
                QApplication::processEvents();
                ++steps;
                QCOMPARE(side->width(), width);
                for (QWidget* child : window.stepper()->findChildren<QWidget*>()) {
                    const QRect inSide(child->mapTo(side, QPoint(0, 0)), child->size());
                    QVERIFY2(inSide.right() < width, qPrintable(QStringLiteral("%1 at step %2 ends at x %3, past %4")
                                                                    .arg(child->objectName())
                                                                    .arg(steps)
                                                                    .arg(inSide.right())
                                                                    .arg(width)));
                }
                auto* caption = window.stepper()->findChild<QLabel*>("stepCaption");
                QVERIFY2(caption->height() >= caption->heightForWidth(caption->width()),
                         qPrintable(QStringLiteral("%1, step %2: caption %3 px high, needs %4")
                                        .arg(example)
                                        .arg(steps)
                                        .arg(caption->height())
                                        .arg(caption->heightForWidth(caption->width()))));
            }
            QVERIFY2(steps >= 3, example);
        }
    }

    // Help → Keyboard and mouse starts with "the words it uses are in the glossary": a click on
    // that link opens the glossary (it did nothing: the click reports the link resolved
    // against the page, qrc:/help/glossary.md, which the window ignored).
    void helpLinksOpenThePagesTheyName() {
        MainWindow window;
        QVERIFY(showExample(window, "figure2.config.json"));
        QTest::keyClick(&window, Qt::Key_F1);
        auto* keys = window.findChild<QDialog*>("keysWindow");
        QVERIFY(keys && QTest::qWaitForWindowExposed(keys));
        auto* browser = keys->findChild<QTextBrowser*>("helpText");
        const QPoint glossary = linkPosition(browser, "glossary.md");
        QVERIFY(glossary.x() >= 0);
        QTest::mouseClick(browser->viewport(), Qt::LeftButton, {}, glossary);
        QVERIFY2(browser->toPlainText().contains("waiting (RECV)"), qPrintable(browser->toPlainText().left(120)));
        // A link to a section of another page opens that page at the section.
        const QString section = "hide-recompute.md#the-recompute-bound-how-fast-any-placement-of-the-rs-could-be";
        const QPoint bound = linkPosition(browser, section);
        QVERIFY(bound.x() >= 0);
        QTest::mouseClick(browser->viewport(), Qt::LeftButton, {}, bound);
        QVERIFY(browser->toPlainText().startsWith("Hiding recomputation"));
        QVERIFY(browser->verticalScrollBar()->value() > 0);
        const QTextBlock top = browser->cursorForPosition(QPoint(4, 4)).block();
        QVERIFY2(top.text().startsWith("The recompute bound"), qPrintable(top.text()));
        // A link out of docs/ says where the page is instead of doing nothing.
        auto* note = keys->findChild<QLabel*>("helpNote");
        QVERIFY(note && note->isHidden());
        emit browser->anchorClicked(QUrl("qrc:/CONTRIBUTING.md"));
        QVERIFY(note->isVisible() && note->text().contains("CONTRIBUTING.md"));
        // Every page of docs/ is built in, so no link between pages can lead nowhere.
        for (const QString& page : QDir(MARIO_TEST_SOURCE_DIR "/docs").entryList({"*.md"}, QDir::Files))
            QVERIFY2(QFile::exists(":/help/" + page), qPrintable(page + " is not built into the help"));
    }
};

QTEST_MAIN(WindowStateTest)
#include "window_state_test.moc"
