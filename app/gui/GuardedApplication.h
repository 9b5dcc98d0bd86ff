#pragma once
// The window's last-resort handler. Qt does not let an exception cross its event loop: one
// escaping an event handler or slot would end the process and lose the session. notify()
// catches it and reports it once — a message box in the window, or, headless (--screenshot,
// offscreen), one line on stderr and exit code 2 (kBadInput) — and the session goes on: its
// autosave is kept, since only a clean exit removes it.
#include <QApplication>
#include <functional>

namespace mario::gui {

class GuardedApplication : public QApplication {
    Q_OBJECT
public:
    GuardedApplication(int& argc, char** argv, bool headless);

    bool notify(QObject* receiver, QEvent* event) override;

    // Replaces the report (tests): called with the exception's one-line description.
    void setReporter(std::function<void(const QString&)> reporter) { reporter_ = std::move(reporter); }
    int caughtCount() const { return caught_; }

private:
    void report(const QString& what);

    bool headless_;
    bool reporting_ = false;  // an exception while the message box is up goes to stderr only
    int caught_ = 0;
    std::function<void(const QString&)> reporter_;
};

}  // namespace mario::gui
