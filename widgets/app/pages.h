#pragma once
// Which pages the window has and what each is handed: Ranks, Timeline and Flows over the
// window's RunDocument, Compare fed by the document's finished runs, Calculator on its own, and
// the File actions on the document (save, recent, export).
namespace shardscope::widgets {

class MainWindow;

void addDefaultPages(MainWindow& window);

} // namespace shardscope::widgets
