#pragma once
// The status bar's progress for every computation off the GUI thread (a file opening, a
// settings change, a pass toggle, an undo to a state not computed before): what it is, the
// step it reached ("passes and simulation", 2 of 4) and Cancel, which keeps the schedule,
// settings and title shown. A file's progress appears at once; a change's only once it has
// taken a moment, so quick toggles do not flash it.
#include <QElapsedTimer>
#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;
class QTimer;

namespace mario::gui {

class ScheduleDocument;

class ComputationProgress : public QWidget {
    Q_OBJECT
public:
    // How long a change computes before its progress shows.
    static constexpr int kShowAfterMs = 150;
    ComputationProgress(ScheduleDocument* document, QWidget* parent = nullptr);

    QPushButton* cancelButton() const { return cancel_; }
    QString text() const;  // what the label says now ("Change settings: passes and simulation…")

private:
    void started(const QString& what, bool atOnce);
    void progressed(int step, int steps, const QString& phase);
    void ended();
    void updateLabel();

    ScheduleDocument* document_;
    QLabel* label_;
    QProgressBar* bar_;
    QPushButton* cancel_;
    QTimer* reveal_;
    QTimer* clock_;
    QElapsedTimer elapsed_;
    QString what_, phase_;
};

}  // namespace mario::gui
