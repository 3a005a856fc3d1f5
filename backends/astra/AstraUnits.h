// The units ASTRA-sim's network backends read, and exact conversions into them.
//
//  * Analytical backends (network.yml): `bandwidth` is "GB/s", but the backend turns
//    it into bytes per ns as value * 2^30 / 10^9 (astra-network-analytical,
//    bw_GBps_to_Bpns: "1 GB is 2^30 B"), so the number to write is bytes/s / 2^30.
//    Writing decimal GB/s (bytes/s / 10^9) would make every link 7.4 % faster than the
//    fabric says. `latency` is ns per hop.
//  * ns-3 (topology file): ns-3 attribute strings, a DataRate such as `400Gbps` and a
//    Time such as `500ns`. Both are written in the largest unit that keeps the value a
//    whole number, so nothing is rounded: a 0.5 us link is `500ns`, never `0ms`.
#pragma once

#include <cstdint>
#include <string>

namespace infracc::astra {

/// Bytes per second -> ASTRA-sim analytical "GB/s" (2^30 bytes per second).
double analyticalBandwidth(double bytesPerSecond);

/// Bits per second -> an ns-3 DataRate string in the largest of Gbps, Mbps, Kbps, bps
/// that gives a whole number (`400Gbps`, `12500Mbps`, `1234567bps`); rates that are not
/// a whole number of bits per second are rounded to one (less than 1 bit/s apart).
std::string ns3DataRate(double bitsPerSecond);
/// Picoseconds -> an ns-3 Time string in the largest of ms, us, ns, ps that gives a
/// whole number (`1ms`, `500ns`, `2500ps`; zero is `0ns`).
std::string ns3Time(int64_t picoseconds);

} // namespace infracc::astra
