// The one unit grammar (support/Units.h): every spelling converts to the IR's units
// (bits per second, nanoseconds), and a blueprint parameter and an InfraGraph link
// accept the same spellings with the same result.
#include "support/Units.h"
#include "tests/blueprints/BlueprintTestUtil.h"
#include "tests/infragraph/InfraGraphTestUtil.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

using namespace infracc;
using namespace infracc::test;

namespace {

const std::pair<const char *, double> BandwidthCases[] = {
    {"100", 100e9},           {"100G", 100e9},         {"100Gbps", 100e9},
    {"100 Gb/s", 100e9},      {"100Gb/s", 100e9},      {"0.1Tbps", 100e9},
    {"0.1 Tb/s", 100e9},      {"0.1T", 100e9},         {"100000Mbps", 100e9},
    {"100000 Mb/s", 100e9},   {"100000M", 100e9},      {"1e8Kbps", 100e9},
    {"1e8 kbps", 100e9},      {"1e8Kb/s", 100e9},      {"1e8kb/s", 100e9},
    {"1e8K", 100e9},          {"1e11bps", 100e9},      {"1e11 b/s", 100e9},
    {"12.5GB/s", 100e9},      {"12.5GBps", 100e9},     {"12.5 GB/s", 100e9},
    {"12500MB/s", 100e9},     {"12500MBps", 100e9},    {"12500000KB/s", 100e9},
    {"12500000kB/s", 100e9},  {"12500000KBps", 100e9}, {"1.25e10B/s", 100e9},
    {"1.25e10Bps", 100e9},    {"0.0125TB/s", 100e9},   {"0.0125TBps", 100e9},
    {"100GT/s", 100e9},       {"100000MT/s", 100e9},   {"1KiB/s", 8192},
    {"1MiB/s", 8388608},      {"1GiB/s", 8589934592},  {"1TiB/s", 8796093022208},
};

const std::pair<const char *, double> DurationCases[] = {
    {"500", 500},   {"500ns", 500},      {"500 ns", 500},  {"0.5us", 500},     {"0.5 us", 500},
    {"0.5\xC2\xB5s", 500}, {"500000ps", 500}, {"0.0005ms", 500}, {"5e-7s", 500}, {"2ms", 2e6},
    {"1s", 1e9},    {"1.5us", 1500},
};

const char *const BadBandwidths[] = {"100 Gbit", "Gbps", "", "100gbps", "100 G b/s", "1..2G",
                                     "100Gbps/s", "fast"};
const char *const BadDurations[] = {"500 nsec", "ns", "", "5 min", "0.5 u s", "1..2us"};

TEST(UnitGrammar, EverySpellingOfABandwidthConverts) {
  for (auto [text, bps] : BandwidthCases) {
    std::optional<Bandwidth> b = parseBandwidth(text);
    ASSERT_TRUE(b) << text;
    EXPECT_DOUBLE_EQ(b->bitsPerSecond, bps) << text;
  }
}

TEST(UnitGrammar, EverySpellingOfALatencyConverts) {
  for (auto [text, ns] : DurationCases) {
    std::optional<Duration> d = parseDuration(text);
    ASSERT_TRUE(d) << text;
    EXPECT_DOUBLE_EQ(d->ns, ns) << text;
  }
}

TEST(UnitGrammar, OtherSpellingsAreRefused) {
  for (const char *text : BadBandwidths)
    EXPECT_FALSE(parseBandwidth(text)) << text;
  for (const char *text : BadDurations)
    EXPECT_FALSE(parseDuration(text)) << text;
}

// A two-host fabric whose one link has `bandwidth` and `latency` as written.
std::string linkDocument(const std::string &bandwidth, const std::string &latency) {
  return fmt::format(R"(name: units
devices:
- name: h
  components:
  - {{name: nic, count: 1, choice: nic}}
instances:
- {{name: host, device: h, count: 2}}
links:
- name: eth
  physical: {{bandwidth: "{}", latency: "{}"}}
edges:
- {{ep1: {{instance: "host[0]", component: nic}}, ep2: {{instance: "host[1]", component: nic}}, scheme: one2one, link: eth}}
)",
                     bandwidth, latency);
}

TEST(UnitGrammar, FabricFilesAndBlueprintParametersAcceptTheSameSpellings) {
  for (auto [text, bps] : BandwidthCases) {
    Expanded file = expandText(linkDocument(text, "0"));
    ASSERT_TRUE(file.graph) << text << file.log;
    ASSERT_TRUE(file.graph->link(0).bandwidth) << text;
    EXPECT_DOUBLE_EQ(file.graph->link(0).bandwidth->bitsPerSecond, bps) << text;
    Built bp = buildFabric(std::string("single_tier:hosts=2,bw=") + text);
    ASSERT_TRUE(bp.graph) << text << bp.log;
    bool found = false;
    for (const auto &l : bp.graph->links())
      if (l.name == "switch-link") {
        found = true;
        EXPECT_DOUBLE_EQ(l.bandwidth->bitsPerSecond, bps) << text;
      }
    EXPECT_TRUE(found);
  }
  for (auto [text, ns] : DurationCases) {
    Expanded file = expandText(linkDocument("100G", text));
    ASSERT_TRUE(file.graph) << text << file.log;
    EXPECT_DOUBLE_EQ(file.graph->link(0).latency->ns, ns) << text;
    Built bp = buildFabric(std::string("single_tier:hosts=2,lat=") + text);
    ASSERT_TRUE(bp.graph) << text << bp.log;
    for (const auto &l : bp.graph->links())
      if (l.name == "switch-link") {
        EXPECT_DOUBLE_EQ(l.latency->ns, ns) << text;
      }
  }
}

TEST(UnitGrammar, BadSpellingsGetLocatedErrorsListingTheAcceptedOnes) {
  Expanded file = expandText(linkDocument("100 Gbit", "0"));
  EXPECT_FALSE(file.graph);
  EXPECT_EQ(file.log, std::string("t.yaml:10:25: error: bandwidth '100 Gbit' of link 'eth' of the "
                                  "infrastructure is not a bandwidth; ") +
                          BandwidthSpellings + "\n  physical: {bandwidth: \"100 Gbit\", latency: "
                                               "\"0\"}\n                        ^\n");
  file = expandText(linkDocument("1G", "5 min"));
  EXPECT_EQ(file.log, std::string("t.yaml:10:40: error: latency '5 min' of link 'eth' of the "
                                  "infrastructure is not a latency; ") +
                          DurationSpellings + "\n  physical: {bandwidth: \"1G\", latency: "
                                              "\"5 min\"}\n                                 "
                                              "      ^\n");
  Built bp = buildFabric("single_tier:hosts=2,bw=100 Gbit");
  EXPECT_EQ(bp.log, std::string("-fabric: error: bw '100 Gbit' is not a bandwidth or none; ") +
                        BandwidthSpellings + "\n");
}

TEST(UnitGrammar, ZeroAndNegativeValuesAreRefused) {
  Expanded file = expandText(linkDocument("0Gbps", "0"));
  EXPECT_EQ(file.log, "t.yaml:10:25: error: bandwidth of link 'eth' of the infrastructure is "
                      "0Gbps; it must be more than 0\n  physical: {bandwidth: \"0Gbps\", latency: "
                      "\"0\"}\n                        ^\n");
}

} // namespace
