// Units inside the IR are fixed; conversions happen only at the edges (frontends,
// backends), each through the named constructors and accessors below.
//
//   time       nanoseconds        (Duration; double, so fractional values survive)
//   size       bytes              (uint64_t everywhere)
//   bandwidth  bits per second    (Bandwidth)
//
// One grammar for bandwidths and latencies written as text, wherever they are written
// (-fabric=...,bw0=100Gbps, a blueprint parameter in a fabric file, a link's
// `bandwidth: 12.5GB/s` in an InfraGraph document, a switch_latency annotation,
// -intranode-bandwidth): parseBandwidth() and parseDuration() below.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cmath>
#include <cstdint>
#include <optional>

namespace infracc {

struct Duration {
  double ns = 0;

  static constexpr Duration nanoseconds(double v) { return {v}; }
  static constexpr Duration microseconds(double v) { return {v * 1e3}; }
  static constexpr Duration milliseconds(double v) { return {v * 1e6}; }
  static constexpr Duration seconds(double v) { return {v * 1e9}; }
  constexpr double inMicroseconds() const { return ns / 1e3; }
  constexpr double inMilliseconds() const { return ns / 1e6; }
  constexpr double inSeconds() const { return ns / 1e9; }
  constexpr double inPicoseconds() const { return ns * 1e3; }

  friend constexpr bool operator==(Duration a, Duration b) { return a.ns == b.ns; }
  friend constexpr Duration operator+(Duration a, Duration b) { return {a.ns + b.ns}; }
};

struct Bandwidth {
  double bitsPerSecond = 0;

  static constexpr Bandwidth bitsPerSec(double v) { return {v}; }
  static constexpr Bandwidth gigabitsPerSec(double v) { return {v * 1e9}; }
  static constexpr Bandwidth gigabytesPerSec(double v) { return {v * 8e9}; }
  /// One transfer carries one bit per lane: GT/s is taken as the raw line rate in
  /// Gb/s, without subtracting line-code overhead (128b/130b and the like).
  static constexpr Bandwidth gigatransfersPerSec(double v) { return {v * 1e9}; }

  constexpr double inGigabitsPerSec() const { return bitsPerSecond / 1e9; }
  /// A Gb/s value g with gigabitsPerSec(g) == *this exactly (bitsPerSecond / 1e9 can
  /// be one unit in the last place off), so that writing g and reading it back gives
  /// the same bandwidth. Every value made by the named constructors has one.
  double inGigabitsPerSecExact() const {
    double g = bitsPerSecond / 1e9;
    double up = g, down = g;
    for (int i = 0; i < 4; ++i) {
      if (up * 1e9 == bitsPerSecond)
        return up;
      if (down * 1e9 == bitsPerSecond)
        return down;
      up = std::nextafter(up, INFINITY);
      down = std::nextafter(down, -INFINITY);
    }
    return g;
  }
  constexpr double inGigabytesPerSec() const { return bitsPerSecond / 8e9; }
  constexpr double inMegabitsPerSec() const { return bitsPerSecond / 1e6; }
  constexpr double bytesPerNanosecond() const { return bitsPerSecond / 8e9; }
  /// Time to push one byte through the link (the LogGP G), in ns.
  constexpr double nanosecondsPerByte() const { return 8e9 / bitsPerSecond; }

  friend constexpr bool operator==(Bandwidth a, Bandwidth b) {
    return a.bitsPerSecond == b.bitsPerSecond;
  }
};

/// A number (`100`, `12.5`, `1e3`), optional blanks, then a unit: bits per second
/// `bps` `Kbps` `Mbps` `Gbps` `Tbps` (also written `b/s` `Kb/s` ... `Tb/s`, `kbps`
/// `kb/s`, or the bare prefix `K` `M` `G` `T`), bytes per second `Bps` `KBps` `MBps`
/// `GBps` `TBps` (also `B/s` `KB/s` `kB/s` ... `TB/s`), binary `KiB/s` `MiB/s` `GiB/s`
/// `TiB/s`, or transfers `MT/s` `GT/s` (one bit per transfer, the raw line rate). A
/// bare number is Gb/s, as InfraGraph's gigabits_per_second. nullopt when `s` is none
/// of these; the value may be 0 or negative (callers check the range).
std::optional<Bandwidth> parseBandwidth(llvm::StringRef s);
/// A number, optional blanks, then `ps` `ns` `us` (or `µs`) `ms` `s`; a bare number is ns.
std::optional<Duration> parseDuration(llvm::StringRef s);

/// What parseBandwidth() accepts, for error messages ("write a number and a unit, e.g. ...").
extern const char *const BandwidthSpellings;
/// What parseDuration() accepts, for error messages.
extern const char *const DurationSpellings;

} // namespace infracc
