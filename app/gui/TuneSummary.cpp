#include "TuneSummary.h"

#include <QCoreApplication>

namespace mario::gui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("TuneSummary", text); }
QString qstr(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

QString tuneSummaryHtml(const TuneResult& r, int evaluated) {
    const double seconds = r.elapsed_ms / 1000.0;
    const QString rate = seconds > 0 ? tr("%1 simulations/s").arg(r.simulated / seconds, 0, 'f', 0) : QString();
    const QString counts = tr("%1 candidates evaluated (%2 pruned by the memory bound), %3 simulations, %4")
                               .arg(evaluated)
                               .arg(r.pruned)
                               .arg(r.simulated)
                               .arg(rate);
    if (!r.best) {
        // The tuner's own sentence already starts "nothing fits: …".
        QString why = r.nothing_fits.empty() ? tr("nothing fits the memory limit") : qstr(r.nothing_fits);
        if (r.cancelled && r.nothing_fits.empty()) why = tr("nothing that fits was found before the search was cancelled");
        why[0] = why[0].toUpper();
        return tr("<span style='color:#8a0010'><b>%1.</b></span><br>%2").arg(why.toHtmlEscaped(), counts);
    }
    const TuneOutcome& best = r.outcomes[*r.best];
    QString speedup;
    if (!r.best_without_checkpointing)
        speedup = tr("nothing fits without checkpointing");
    else if (!best.candidate.checkpoint)
        speedup = tr("the best does not checkpoint");
    else
        speedup = tr("<b>%1×</b> the best without checkpointing (%2)")
                      .arg(r.speedup_over_no_checkpointing, 0, 'f', 2)
                      .arg(qstr(r.outcomes[*r.best_without_checkpointing].candidate.label()).toHtmlEscaped());
    return tr("Best: <b>%1</b> — %2 samples/s, step %3 ms, peak %4 GB; %5.<br>%6")
                          .arg(qstr(best.candidate.label()).toHtmlEscaped())
                          .arg(best.samples_per_s, 0, 'f', 2)
                          .arg(best.step_ms, 0, 'f', 1)
                          .arg(best.peak_bytes / 1e9, 0, 'f', 1)
                          .arg(speedup, counts);
}

}  // namespace mario::gui
