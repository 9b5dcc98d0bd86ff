#pragma once
// Help: Keyboard and mouse (docs/window.md), Glossary (docs/glossary.md) and About. The two
// pages are the repository's own documentation, compiled into the program, so the window and
// the docs never say different things. Each opens in a window of its own that can stay open
// beside the schedule (never modal).
class QMainWindow;
class QMenuBar;

namespace mario::gui {

void addHelpMenu(QMainWindow* window, QMenuBar* bar);

}  // namespace mario::gui
