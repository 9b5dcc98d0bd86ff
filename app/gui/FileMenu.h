#pragma once
// The File menu and what keeps the user's work safe: Open, Open recent, Save (Ctrl+S), Save
// As, Revert, Export and Quit; the modified mark ([*]) in the window title; and the question
// before unsaved changes would be dropped (quit, close, open, revert).
#include <QObject>
#include <QString>
#include <functional>

#include "app/gui/DiscardPrompt.h"

class QAction;
class QMenu;
class QMenuBar;

namespace mario::gui {

class MainWindow;
class ScheduleDocument;

class FileMenu : public QObject {
    Q_OBJECT
public:
    FileMenu(MainWindow* window, ScheduleDocument* document, QMenuBar* bar);

    // Writes the document to its own file when it can hold everything, otherwise asks where
    // (as Save As). False when nothing was saved (cancelled, or the write failed: the banner
    // says why).
    bool save();
    bool saveAs();
    // Reopens the document's file, dropping the changes (after asking).
    bool revert();
    // True when the work may be dropped for `action` ("quit", "open another file"): nothing
    // is unsaved, or the user saved it or chose to discard it.
    bool confirmDiscard(const QString& action);
    // Opens `path` after confirmDiscard (menus and recent files; MainWindow::openFile itself
    // never asks).
    void openAfterAsking(const QString& path);
    void rememberRecent(const QString& path);

    // Tests answer the questions instead of modal dialogs.
    void setDiscardAsker(DiscardAsker ask) { askDiscard_ = std::move(ask); }
    // Returns the chosen path, empty when cancelled.
    using PathAsker = std::function<QString(const QString& suggested)>;
    void setSaveAsAsker(PathAsker ask) { askPath_ = std::move(ask); }

    QAction* saveAction() const { return save_; }
    QAction* revertAction() const { return revert_; }

private:
    void updateTitle();
    void rebuildRecentMenu();
    QString suggestedSavePath() const;
    QString documentName() const;

    MainWindow* window_;
    ScheduleDocument* document_;
    QMenu* recentMenu_ = nullptr;
    QAction* save_ = nullptr;
    QAction* revert_ = nullptr;
    DiscardAsker askDiscard_;
    PathAsker askPath_;
};

}  // namespace mario::gui
