#pragma once
// Human-readable byte counts. Both decimal (GB = 10^9, what vendors and the ZeRO paper use) and
// binary (GiB = 2^30, what nvidia-smi and allocators report) appear in the UI, always labelled.
#include <QString>
#include <cstdint>

namespace shardscope::widgets {

QString formatDecimal(double bytes);           // "16.6 GB"
QString formatBinary(double bytes);            // "15.5 GiB"
QString formatBoth(double bytes);              // "16.6 GB (15.5 GiB)"
QString formatBytesExact(std::uint64_t bytes); // "16 625 000 000" grouped per the UI locale
QString formatCount(double count);             // parameter counts: "7.50 B", "124 M"

} // namespace shardscope::widgets
