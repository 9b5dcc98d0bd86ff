#pragma once
// The pages of docs/ as Help shows them (compiled in under :/help/, app/CMakeLists.txt), with
// their links working as on GitHub: a link to another page opens it, at its section when the
// link names one ("hide-recompute.md#the-recompute-bound-…"), a "#section" link scrolls this
// page, and a web address opens in the system browser.
//
// QTextBrowser alone did none of this: it resolves a clicked link against the page
// ("glossary.md" → "qrc:/help/glossary.md") before reporting it, which the Help window's
// handler (written for relative links) ignored, so the glossary link of Keyboard and mouse,
// and every other link between pages, did nothing; and Qt's Markdown reader gives headings no
// anchors, so sections could not be scrolled to by name.
#include <QString>
#include <QTextBrowser>
#include <QUrl>

namespace mario::gui {

class HelpBrowser : public QTextBrowser {
    Q_OBJECT
public:
    explicit HelpBrowser(QWidget* parent = nullptr);

    // Shows a bundled page by file name, with an optional "#section"; false when no such page
    // is bundled (the page shown stays).
    bool showPage(const QString& pageAndSection);
    // The file name of the page shown ("glossary.md").
    QString page() const { return page_; }
    // Follows a link as a click on it does.
    void follow(const QUrl& link);
    // GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens.
    static QString anchorOf(const QString& heading);

signals:
    // A link that leads nowhere the window can show (a file of the repository outside docs/):
    // what to tell the user instead of doing nothing.
    void unavailable(const QString& message);

protected:
    // Every page load names each heading with its GitHub anchor, so scrollToAnchor() finds it.
    void doSetSource(const QUrl& name, QTextDocument::ResourceType type) override;

private:
    QString page_;
};

}  // namespace mario::gui
