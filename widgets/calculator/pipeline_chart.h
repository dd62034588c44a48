#pragma once
// The pipeline bubble against the micro-batches of a step, per schedule (theory/pipeline.h), for
// P stages and, for interleaved, V chunks per rank: how many micro-batches it takes to hide the
// pipeline's fill and drain, and what interleaving and ZB-H1's split backward save. Its own P and
// V: a pipeline's stages are not the scenario's data-parallel ranks.
#include <QWidget>

class QCustomPlot;
class QLabel;
class QSpinBox;

namespace shardscope::widgets {

class PipelineChart : public QWidget {
    Q_OBJECT
public:
    explicit PipelineChart(QWidget* parent = nullptr);
    QCustomPlot* plot() const { return plot_; }
    void setStages(int stages);
    void setVirtualStages(int chunks);
    static constexpr int kMaxMicroBatches = 32;

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void retranslate();
    void rebuild();

    QLabel* stagesLabel_ = nullptr;
    QSpinBox* stages_ = nullptr;
    QLabel* virtualLabel_ = nullptr;
    QSpinBox* virtual_ = nullptr;
    QCustomPlot* plot_ = nullptr;
    QLabel* note_ = nullptr;
};

} // namespace shardscope::widgets
