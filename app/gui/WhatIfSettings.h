#pragma once
// The What-if view's fields as the user typed them, in the words of `mario sweep` (one knob's
// key and values as --vary reads them, a second one optional, --schemes, --passes), plus the
// top chart's metric: what is kept with the document so that a sweep comes back as it was set.
#include <QString>

namespace mario::gui {

struct WhatIfSettings {
    QString knob = QStringLiteral("parallel.micro_batch_size");
    QString values = QStringLiteral("1,2,4,8");
    QString knob2;  // empty: one knob
    QString values2;
    QString schemes;  // empty: the config's own scheme
    QString passSets = QStringLiteral("none;all");
    QString metric = QStringLiteral("throughput");  // or "step"
    friend bool operator==(const WhatIfSettings&, const WhatIfSettings&) = default;
};

}  // namespace mario::gui
