#include "app/gui/HelpMenu.h"

#include <QCoreApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QVBoxLayout>

#include "app/gui/HelpBrowser.h"

namespace mario::gui {
namespace {

// One window per page, reused: asking twice raises it instead of stacking copies.
QDialog* pageWindow(QMainWindow* window, const QString& name, const QString& title, const QString& page) {
    if (auto* open = window->findChild<QDialog*>(name)) return open;
    auto* dialog = new QDialog(window);
    dialog->setObjectName(name);
    dialog->setWindowTitle(title);
    auto* browser = new HelpBrowser(dialog);
    browser->setObjectName("helpText");
    browser->showPage(page);
    // A link the window cannot follow says so under the page (it used to do nothing).
    auto* note = new QLabel(dialog);
    note->setObjectName("helpNote");
    note->setWordWrap(true);
    note->hide();
    QObject::connect(browser, &HelpBrowser::unavailable, note, [note](const QString& message) {
        note->setText(message);
        note->show();
    });
    QObject::connect(browser, &QTextBrowser::sourceChanged, note, &QWidget::hide);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(browser);
    layout->addWidget(note);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
    layout->addWidget(buttons);
    dialog->resize(760, 620);
    return dialog;
}

QDialog* aboutWindow(QMainWindow* window) {
    if (auto* open = window->findChild<QDialog*>(QStringLiteral("aboutWindow"))) return open;
    auto* dialog = new QDialog(window);
    dialog->setObjectName("aboutWindow");
    dialog->setWindowTitle(QObject::tr("About Mario Workbench"));
    auto* text = new QLabel(
        QObject::tr("<h3>Mario Workbench %1</h3>"
                    "<p>See, tune and run pipeline-parallel training schedules, with activation checkpointing "
                    "whose recomputation hides in the pipeline's bubbles (the Mario paper, PPoPP'25), "
                    "and beyond it.</p>"
                    "<p>Built with Qt %2 and QCustomPlot. Licensed under the Apache License 2.0.</p>")
            .arg(QCoreApplication::applicationVersion().isEmpty() ? QObject::tr("(development build)")
                                                                  : QCoreApplication::applicationVersion(),
                 QString::fromLatin1(qVersion())),
        dialog);
    text->setWordWrap(true);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(text);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
    layout->addWidget(buttons);
    return dialog;
}

void present(QDialog* dialog) {
    dialog->show();
    dialog->raise();
    dialog->activateWindow();
}

}  // namespace

void addHelpMenu(QMainWindow* window, QMenuBar* bar) {
    QMenu* help = bar->addMenu(QObject::tr("&Help"));
    help->setObjectName("helpMenu");
    help->addAction(QObject::tr("&Keyboard and mouse"), QKeySequence::HelpContents, window,
                    [window] {
                        present(pageWindow(window, QStringLiteral("keysWindow"), QObject::tr("Keyboard and mouse"),
                                           QStringLiteral("window.md")));
                    })
        ->setObjectName("keysHelp");
    help->addAction(QObject::tr("&Glossary"), window,
                    [window] {
                        present(pageWindow(window, QStringLiteral("glossaryWindow"), QObject::tr("Glossary"),
                                           QStringLiteral("glossary.md")));
                    })
        ->setObjectName("glossary");
    help->addSeparator();
    help->addAction(QObject::tr("&About Mario Workbench"), window, [window] { present(aboutWindow(window)); })
        ->setObjectName("about");
}

}  // namespace mario::gui
