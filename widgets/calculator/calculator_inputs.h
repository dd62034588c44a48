#pragma once
// The calculator's input form: model (preset or bare count), N, strategy, precision, offload.
// It only reports what the user chose; validity is decided when the result is computed.
#include "calculator/calculator_compute.h"
#include "calculator/presets.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QFormLayout;

namespace shardscope::widgets {

// Parses "7.5e9", "7 500 000 000", "124M", "1.3B", "2T"; an empty optional + message on error.
std::optional<std::uint64_t> parseParamCount(const QString& text, QString* error);

class CalculatorInputs : public QWidget {
    Q_OBJECT
public:
    explicit CalculatorInputs(QWidget* parent = nullptr);

    // The model, N, strategy, precision and offload (DeepSpeed's node layout is not here).
    CalculatorInput input() const;
    // Adds a Hugging Face config.json as a preset and selects it; false with the one-line reason.
    bool openModelConfig(const QString& path, QString* error);

Q_SIGNALS:
    void inputChanged();

protected:
    void changeEvent(QEvent* event) override;

private:
    void buildWidgets();
    void connectWidgets();
    void retranslateUi();
    void updateEnabled();
    void onPresetChanged();
    const ModelPreset* currentPreset() const;

    PresetList presets_;
    QFormLayout* form_ = nullptr;
    QComboBox* presetCombo_ = nullptr;
    QPushButton* openConfig_ = nullptr;
    QLineEdit* paramsEdit_ = nullptr;
    QLabel* shapeLabel_ = nullptr;
    QSpinBox* ranksSpin_ = nullptr;
    QComboBox* strategyCombo_ = nullptr;
    QSpinBox* hybridSpin_ = nullptr;
    QSpinBox* tpSpin_ = nullptr;
    QComboBox* precisionCombo_ = nullptr;
    QSpinBox* kSpin_ = nullptr;
    QComboBox* optimizerOffloadCombo_ = nullptr;
    QComboBox* paramOffloadCombo_ = nullptr;
};

} // namespace shardscope::widgets
