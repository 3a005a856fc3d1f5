// Vendor figures for the links inside device blueprints, each with its source. All
// bandwidths are per direction (what one message can use); vendors usually quote
// bidirectional totals, which are halved here. An edge of a blueprint stands for every
// physical link between its two components, so a device multiplies the per-link figure
// by the links its hardware has there (stated where it does).
//
// Latencies: vendors publish a port-to-port latency for PCIe switches (below) and none
// for NVLink, NVSwitch, NVLink-C2C, Infinity Fabric, QPI/UPI or xGMI hops; those links
// carry no latency (a path through them counts 0 ns for them, and -sim-model=topo uses
// -L for a path on which nothing has a latency, with a warning). A PCIe link carries
// half the switch's port-to-port latency, so that a path through one switch (a slot
// stands for the switch behind it) pays it once.
#pragma once

#include "support/Units.h"

namespace infracc::blueprints::figures {

// --- PCI Express x16 ---------------------------------------------------------------------
// PCI-SIG, "PCI Express Base Specification" revisions 3.0/4.0/5.0: 8, 16 and 32 GT/s per
// lane, x16 totals of 32, 64 and 128 GB/s (both directions) as PCI-SIG tabulates them.
inline constexpr Bandwidth PcieGen3x16 = Bandwidth::gigabytesPerSec(16);
inline constexpr Bandwidth PcieGen4x16 = Bandwidth::gigabytesPerSec(32);
inline constexpr Bandwidth PcieGen5x16 = Bandwidth::gigabytesPerSec(64);
// Broadcom: PEX88000 (Gen4) switches have a cut-through latency of 105 ns between two x16
// ports, "30% lower than the PEX9700 Gen3 family" (so about 150 ns for Gen3 switches such
// as the PLX/Broadcom PEX8796 of DGX-1 and DGX-2); PEX89000 (Gen5, "Atlas 2", as in DGX
// H100 and the MI300X host) 115 ns. Half of that on each link (see above).
inline constexpr Duration PcieGen3Hop = Duration::nanoseconds(150.0 / 2);
inline constexpr Duration PcieGen4Hop = Duration::nanoseconds(105.0 / 2);
inline constexpr Duration PcieGen5Hop = Duration::nanoseconds(115.0 / 2);

// --- NVLink, per link ----------------------------------------------------------------------
// NVIDIA Tesla P100 whitepaper: 4 NVLink 1 links of 40 GB/s bidirectional (160 GB/s).
inline constexpr Bandwidth NvLink1 = Bandwidth::gigabytesPerSec(20);
// NVIDIA Tesla V100 whitepaper: 6 NVLink 2 links, 300 GB/s bidirectional in total.
inline constexpr Bandwidth NvLink2 = Bandwidth::gigabytesPerSec(25);
// NVIDIA A100 Tensor Core GPU Architecture whitepaper: 12 NVLink 3 links, 600 GB/s total.
inline constexpr Bandwidth NvLink3 = Bandwidth::gigabytesPerSec(25);
// NVIDIA H100 Tensor Core GPU Architecture whitepaper: 18 NVLink 4 links, 900 GB/s total.
inline constexpr Bandwidth NvLink4 = Bandwidth::gigabytesPerSec(25);
// NVIDIA Blackwell (B200/GB200) datasheets: 18 NVLink 5 links, 1.8 TB/s total.
inline constexpr Bandwidth NvLink5 = Bandwidth::gigabytesPerSec(50);
// NVIDIA Grace Hopper / Grace Blackwell superchips: NVLink-C2C, 900 GB/s bidirectional.
inline constexpr Bandwidth NvLinkC2C = Bandwidth::gigabytesPerSec(450);

// --- CPU to CPU ----------------------------------------------------------------------------
// Intel ARK, Xeon E5-2698 v4: 2 QPI links at 9.6 GT/s, 2 bytes per transfer each way.
inline constexpr Bandwidth QpiBroadwell = Bandwidth::gigabytesPerSec(2 * 9.6 * 2);
// Intel ARK, Xeon Platinum 8168: 3 UPI links at 10.4 GT/s, 2 bytes per transfer each way.
inline constexpr Bandwidth UpiSkylake = Bandwidth::gigabytesPerSec(3 * 10.4 * 2);
// Intel ARK, 4th generation Xeon Scalable (e.g. Platinum 8480+): 4 UPI 2.0 links at 16 GT/s.
inline constexpr Bandwidth UpiSapphireRapids = Bandwidth::gigabytesPerSec(4 * 16.0 * 2);
// AMD, 2nd generation EPYC (7742, "Rome"): 4 x16 xGMI links between the sockets at up to
// 18 GT/s (18 Gb/s per lane, 36 GB/s per link each way).
inline constexpr Bandwidth XgmiRome = Bandwidth::gigabytesPerSec(4 * 16 * 18.0 / 8);
// AMD, 4th generation EPYC (9654, "Genoa"): 4 x16 xGMI-3 links at 32 Gb/s per lane.
inline constexpr Bandwidth XgmiGenoa = Bandwidth::gigabytesPerSec(4 * 16 * 32.0 / 8);

// --- AMD Instinct MI300X -------------------------------------------------------------------
// AMD Instinct MI300X data sheet: 7 Infinity Fabric links per GPU (one to each other GPU
// of the 8-GPU platform), 128 GB/s peak bidirectional each; host interface PCIe Gen5 x16.
inline constexpr Bandwidth InfinityFabricMi300x = Bandwidth::gigabytesPerSec(64);

} // namespace infracc::blueprints::figures
