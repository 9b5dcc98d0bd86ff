#pragma once
// The What-if view's fields as the user typed them, in the words of `mario sweep` (one knob's
// key and values as --vary reads them, a second one optional, --schemes, --passes), plus the
// top chart's metric: what is kept with the document so that a sweep comes back as it was set.
#include <QString>

#include "core/model/WhatIfSection.h"

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

// The same fields as a config file's "what_if" section holds them (core/io/ConfigJson owns it).
inline WhatIfSection toSection(const WhatIfSettings& s) {
    return {s.knob.toStdString(),    s.values.toStdString(),   s.knob2.toStdString(), s.values2.toStdString(),
            s.schemes.toStdString(), s.passSets.toStdString(), s.metric.toStdString()};
}
inline WhatIfSettings fromSection(const WhatIfSection& w) {
    auto q = [](const std::string& text) { return QString::fromStdString(text); };
    return {q(w.knob), q(w.values), q(w.knob2), q(w.values2), q(w.schemes), q(w.passes), q(w.metric)};
}

}  // namespace mario::gui
