#pragma once
// How long the GUI thread went without handling events: a 10 ms timer ticks on it, and the
// longest time between two ticks (or between start() and the first tick) is the longest the
// window could not repaint or answer a click. A busy GUI thread delays the next tick; a free
// one ticks every 10 ms, so the gap never reads below that.
#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <algorithm>

namespace mario::bench {

class GuiGapMeter : public QObject {
public:
    GuiGapMeter() {
        timer_.setTimerType(Qt::PreciseTimer);
        timer_.setInterval(10);
        connect(&timer_, &QTimer::timeout, this, [this] { tick(); });
    }

    void start() {
        longestMs_ = 0;
        ticks_ = 0;
        clock_.start();
        last_ = 0;
        timer_.start();
    }
    void stop() {
        tick();
        timer_.stop();
    }
    double longestMs() const { return longestMs_; }
    double elapsedMs() const { return static_cast<double>(clock_.nsecsElapsed()) / 1e6; }
    int ticks() const { return ticks_; }

private:
    void tick() {
        const qint64 now = clock_.nsecsElapsed();
        longestMs_ = std::max(longestMs_, static_cast<double>(now - last_) / 1e6);
        last_ = now;
        ++ticks_;
    }

    QTimer timer_;
    QElapsedTimer clock_;
    qint64 last_ = 0;
    double longestMs_ = 0;
    int ticks_ = 0;
};

}  // namespace mario::bench
