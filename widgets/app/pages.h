#pragma once
// Which pages the window has and what each is handed: Ranks, Timeline and Flows over the
// window's RunDocument, Compare offered the document's run to add (never added on its own),
// Calculator on its own, and the File actions on the document (save, recent, export).
namespace shardscope::widgets {

class MainWindow;

void addDefaultPages(MainWindow& window);

} // namespace shardscope::widgets
