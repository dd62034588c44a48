#pragma once
// QCustomPlot for the widgets, which build with QT_NO_KEYWORDS: the installed qcustomplot.h
// itself says `signals:` and `foreach`, so those two words are lent to it for the include and
// taken back after. Every widget includes this header, never <qcustomplot.h> directly.
#ifdef QT_NO_KEYWORDS
#define signals Q_SIGNALS
#define foreach Q_FOREACH
#include <qcustomplot.h>
#undef signals
#undef foreach
#else
#include <qcustomplot.h>
#endif
