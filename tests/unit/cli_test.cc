#include "cli.h"

#include <gtest/gtest.h>

using namespace vrnic;

namespace {

CliResult parse(std::vector<std::string> a, CliOptions* o, std::string* err) {
    return parse_cli(a, o, err);
}

TEST(Cli, FullCommandLine) {
    CliOptions o;
    std::string err;
    ASSERT_EQ(CliResult::ok, parse({"--socket", "/tmp/s", "--guest-mem", "/dev/shm/g",
                                    "--guest-mem-size", "2147483648", "--bar2-size", "8M",
                                    "--idle-us", "20", "--spin-us", "50", "-v", "-v"},
                                   &o, &err))
        << err;
    EXPECT_EQ("/tmp/s", o.socket_path);
    EXPECT_EQ("/dev/shm/g", o.guest_mem_path);
    EXPECT_EQ(2ull << 30, o.guest_mem_size);
    EXPECT_EQ(8ull << 20, o.bar2_size);
    EXPECT_EQ(2, o.verbosity);
    EXPECT_EQ(20, o.idle_us);
    EXPECT_EQ(50, o.spin_us);
}

TEST(Cli, OneVmBySingleOptionsIsTheFirstOfTheFabric) {
    CliOptions o;
    std::string err;
    ASSERT_EQ(CliResult::ok,
              parse({"--socket", "/tmp/a", "--guest-mem", "/dev/shm/a", "--guest-mem-size", "1G",
                     "--vm", "/tmp/b,/dev/shm/b,512M", "--mtu", "1500", "--uplink", "/tmp/u"},
                    &o, &err))
        << err;
    ASSERT_EQ(2u, o.vms.size());
    EXPECT_EQ("/tmp/a", o.vms[0].socket_path);
    EXPECT_EQ("/dev/shm/a", o.vms[0].guest_mem_path);
    EXPECT_EQ(1ull << 30, o.vms[0].guest_mem_size);
    EXPECT_EQ("/tmp/b", o.vms[1].socket_path);
    EXPECT_EQ("/dev/shm/b", o.vms[1].guest_mem_path);
    EXPECT_EQ(512ull << 20, o.vms[1].guest_mem_size);
    EXPECT_EQ(1500u, o.mtu);
    EXPECT_EQ("/tmp/u", o.uplink);
}

TEST(Cli, VmsByVmAlone) {
    CliOptions o;
    std::string err;
    ASSERT_EQ(CliResult::ok,
              parse({"--vm", "s0,m0,4096", "--vm", "s1,m1,8K", "--vm", "s2,m2,0x3000"}, &o, &err))
        << err;
    ASSERT_EQ(3u, o.vms.size());
    EXPECT_EQ("s2", o.vms[2].socket_path);
    EXPECT_EQ("m2", o.vms[2].guest_mem_path);
    EXPECT_EQ(0x3000u, o.vms[2].guest_mem_size);
    EXPECT_EQ(0u, o.mtu);    // the default
    EXPECT_EQ("", o.uplink); // none
}

TEST(Cli, BadVmsAndMtuNameTheProblem) {
    struct Case {
        std::vector<std::string> args;
        const char* needle;
    } cases[] = {
        {{"--vm", "s,m"}, "SOCKET,RAMFILE,BYTES"},
        {{"--vm", ",m,4096"}, "SOCKET,RAMFILE,BYTES"},
        {{"--vm", "s,,4096"}, "SOCKET,RAMFILE,BYTES"},
        {{"--vm", "s,m,12x"}, "SOCKET,RAMFILE,BYTES"},
        {{"--vm", "s,m,4097"}, "4096"},
        {{"--vm", "s,m,0"}, "> 0"},
        {{"--vm", "s,m,4096", "--vm", "s,n,4096"}, "twice"},
        {{"--vm", "s,m,4096", "--uplink", "s"}, "both a VM's and the uplink's"},
        {{"--vm", "s,m,4096", "--uplink"}, "--uplink needs a value"},
        {{"--vm", "s,m,4096", "--mtu", "67"}, "68..9000"},
        {{"--vm", "s,m,4096", "--mtu", "9001"}, "68..9000"},
        {{"--vm", "s,m,4096", "--mac", "52:54:00:56:53"}, "xx:xx:xx:xx:xx:xx"},
        {{"--vm", "s,m,4096", "--mac", "52:54:00:56:53:0g"}, "xx:xx:xx:xx:xx:xx"},
        {{"--vm", "s,m,4096", "--mac", "52-54-00-56-53-01"}, "xx:xx:xx:xx:xx:xx"},
        {{"--vm", "s,m,4096", "--mac", "53:54:00:56:53:01"}, "not a unicast"},
        {{"--vm", "s,m,4096", "--mac", "00:00:00:00:00:00"}, "not a unicast"},
        {{"--vm", "s,m,4096", "--vm", "t,n,4096", "--mac", "52:54:00:56:53:ff"},
         "2 VMs do not fit"},
        {{"--vm", "s,m,4096", "--uplink-faults", "drop=3"}, "needs --uplink"},
        {{"--vm", "s,m,4096", "--uplink", "u", "--uplink-faults", "drop=60"},
         "--uplink-faults: drop must be"},
        {{}, "--socket"},
    };
    for (auto& c : cases) {
        CliOptions o;
        std::string err;
        EXPECT_EQ(CliResult::error, parse(c.args, &o, &err)) << c.needle;
        EXPECT_NE(std::string::npos, err.find(c.needle)) << err;
    }
}

TEST(Cli, MacOfTheFirstVm) {
    CliOptions o;
    std::string err;
    EXPECT_FALSE(o.mac); // DeviceParams' unless given
    ASSERT_EQ(
        CliResult::ok,
        parse({"--vm", "s,m,4096", "--vm", "t,n,4096", "--mac", "52:54:00:56:53:FE"}, &o, &err))
        << err;
    ASSERT_TRUE(o.mac);
    EXPECT_EQ((std::array<uint8_t, 6>{0x52, 0x54, 0x00, 0x56, 0x53, 0xfe}), *o.mac);
}

TEST(Cli, UplinkFaults) {
    CliOptions o;
    std::string err;
    ASSERT_EQ(CliResult::ok, parse({"--vm", "s,m,4096", "--uplink", "u", "--uplink-faults",
                                    "drop=2,dup=1,reorder=3,seed=5"},
                                   &o, &err))
        << err;
    EXPECT_EQ(2u, o.uplink_faults.drop);
    EXPECT_EQ(1u, o.uplink_faults.dup);
    EXPECT_EQ(3u, o.uplink_faults.reorder);
    EXPECT_EQ(5u, o.uplink_faults.seed);
}

TEST(Cli, Help) {
    CliOptions o;
    std::string err;
    EXPECT_EQ(CliResult::help, parse({"--help"}, &o, &err));
    EXPECT_NE(nullptr, strstr(cli_usage(), "--guest-mem-size"));
}

TEST(Cli, ErrorsNameTheProblem) {
    struct Case {
        std::vector<std::string> args;
        const char* needle;
    } cases[] = {
        {{"--guest-mem", "g", "--guest-mem-size", "4096"}, "--socket"},
        {{"--socket", "s", "--guest-mem-size", "4096"}, "--guest-mem"},
        {{"--socket", "s", "--guest-mem", "g"}, "--guest-mem-size"},
        {{"--socket", "s", "--guest-mem", "g", "--guest-mem-size", "12x"}, "12x"},
        {{"--socket", "s", "--guest-mem", "g", "--guest-mem-size", "-5"}, "-5"},
        {{"--socket", "s", "--guest-mem", "g", "--guest-mem-size", "4097"}, "4096"},
        {{"--socket", "s", "--guest-mem", "g", "--guest-mem-size", "1M", "--bar2-size", "3M"},
         "power of two"},
        {{"--socket", "s", "--guest-mem", "g", "--guest-mem-size", "1M", "--idle-us", "2000000"},
         "at most"},
        {{"--socket", "s", "--guest-mem", "g", "--guest-mem-size", "1M", "--spin-us", "2000000"},
         "--spin-us"},
        {{"--socket"}, "needs a value"},
        {{"--bogus"}, "--bogus"},
    };
    for (auto& c : cases) {
        CliOptions o;
        std::string err;
        EXPECT_EQ(CliResult::error, parse(c.args, &o, &err)) << c.needle;
        EXPECT_NE(std::string::npos, err.find(c.needle)) << err;
    }
}

TEST(Cli, SizeParsing) {
    uint64_t v;
    EXPECT_TRUE(parse_size("0x1000", &v));
    EXPECT_EQ(4096u, v);
    EXPECT_TRUE(parse_size("2G", &v));
    EXPECT_EQ(2ull << 30, v);
    EXPECT_TRUE(parse_size("64k", &v));
    EXPECT_EQ(65536u, v);
    EXPECT_FALSE(parse_size("", &v));
    EXPECT_FALSE(parse_size("1MB", &v));
    EXPECT_FALSE(parse_size("99999999999999999999", &v));
    EXPECT_FALSE(parse_size("17179869184G", &v)); // overflows when shifted
}

} // namespace
