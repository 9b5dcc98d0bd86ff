#include "views/BoxTooltip.h"

namespace mario::views {

QString boxTooltip(const Timeline& timeline, const BoxRef& ref, TimeBase base) {
    const TimelineBox* box = timeline.find(ref);
    if (!box) return {};
    // Enough digits to tell neighbouring boxes apart at any scale, in the unit the value asks for.
    const auto time = [base](double ms) { return formatDuration(ms, base, 6); };
    QString text = QStringLiteral("<b>%1</b> &nbsp;%2<br>device %3, program[%4]<br>%5 → %6<br>duration %7")
                       .arg(actionOf(*box).toHtmlEscaped(), labelOf(box->kind).toHtmlEscaped())
                       .arg(box->lane)
                       .arg(box->program_index)
                       .arg(time(box->start), time(box->end), time(box->end - box->start));
    auto noteOf = [&timeline](const TimelineBox& b) {
        return b.note >= 0 && b.note < static_cast<int>(timeline.notes.size()) ? timeline.notes[b.note] : QString();
    };
    if (box->kind == BoxKind::Wait) {
        text += QStringLiteral("<br>waited for %1").arg(noteOf(*box).toHtmlEscaped());
        return text;
    }
    if (box->note >= 0) text += QStringLiteral("<br>%1").arg(noteOf(*box).toHtmlEscaped());
    // A compute box that follows a wait started late because of it: say for what.
    const auto& lane = timeline.lanes[static_cast<std::size_t>(box->lane)];
    const std::size_t at = static_cast<std::size_t>(box - lane.data());
    if (at > 0 && lane[at - 1].kind == BoxKind::Wait && lane[at - 1].end >= box->start - 1e-9) {
        const TimelineBox& wait = lane[at - 1];
        text += QStringLiteral("<br>started after waiting %1 (%2) for %3")
                    .arg(time(wait.end - wait.start), actionOf(wait).toHtmlEscaped(), noteOf(wait).toHtmlEscaped());
    }
    return text;
}

}  // namespace mario::views
