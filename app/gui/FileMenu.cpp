#include "app/gui/FileMenu.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>

#include "app/gui/AutosaveFile.h"
#include "app/gui/MainWindow.h"
#include "core/session/ScheduleFiles.h"

namespace mario::gui {

FileMenu::FileMenu(MainWindow* window, ScheduleDocument* document, QMenuBar* bar)
    : QObject(window), window_(window), document_(document) {
    QMenu* file = bar->addMenu(tr("&File"));
    file->setObjectName("fileMenu");
    file->addAction(tr("&Open…"), QKeySequence::Open, this,
                    [this] {
                        if (!confirmDiscard(tr("open another file"))) return;
                        const QString path = QFileDialog::getOpenFileName(
                            window_, tr("Open a config or plan"), QString(), tr("Mario files (*.json);;All files (*)"));
                        if (!path.isEmpty()) window_->openFile(path);
                    })
        ->setObjectName("open");
    recentMenu_ = file->addMenu(tr("Open &recent"));
    rebuildRecentMenu();
    file->addSeparator();
    save_ = file->addAction(tr("&Save"), QKeySequence::Save, this, [this] { save(); });
    save_->setObjectName("save");
    QAction* saveAsAction = file->addAction(tr("Save &as…"), this, [this] { saveAs(); });
    saveAsAction->setObjectName("saveAs");
    // The platform's Save As sequence is empty on some desktops; Ctrl+Shift+S everywhere.
    QList<QKeySequence> saveAsKeys = QKeySequence::keyBindings(QKeySequence::SaveAs);
    if (!saveAsKeys.contains(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S)))
        saveAsKeys.prepend(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    saveAsAction->setShortcuts(saveAsKeys);
    revert_ = file->addAction(tr("Re&vert to saved"), this, [this] { revert(); });
    revert_->setObjectName("revert");
    file->addSeparator();
    file->addAction(tr("&Export…"), this,
                    [this] {
                        const QString path = QFileDialog::getSaveFileName(
                            window_, tr("Export"), QString(),
                            tr("PNG image (*.png);;SVG image (*.svg);;PDF (*.pdf);;Chrome trace (*.trace.json);;"
                               "PyTorch CSV (*.csv)"));
                        if (!path.isEmpty()) window_->exportTo(path);
                    })
        ->setObjectName("export");
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, window_, &QWidget::close)->setObjectName("quit");

    connect(document_, &ScheduleDocument::modifiedChanged, this, &FileMenu::updateTitle);
    connect(document_, &ScheduleDocument::pathChanged, this, &FileMenu::updateTitle);
    connect(document_, &ScheduleDocument::computed, this, &FileMenu::updateTitle);
    updateTitle();
}

QString FileMenu::documentName() const {
    const QString path = document_->path();
    return path.isEmpty() ? tr("The restored session") : QFileInfo(path).fileName();
}

void FileMenu::updateTitle() {
    // Qt draws "[*]" as "*" exactly while the window is marked modified.
    const QString name = document_->hasSchedule() ? documentName() : QString();
    window_->setWindowTitle(name.isEmpty() ? tr("Mario Workbench") : tr("%1[*] — Mario Workbench").arg(name));
    window_->setWindowModified(document_->isModified());
    save_->setEnabled(document_->hasSchedule());
    revert_->setEnabled(document_->isModified() && document_->canSaveInPlace() && QFileInfo::exists(document_->path()));
}

QString FileMenu::suggestedSavePath() const {
    const QString path = document_->path();
    const QFileInfo info(path.isEmpty() ? QStringLiteral("schedule.mario.json") : path);
    QString base = info.fileName();
    for (const char* suffix : {".config.json", ".mario.json", ".json"})
        if (base.endsWith(QLatin1String(suffix))) {
            base.chop(int(qstrlen(suffix)));
            break;
        }
    // A config where it can hold the work (settings and passes); a plan otherwise, which
    // keeps everything, hand edits included.
    const QString config = info.dir().filePath(base + QStringLiteral(".config.json"));
    if (!saveRefusal(config.toStdString(), document_->state())) return config;
    return info.dir().filePath(base + QStringLiteral(".mario.json"));
}

bool FileMenu::save() {
    if (!document_->canSaveInPlace()) return saveAs();
    QString error;
    if (document_->saveAs(document_->path(), &error)) {
        window_->clearError();
        return true;
    }
    window_->showError(error);
    return false;
}

bool FileMenu::saveAs() {
    const QString suggested = suggestedSavePath();
    const QString path = askPath_ ? askPath_(suggested)
                                  : QFileDialog::getSaveFileName(window_, tr("Save plan or config"), suggested,
                                                                 tr("Plan (*.mario.json);;Config (*.config.json)"));
    if (path.isEmpty()) return false;
    QString error;
    if (!document_->saveAs(path, &error)) {
        window_->showError(error);
        return false;
    }
    window_->clearError();
    rememberRecent(path);
    return true;
}

bool FileMenu::revert() {
    const QString path = document_->path();
    if (!document_->isModified() || !QFileInfo::exists(path)) return false;
    const DiscardChoice choice = askDiscard_ ? askDiscard_(documentName(), tr("revert to the saved file"))
                                             : askToDiscard(window_, documentName(), tr("revert to the saved file"),
                                                            /*offerSave=*/false);
    if (choice != DiscardChoice::Discard) return false;  // Save or Cancel: the work stays
    return window_->openFile(path);
}

bool FileMenu::confirmDiscard(const QString& action) {
    if (!document_->hasSchedule() || !document_->isModified()) return true;
    const DiscardChoice choice =
        askDiscard_ ? askDiscard_(documentName(), action) : askToDiscard(window_, documentName(), action);
    switch (choice) {
        case DiscardChoice::Save: return save();
        case DiscardChoice::Discard: return true;
        case DiscardChoice::Cancel: return false;
    }
    return false;
}

void FileMenu::openAfterAsking(const QString& path) {
    if (confirmDiscard(tr("open %1").arg(QFileInfo(path).fileName()))) window_->openFile(path);
}

void FileMenu::rememberRecent(const QString& path) {
    if (AutosaveFile::isAutosavePath(path)) return;
    QSettings settings;
    QStringList recent = settings.value("recentFiles").toStringList();
    recent.removeAll(QFileInfo(path).absoluteFilePath());
    recent.prepend(QFileInfo(path).absoluteFilePath());
    settings.setValue("recentFiles", recent.mid(0, 10));
    rebuildRecentMenu();
}

void FileMenu::rebuildRecentMenu() {
    recentMenu_->clear();
    for (const QString& path : QSettings().value("recentFiles").toStringList())
        recentMenu_->addAction(path, this, [this, path] { openAfterAsking(path); })->setObjectName("recentFile");
    recentMenu_->setEnabled(!recentMenu_->isEmpty());
}

}  // namespace mario::gui
