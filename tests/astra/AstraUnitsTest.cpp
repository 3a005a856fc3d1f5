// The unit conversions of the ASTRA-sim backends (backends/astra/AstraUnits.h): the
// analytical backend's "GB/s" is 2^30 bytes/s (astra-network-analytical's
// bw_GBps_to_Bpns), ns-3 strings are exact, sub-millisecond delays never truncate.
#include "backends/astra/AstraUnits.h"
#include "tests/astra/AstraReaders.h"

#include <gtest/gtest.h>

using namespace infracc::astra;
using namespace infracc::test;

TEST(AstraUnits, AnalyticalBandwidthIsGibibytesPerSecond) {
  // 400 Gb/s = 50e9 bytes/s = 46.566... x 2^30 bytes/s.
  EXPECT_DOUBLE_EQ(analyticalBandwidth(50e9), 46.566128730773926);
  EXPECT_DOUBLE_EQ(analyticalBandwidth(1073741824.0), 1.0);
  // What the backend reads back is the fabric's bandwidth, not 7.4 % more.
  EXPECT_DOUBLE_EQ(bytesPerSecondOfAnalytical(analyticalBandwidth(50e9)), 50e9);
  EXPECT_DOUBLE_EQ(bytesPerSecondOfAnalytical(analyticalBandwidth(112.5e9)), 112.5e9);
}

TEST(AstraUnits, Ns3DataRateIsExact) {
  EXPECT_EQ(ns3DataRate(400e9), "400Gbps");
  EXPECT_EQ(ns3DataRate(12.5e9), "12500Mbps");   // never "12Gbps"
  EXPECT_EQ(ns3DataRate(100e6), "100Mbps");
  EXPECT_EQ(ns3DataRate(1500), "1500bps");
  EXPECT_EQ(ns3DataRate(2000), "2Kbps");
  EXPECT_EQ(ns3DataRate(1234567), "1234567bps");
  EXPECT_EQ(*parseNs3DataRate("400Gbps"), 400e9);
  EXPECT_EQ(*parseNs3DataRate("12500Mbps"), 12.5e9);
  EXPECT_EQ(*parseNs3DataRate(ns3DataRate(123456789000)), 123456789000.0);
  EXPECT_FALSE(parseNs3DataRate("400GBps"));   // bytes: not an ns-3 suffix we write
  EXPECT_FALSE(parseNs3DataRate("fast"));
}

TEST(AstraUnits, Ns3TimeNeverTruncates) {
  EXPECT_EQ(ns3Time(500000), "500ns");          // 0.5 us, not "0ms"
  EXPECT_EQ(ns3Time(5000000), "5us");
  EXPECT_EQ(ns3Time(1000000000), "1ms");
  EXPECT_EQ(ns3Time(2500), "2500ps");
  EXPECT_EQ(ns3Time(57500), "57500ps");         // 57.5 ns
  EXPECT_EQ(ns3Time(0), "0ns");
  EXPECT_EQ(*parseNs3Time("0.0005ms"), 500000);   // the example topologies' spelling
  EXPECT_EQ(*parseNs3Time("500ns"), 500000);
  EXPECT_EQ(*parseNs3Time(ns3Time(57500)), 57500);
  EXPECT_EQ(*parseNs3Time("1s"), 1000000000000);
  EXPECT_FALSE(parseNs3Time("5 minutes"));
}
