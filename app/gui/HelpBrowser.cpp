#include "app/gui/HelpBrowser.h"

#include <QDesktopServices>
#include <QFile>
#include <QTextBlock>
#include <QTextCursor>

namespace mario::gui {
namespace {

const QString kHelpFolder = QStringLiteral("/help/");

}  // namespace

HelpBrowser::HelpBrowser(QWidget* parent) : QTextBrowser(parent) {
    // Links are followed here, not by QTextBrowser, which would try to show any file it can
    // name (a source file outside docs/ as an empty page) and open no web address.
    setOpenLinks(false);
    connect(this, &QTextBrowser::anchorClicked, this, &HelpBrowser::follow);
}

QString HelpBrowser::anchorOf(const QString& heading) {
    QString anchor;
    for (const QChar c : heading.toLower()) {
        if (c.isLetterOrNumber() || c == QLatin1Char('-') || c == QLatin1Char('_')) anchor += c;
        else if (c == QLatin1Char(' ')) anchor += QLatin1Char('-');
    }
    return anchor;
}

void HelpBrowser::doSetSource(const QUrl& name, QTextDocument::ResourceType type) {
    QTextBrowser::doSetSource(name, type);
    page_ = name.fileName();
    for (QTextBlock block = document()->begin(); block.isValid(); block = block.next()) {
        if (block.blockFormat().headingLevel() == 0 || block.length() <= 1) continue;
        QTextCursor heading(block);
        heading.setPosition(block.position() + block.length() - 1, QTextCursor::KeepAnchor);
        QTextCharFormat named;
        named.setAnchor(true);  // a target only: no href, so it neither looks nor acts like a link
        named.setAnchorNames({anchorOf(block.text())});
        heading.mergeCharFormat(named);
    }
}

bool HelpBrowser::showPage(const QString& pageAndSection) {
    const qsizetype hash = pageAndSection.indexOf(QLatin1Char('#'));
    const QString file = hash < 0 ? pageAndSection : pageAndSection.left(hash);
    const QString section = hash < 0 ? QString() : pageAndSection.mid(hash + 1);
    if (!file.isEmpty() && file != page_) {
        if (!QFile::exists(QLatin1Char(':') + kHelpFolder + file)) return false;
        setSource(QUrl(QStringLiteral("qrc") + QLatin1Char(':') + kHelpFolder + file), QTextDocument::MarkdownResource);
    }
    if (!section.isEmpty()) scrollToAnchor(section);
    return true;
}

void HelpBrowser::follow(const QUrl& link) {
    if (link.scheme() == QLatin1String("http") || link.scheme() == QLatin1String("https")) {
        QDesktopServices::openUrl(link);
        return;
    }
    // A click reports the link resolved against the page ("qrc:/help/glossary.md"); one given
    // as written ("glossary.md", "#section") is resolved the same way.
    const QUrl url = link.isRelative() ? source().resolved(link) : link;
    const QString path = url.path();
    if (url.scheme() == QLatin1String("qrc") && path.startsWith(kHelpFolder)) {
        const QString target =
            path.mid(kHelpFolder.size()) + (url.hasFragment() ? QLatin1Char('#') + url.fragment() : QString());
        if (showPage(target)) return;
    }
    // Outside docs/ (CONTRIBUTING.md, a screenshot): say where it is rather than do nothing.
    emit unavailable(tr("%1 is not part of the help built into the workbench; it is in the project's "
                        "repository, beside docs/.")
                         .arg(url.fileName().isEmpty() ? link.toString() : url.fileName()));
}

}  // namespace mario::gui
