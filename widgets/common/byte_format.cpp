#include "common/byte_format.h"

#include <QLocale>
#include <array>
#include <cmath>

namespace shardscope::widgets {
namespace {

// Three significant digits are enough to compare strategies without hiding differences.
QString scaled(double value, double base, const std::array<const char*, 6>& units) {
    std::size_t i = 0;
    while (std::abs(value) >= base && i + 1 < units.size()) {
        value /= base;
        ++i;
    }
    const int decimals =
        i == 0 ? 0 : (std::abs(value) >= 100 ? 0 : (std::abs(value) >= 10 ? 1 : 2));
    return QStringLiteral("%1 %2").arg(QString::number(value, 'f', decimals),
                                       QLatin1String(units[i]));
}

} // namespace

QString formatDecimal(double bytes) {
    return scaled(bytes, 1000.0, {"B", "kB", "MB", "GB", "TB", "PB"});
}

QString formatBinary(double bytes) {
    return scaled(bytes, 1024.0, {"B", "KiB", "MiB", "GiB", "TiB", "PiB"});
}

QString formatBoth(double bytes) {
    return QStringLiteral("%1 (%2)").arg(formatDecimal(bytes), formatBinary(bytes));
}

QString formatBytesExact(std::uint64_t bytes) {
    return QLocale().toString(static_cast<qulonglong>(bytes));
}

QString formatCount(double count) {
    const std::array<const char*, 6> units = {"", "K", "M", "B", "T", "Q"};
    return scaled(count, 1000.0, units).trimmed();
}

} // namespace shardscope::widgets
