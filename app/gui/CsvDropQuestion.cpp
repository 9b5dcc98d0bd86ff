#include "app/gui/CsvDropQuestion.h"

#include <QMessageBox>
#include <QPushButton>
#include <QStringList>

#include "core/io/PipeliningCsv.h"
#include "core/passes/PassRegistry.h"

namespace mario::gui {

QString csvDropSentence(const ScheduleInput& input, const Plan& shown) {
    const int rs = recomputeCount(shown);
    QStringList passes;
    for (PassId pass : input.passes)
        if (passInfo(pass).needs_checkpointing) passes << QString::fromUtf8(passInfo(pass).name.data());
    if (rs == 0 && passes.isEmpty()) return {};
    QString text = QObject::tr("PyTorch's schedule CSV has no recomputation (R). This schedule recomputes %n "
                               "forward(s): the CSV leaves them out, so every forward keeps its activations until "
                               "its backward.",
                               nullptr, rs);
    if (!passes.isEmpty())
        text += QObject::tr(" %1 is left out too (its early forwards hold only a checkpoint), so the exported order "
                            "needs more memory than the schedule shown.")
                    .arg(passes.join(QStringLiteral(", ")));
    return text;
}

bool askToDropRecomputation(QWidget* parent, const ScheduleInput& input, const Plan& shown) {
    const QString dropped = csvDropSentence(input, shown);
    if (dropped.isEmpty()) return true;
    QMessageBox box(QMessageBox::Question, QObject::tr("Export without recomputation?"), dropped, QMessageBox::Cancel,
                    parent);
    box.setObjectName("csvDropQuestion");
    QPushButton* without = box.addButton(QObject::tr("Export without them"), QMessageBox::AcceptRole);
    without->setObjectName("exportWithout");
    box.setDefaultButton(without);
    box.exec();
    return box.clickedButton() == without;
}

}  // namespace mario::gui
