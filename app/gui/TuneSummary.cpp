#include "app/gui/TuneSummary.h"

#include <QCoreApplication>

#include "core/tune/TuneVerdict.h"

namespace mario::gui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("TuneSummary", text); }
QString qstr(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

QString tuneSummaryHtml(const TuneResult& r, int evaluated) {
    const double seconds = r.elapsed_ms / 1000.0;
    const QString rate = seconds > 0 ? tr("%1 simulations/s").arg(r.simulated / seconds, 0, 'f', 0) : QString();
    // The candidates once each, and the best few again apart from them: the simulations
    // are more than the candidates, the candidates never more than the search space.
    const QString refined = r.refined > 0 ? tr(", the best %1 simulated again with every pass").arg(r.refined) : "";
    const QString counts = tr("%1 candidates evaluated (%2 pruned by the memory bound)%3; %4 simulations, %5")
                               .arg(evaluated)
                               .arg(r.pruned)
                               .arg(refined)
                               .arg(r.simulated)
                               .arg(rate);
    // The verdict is core's sentence (the CLI prints the same); the window adds the numbers.
    QString verdict = qstr(tuneVerdict(r));
    verdict[0] = verdict[0].toUpper();
    if (!r.best) return tr("<span style='color:#8a0010'><b>%1.</b></span><br>%2").arg(verdict.toHtmlEscaped(), counts);
    const TuneOutcome& best = r.outcomes[*r.best];
    return tr("<b>%1.</b><br>%2 samples/s, step %3 ms, peak %4 GB.<br>%5")
        .arg(verdict.toHtmlEscaped())
        .arg(best.samples_per_s, 0, 'f', 2)
        .arg(best.step_ms, 0, 'f', 1)
        .arg(best.peak_bytes / 1e9, 0, 'f', 1)
        .arg(counts);
}

}  // namespace mario::gui
