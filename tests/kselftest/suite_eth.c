// SPDX-License-Identifier: GPL-2.0
/*
 * The Ethernet function end to end, through MAC loopback (device interface
 * 1.1, SET_ETH): the loopback feature is toggled with SIOCETHTOOL like
 * `ethtool -K DEV loopback on`, frames go out through an AF_PACKET socket,
 * the device hands them to its own RX ring, and the same socket receives
 * them. Every byte and every netdev counter is checked; the IP stack's own
 * traffic (UDP multicast without local loop, fragmented and reassembled)
 * is carried the same way. The interface is left as it was found: other
 * suites use its IPv4 address for the RoCE GID.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <linux/ethtool.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mount.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "suite.h"

#define ETH_TEST_PROTO	0x88b5		/* IEEE 802 local experimental */
#define RX_RING		128		/* VRNIC_ETH_RX_LOG_DEPTH in the driver */
#define BURST		(3 * RX_RING)
#define MCAST_GROUP	"239.77.0.1"
#define MCAST_PORT	47123
#define TMP_ADDR	"192.168.79.1"
#define RT_RUNTIME	"/proc/sys/kernel/sched_rt_runtime_us"

struct eth_stats {
	uint64_t tx_packets, tx_bytes, tx_dropped, tx_errors;
	uint64_t rx_packets, rx_bytes, rx_dropped, rx_errors;
	uint64_t rx_missed, rx_length;
};

/* Frames and bytes an ETH_P_ALL tap saw each way. */
struct tap_count {
	uint64_t out_packets, out_bytes, in_packets, in_bytes;
};

/* The net_device of vrnic0's PCI function. */
static int find_netdev(char *name, size_t len)
{
	struct dirent *e;
	int ret = -1;
	DIR *d;

	d = opendir(SU_SYS "/device/net");
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && strlen(e->d_name) < len) {
			strcpy(name, e->d_name);
			ret = 0;
			break;
		}
	closedir(d);
	return ret;
}

/* The PCI name of vrnic0's function ("0000:00:05.0"). */
static int pci_name(char *out, size_t len)
{
	char link[256];
	ssize_t n;

	n = readlink(SU_SYS "/device", link, sizeof(link) - 1);
	if (n <= 0)
		return -1;
	link[n] = 0;
	snprintf(out, len, "%s", strrchr(link, '/') + 1);
	return 0;
}

/* Interrupts on the Ethernet vector (vector 1), all CPUs. */
static uint64_t eth_irqs(void)
{
	char pci[64], want[96], line[1024], *p, *end;
	uint64_t sum = 0;
	FILE *f;

	if (pci_name(pci, sizeof(pci)))
		return 0;
	snprintf(want, sizeof(want), "vrnic-eth@%s", pci);
	f = fopen("/proc/interrupts", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, want))
			continue;
		p = strchr(line, ':');
		while (p) {
			unsigned long long v = strtoull(p + 1, &end, 10);

			if (end == p + 1)
				break;
			sum += v;
			p = end;
		}
	}
	fclose(f);
	return sum;
}

static uint64_t stat_of(const char *ifname, const char *what)
{
	char path[256], line[64];

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s",
		 ifname, what);
	if (su_read_line(path, line, sizeof(line)))
		return ~0ULL;
	return strtoull(line, NULL, 10);
}

static void read_stats(const char *ifname, struct eth_stats *s)
{
	s->tx_packets = stat_of(ifname, "tx_packets");
	s->tx_bytes = stat_of(ifname, "tx_bytes");
	s->tx_dropped = stat_of(ifname, "tx_dropped");
	s->tx_errors = stat_of(ifname, "tx_errors");
	s->rx_packets = stat_of(ifname, "rx_packets");
	s->rx_bytes = stat_of(ifname, "rx_bytes");
	s->rx_dropped = stat_of(ifname, "rx_dropped");
	s->rx_errors = stat_of(ifname, "rx_errors");
	s->rx_missed = stat_of(ifname, "rx_missed_errors");
	s->rx_length = stat_of(ifname, "rx_length_errors");
}

/* ------------------------------------------------------------------ */
/* SIOCETHTOOL: the "loopback" bit of the ETH_SS_FEATURES string set    */
/* ------------------------------------------------------------------ */

static int ethtool_ioctl(const char *ifname, void *data)
{
	struct ifreq ifr = {};
	int fd, ret;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = data;
	ret = ioctl(fd, SIOCETHTOOL, &ifr);	/* SFEATURES: >= 0 */
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int feature_bit(const char *ifname, const char *feature)
{
	struct {
		struct ethtool_sset_info hdr;
		uint32_t len;
	} info = { .hdr = { .cmd = ETHTOOL_GSSET_INFO,
			    .sset_mask = 1ULL << ETH_SS_FEATURES } };
	struct ethtool_gstrings *gs;
	int i, n, bit = -1;

	if (ethtool_ioctl(ifname, &info) || !info.hdr.sset_mask)
		return -1;
	n = info.len;
	gs = calloc(1, sizeof(*gs) + n * ETH_GSTRING_LEN);
	if (!gs)
		return -1;
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_FEATURES;
	gs->len = n;
	if (!ethtool_ioctl(ifname, gs))
		for (i = 0; i < n && bit < 0; i++)
			if (!strncmp((char *)gs->data + i * ETH_GSTRING_LEN,
				     feature, ETH_GSTRING_LEN))
				bit = i;
	free(gs);
	return bit;
}

#define FEATURE_BLOCKS 4	/* 128 feature bits */

struct features {
	struct ethtool_gfeatures hdr;
	struct ethtool_get_features_block b[FEATURE_BLOCKS];
};

/*
 * 0/1: the feature's active state; -1 on error. *avail: changeable;
 * *words: the kernel's feature word count, which SFEATURES must match.
 */
static int feature_get(const char *ifname, int bit, int *avail,
		       uint32_t *words)
{
	struct features f = { .hdr = { .cmd = ETHTOOL_GFEATURES,
				       .size = FEATURE_BLOCKS } };
	uint32_t m = 1U << (bit % 32);

	if (bit < 0 || bit >= 32 * FEATURE_BLOCKS ||
	    ethtool_ioctl(ifname, &f) || f.hdr.size > FEATURE_BLOCKS)
		return -1;
	if (avail)
		*avail = !!(f.b[bit / 32].available & m);
	if (words)
		*words = f.hdr.size;
	return !!(f.b[bit / 32].active & m);
}

static int feature_set(const char *ifname, int bit, int on)
{
	struct {
		struct ethtool_sfeatures hdr;
		struct ethtool_set_features_block b[FEATURE_BLOCKS];
	} f = { .hdr = { .cmd = ETHTOOL_SFEATURES } };
	uint32_t m = 1U << (bit % 32);
	int ret;

	if (feature_get(ifname, bit, NULL, &f.hdr.size) < 0 ||
	    bit >= 32 * (int)f.hdr.size)
		return -EINVAL;
	f.b[bit / 32].valid = m;
	f.b[bit / 32].requested = on ? m : 0;
	ret = ethtool_ioctl(ifname, &f);
	/* > 0 (ETHTOOL_F_*): the request was not applied as asked. */
	if (ret == 0 && feature_get(ifname, bit, NULL, NULL) != !!on)
		return -EIO;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Frames                                                              */
/* ------------------------------------------------------------------ */

static uint8_t frame_byte(uint32_t seq, uint32_t len, uint32_t i)
{
	return (uint8_t)(seq * 131 + len * 7 + i * 13 + (i >> 8));
}

/* To and from our own MAC; from byte 14 a sequence number (if it fits)
 * and a pattern that depends on the sequence number and the length.
 */
static void make_frame(uint8_t *f, uint32_t len, const uint8_t *mac,
		       uint32_t seq)
{
	uint32_t i;

	memcpy(f, mac, 6);
	memcpy(f + 6, mac, 6);
	f[12] = ETH_TEST_PROTO >> 8;
	f[13] = ETH_TEST_PROTO & 0xff;
	for (i = 14; i < len; i++)
		f[i] = frame_byte(seq, len, i);
	if (len >= 18) {
		uint32_t be = htonl(seq);

		memcpy(f + 14, &be, 4);
	}
}

/* Index of the first byte of @got that differs from frame @seq, or -1. */
static long frame_diff(const uint8_t *got, uint32_t len, const uint8_t *mac,
		       uint32_t seq)
{
	uint8_t want[ETH_FRAME_LEN + 9000];
	uint32_t i;

	make_frame(want, len, mac, seq);
	for (i = 0; i < len; i++)
		if (got[i] != want[i])
			return i;
	return -1;
}

static int packet_socket(int ifindex, int proto)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(proto),
		.sll_ifindex = ifindex,
	};
	int fd, big = 64 << 20;

	fd = socket(AF_PACKET, SOCK_RAW, htons(proto));
	if (fd < 0)
		return -1;
	/* Room for a whole burst of 9 KiB receive buffers, and for a burst
	 * in flight while TX completions are held up.
	 */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int send_frame(int fd, int ifindex, const uint8_t *f, uint32_t len)
{
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET,
		.sll_ifindex = ifindex,
		.sll_halen = 6,
	};
	long end = su_now_ms() + 5000;
	ssize_t n;

	memcpy(to.sll_addr, f, 6);
	for (;;) {
		n = sendto(fd, f, len, MSG_DONTWAIT, (struct sockaddr *)&to,
			   sizeof(to));
		if (n == (ssize_t)len)
			return 0;
		/* qdisc or socket buffer full: wait, a while */
		if (n < 0 && (errno == ENOBUFS || errno == EAGAIN) &&
		    su_now_ms() < end) {
			su_sleep_ms(1);
			continue;
		}
		return -1;
	}
}

/* One frame within @ms, or -1 (length in *len). */
static int recv_frame(int fd, uint8_t *buf, size_t cap, uint32_t *len, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) != 1)
		return -1;
	n = recv(fd, buf, cap, MSG_TRUNC);
	if (n < 0)
		return -1;
	*len = n;
	return 0;
}

/* Frames the socket dropped for want of buffer space since the last call. */
static unsigned int socket_drops(int fd)
{
	struct tpacket_stats st = {};
	socklen_t l = sizeof(st);

	if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &l))
		return ~0U;
	return st.tp_drops;
}

static void tap_drain(int fd, struct tap_count *c)
{
	static uint8_t buf[65536];
	struct sockaddr_ll from;
	socklen_t fl;
	ssize_t n;

	for (;;) {
		fl = sizeof(from);
		n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC,
			     (struct sockaddr *)&from, &fl);
		if (n < 0)
			return;
		if (from.sll_pkttype == PACKET_OUTGOING) {
			c->out_packets++;
			c->out_bytes += n;
		} else {
			c->in_packets++;
			c->in_bytes += n;
		}
	}
}

/*
 * Counters against what a tap on the interface saw over the same window:
 * every frame the stack handed the driver was sent (none dropped or in
 * error), every frame the driver received reached the stack, and in
 * loopback every frame sent came back or was counted missed.
 */
static void check_counters(struct __test_metadata *_metadata,
			   const struct eth_stats *a, const struct eth_stats *b,
			   const struct tap_count *t, int loopback)
{
	EXPECT_EQ(t->out_packets, b->tx_packets - a->tx_packets);
	EXPECT_EQ(t->out_bytes, b->tx_bytes - a->tx_bytes);
	EXPECT_EQ(t->in_packets, b->rx_packets - a->rx_packets);
	EXPECT_EQ(t->in_bytes, b->rx_bytes - a->rx_bytes);
	EXPECT_EQ(0, b->tx_dropped - a->tx_dropped);
	EXPECT_EQ(0, b->tx_errors - a->tx_errors);
	EXPECT_EQ(0, b->rx_dropped - a->rx_dropped);
	EXPECT_EQ(0, b->rx_errors - a->rx_errors);
	EXPECT_EQ(0, b->rx_length - a->rx_length);
	if (loopback) {
		EXPECT_EQ(b->tx_packets - a->tx_packets,
			  b->rx_packets - a->rx_packets +
			  b->rx_missed - a->rx_missed);
	} else {
		EXPECT_EQ(0, b->rx_packets - a->rx_packets);
		EXPECT_EQ(0, b->rx_missed - a->rx_missed);
	}
}

static int sysctl_rw(const char *path, const char *set, char *old, size_t len)
{
	FILE *f;

	if (old && su_read_line(path, old, len))
		return -1;
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(set, f);
	return fclose(f) ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* The fixture                                                         */
/* ------------------------------------------------------------------ */

FIXTURE(eth) {
	char ifname[IFNAMSIZ];
	int ifindex;
	int lb_bit;
	int was_up;
	int fd;		/* ETH_TEST_PROTO frames */
	int tap;	/* ETH_P_ALL: every frame each way */
	uint8_t mac[6];
	uint8_t buf[ETH_FRAME_LEN + 9000];
	/* what a test changed, for the teardown to put back */
	unsigned int mtu;
	int added_addr;
	char old_accept[16], old_rpf[16], old_rt[32];
	int threaded;
};

FIXTURE_SETUP(eth)
{
	char path[256], line[64];
	unsigned int m[6];
	int i;

	self->fd = self->tap = -1;
	self->lb_bit = -1;
	ASSERT_EQ(0, find_netdev(self->ifname, sizeof(self->ifname)));
	self->ifindex = if_nametoindex(self->ifname);
	ASSERT_LT(0, self->ifindex);
	snprintf(path, sizeof(path), "/sys/class/net/%s/address", self->ifname);
	ASSERT_EQ(0, su_read_line(path, line, sizeof(line)));
	ASSERT_EQ(6, sscanf(line, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2],
			    &m[3], &m[4], &m[5]));
	for (i = 0; i < 6; i++)
		self->mac[i] = m[i];
	snprintf(path, sizeof(path), "/sys/class/net/%s/flags", self->ifname);
	ASSERT_EQ(0, su_read_line(path, line, sizeof(line)));
	self->was_up = strtoul(line, NULL, 16) & IFF_UP;
	ASSERT_EQ(0, su_sh("ip link set dev %s up", self->ifname));

	self->lb_bit = feature_bit(self->ifname, "loopback");
	ASSERT_LE(0, self->lb_bit);
	self->fd = packet_socket(self->ifindex, ETH_TEST_PROTO);
	ASSERT_LE(0, self->fd);
	self->tap = packet_socket(self->ifindex, ETH_P_ALL);
	ASSERT_LE(0, self->tap);
}

static void conf_path(char *path, size_t len, const char *ifname,
		      const char *what)
{
	snprintf(path, len, "/proc/sys/net/ipv4/conf/%s/%s", ifname, what);
}

FIXTURE_TEARDOWN(eth)
{
	char path[256];

	if (self->lb_bit >= 0)
		feature_set(self->ifname, self->lb_bit, 0);
	if (self->mtu)
		su_sh("ip link set dev %s mtu %u", self->ifname, self->mtu);
	conf_path(path, sizeof(path), self->ifname, "accept_local");
	if (self->old_accept[0])
		sysctl_rw(path, self->old_accept, NULL, 0);
	conf_path(path, sizeof(path), self->ifname, "rp_filter");
	if (self->old_rpf[0])
		sysctl_rw(path, self->old_rpf, NULL, 0);
	if (self->added_addr)
		su_sh("ip addr del %s/24 dev %s", TMP_ADDR, self->ifname);
	if (self->old_rt[0])
		sysctl_rw(RT_RUNTIME, self->old_rt, NULL, 0);
	snprintf(path, sizeof(path), "/sys/class/net/%s/threaded",
		 self->ifname);
	if (self->threaded)
		sysctl_rw(path, "0", NULL, 0);
	if (self->fd >= 0)
		close(self->fd);
	if (self->tap >= 0)
		close(self->tap);
	if (!self->was_up)
		su_sh("ip link set dev %s down", self->ifname);
}

/*
 * Starts a counted window: earlier frames completed (the counters stand
 * still for 100 ms), nothing queued on either socket.
 */
static void window_open(FIXTURE_DATA(eth) *self, struct eth_stats *s)
{
	struct tap_count junk = {};
	struct eth_stats prev;
	uint32_t len;
	int i;

	read_stats(self->ifname, s);
	for (i = 0; i < 20; i++) {
		prev = *s;
		su_sleep_ms(100);
		read_stats(self->ifname, s);
		if (!memcmp(&prev, s, sizeof(prev)))
			break;
	}
	while (!recv_frame(self->fd, self->buf, sizeof(self->buf), &len, 0))
		;
	socket_drops(self->fd);
	tap_drain(self->tap, &junk);
	socket_drops(self->tap);
	read_stats(self->ifname, s);
}

/* Loopback is a feature ethtool can change; it starts off and goes back. */
TEST_F(eth, loopback_feature_toggles)
{
	int avail = 0;

	EXPECT_EQ(0, feature_get(self->ifname, self->lb_bit, &avail, NULL));
	EXPECT_EQ(1, avail);
	ASSERT_EQ(0, feature_set(self->ifname, self->lb_bit, 1));
	EXPECT_EQ(1, feature_get(self->ifname, self->lb_bit, NULL, NULL));
	ASSERT_EQ(0, feature_set(self->ifname, self->lb_bit, 0));
	EXPECT_EQ(0, feature_get(self->ifname, self->lb_bit, NULL, NULL));
}

/* Carrier is the device's port state, through down and up. */
TEST_F(eth, carrier_follows_port_state)
{
	char path[256], pci[64], line[64];
	unsigned int port_state = 0;
	FILE *f;

	ASSERT_EQ(0, pci_name(pci, sizeof(pci)));
	snprintf(path, sizeof(path), "/sys/kernel/debug/vrnic/%s/state", pci);
	if (access("/sys/kernel/debug/vrnic", F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f) TH_LOG("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		sscanf(line, "port_state %u", &port_state);
	fclose(f);
	ASSERT_EQ(VRNIC_PORT_ACTIVE, port_state);

	snprintf(path, sizeof(path), "/sys/class/net/%s/carrier", self->ifname);
	ASSERT_EQ(0, su_read_line(path, line, sizeof(line)));
	EXPECT_STREQ("1", line);
	ASSERT_EQ(0, su_sh("ip link set dev %s down", self->ifname));
	EXPECT_NE(0, su_read_line(path, line, sizeof(line)));	/* -EINVAL */
	ASSERT_EQ(0, su_sh("ip link set dev %s up", self->ifname));
	ASSERT_EQ(0, su_read_line(path, line, sizeof(line)));
	EXPECT_STREQ("1", line);
	snprintf(path, sizeof(path), "/sys/class/net/%s/operstate",
		 self->ifname);
	ASSERT_EQ(0, su_read_line(path, line, sizeof(line)));
	EXPECT_STREQ("up", line);
}

/* Every size from a bare header to the MTU, one by one, byte for byte. */
TEST_F(eth, frames_come_back_byte_for_byte)
{
	uint32_t lens[] = { 14, 15, 17, 18, 60, 61, 64, 127, 128, 1000, 1499,
			    1500, 1513, 1514 };
	struct tap_count t = {};
	struct eth_stats a, b;
	uint8_t f[ETH_FRAME_LEN + 1];
	uint32_t i, len;
	uint64_t irqs;
	long diff, t0;

	ASSERT_EQ(0, feature_set(self->ifname, self->lb_bit, 1));
	window_open(self, &a);
	irqs = eth_irqs();
	t0 = su_now_ms();
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		make_frame(f, lens[i], self->mac, i);
		ASSERT_EQ(0, send_frame(self->fd, self->ifindex, f, lens[i]));
		ASSERT_EQ(0, recv_frame(self->fd, self->buf, sizeof(self->buf),
					&len, 2000))
			TH_LOG("frame %u (%u bytes) did not come back", i,
			       lens[i]);
		ASSERT_EQ(lens[i], len);
		diff = frame_diff(self->buf, len, self->mac, i);
		EXPECT_EQ(-1, diff) TH_LOG("frame %u (%u bytes): byte %ld",
					   i, len, diff);
	}
	/*
	 * Each came back on its own vector-1 interrupt, not through the
	 * driver's once-a-second watchdog poll.
	 */
	EXPECT_LE(sizeof(lens) / sizeof(lens[0]), eth_irqs() - irqs);
	EXPECT_GT(3000, su_now_ms() - t0);
	/* A frame longer than MTU + header does not leave the socket. */
	make_frame(f, ETH_FRAME_LEN + 1, self->mac, 99);
	EXPECT_NE(0, send_frame(self->fd, self->ifindex, f, ETH_FRAME_LEN + 1));
	su_sleep_ms(200);
	read_stats(self->ifname, &b);
	tap_drain(self->tap, &t);
	EXPECT_EQ(0, socket_drops(self->tap));
	EXPECT_LE(sizeof(lens) / sizeof(lens[0]), t.out_packets);
	check_counters(_metadata, &a, &b, &t, 1);
	EXPECT_EQ(0, b.rx_missed - a.rx_missed);
}

/* Jumbo frames up to the device's largest MTU. */
TEST_F(eth, jumbo_frames_come_back)
{
	uint32_t lens[] = { 1515, 4000, 9000, 9014 };
	char path[256], line[32];
	uint8_t *f = malloc(9014);
	uint32_t i, len;
	long diff;

	ASSERT_NE(NULL, f);
	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", self->ifname);
	ASSERT_EQ(0, su_read_line(path, line, sizeof(line)));
	self->mtu = strtoul(line, NULL, 10);
	ASSERT_EQ(0, su_sh("ip link set dev %s mtu 9000", self->ifname));
	ASSERT_EQ(0, feature_set(self->ifname, self->lb_bit, 1));
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		make_frame(f, lens[i], self->mac, 1000 + i);
		EXPECT_EQ(0, send_frame(self->fd, self->ifindex, f, lens[i]));
		if (recv_frame(self->fd, self->buf, sizeof(self->buf), &len,
			       2000)) {
			EXPECT_TRUE(0) TH_LOG("%u bytes did not come back",
					      lens[i]);
			continue;
		}
		EXPECT_EQ(lens[i], len);
		diff = frame_diff(self->buf, len, self->mac, 1000 + i);
		EXPECT_EQ(-1, diff) TH_LOG("%u bytes: byte %ld", len, diff);
	}
	free(f);
}

/*
 * Receives a looped burst of @sent numbered ETH_FRAME_LEN frames until none
 * comes for 1 s: each whole and in order, though some may be missing. Then
 * closes the counting window (@b, @t). Returns how many came back.
 */
static uint32_t burst_back(struct __test_metadata *_metadata,
			   FIXTURE_DATA(eth) *self, uint32_t sent,
			   const struct eth_stats *a, struct eth_stats *b,
			   struct tap_count *t)
{
	uint32_t len, seq, got = 0, next = 0;
	long diff;

	while (!recv_frame(self->fd, self->buf, sizeof(self->buf), &len,
			   1000)) {
		ASSERT_EQ(ETH_FRAME_LEN, len);
		memcpy(&seq, self->buf + 14, 4);
		seq = ntohl(seq);
		ASSERT_LE(next, seq) TH_LOG("frame %u after %u", seq, next);
		ASSERT_GT(BURST, seq);
		diff = frame_diff(self->buf, len, self->mac, seq);
		EXPECT_EQ(-1, diff) TH_LOG("frame %u: byte %ld", seq, diff);
		next = seq + 1;
		got++;
	}
	EXPECT_EQ(0, socket_drops(self->fd));
	read_stats(self->ifname, b);
	tap_drain(self->tap, t);
	EXPECT_EQ(0, socket_drops(self->tap));
	TH_LOG("%u frames sent, %u back, %llu missed by the device", sent, got,
	       (unsigned long long)(b->rx_missed - a->rx_missed));
	return got;
}

/*
 * Of our frames, each came back or was missed; the stack may have sent
 * frames of its own in the window (IPv6 ND, MLD), and those the device
 * missed too are the only excess allowed.
 */
static void check_ours_missed(struct __test_metadata *_metadata,
			      uint32_t sent, uint32_t got,
			      const struct eth_stats *a,
			      const struct eth_stats *b)
{
	uint64_t missed = b->rx_missed - a->rx_missed;
	uint64_t foreign = b->tx_packets - a->tx_packets - sent;

	EXPECT_LE(sent, b->tx_packets - a->tx_packets);
	EXPECT_LE(sent - got, missed);
	EXPECT_GE(sent - got + foreign, missed);
}

/*
 * Three RX rings' worth back to back: every frame comes back whole and in
 * order, or is counted missed by the device; none is lost silently.
 */
TEST_F(eth, burst_beyond_rx_ring)
{
	struct tap_count t = {};
	uint8_t f[ETH_FRAME_LEN];
	struct eth_stats a, b;
	uint32_t got, sent;

	ASSERT_EQ(0, feature_set(self->ifname, self->lb_bit, 1));
	window_open(self, &a);
	for (sent = 0; sent < BURST; sent++) {
		make_frame(f, ETH_FRAME_LEN, self->mac, sent);
		ASSERT_EQ(0, send_frame(self->fd, self->ifindex, f,
					ETH_FRAME_LEN));
	}
	got = burst_back(_metadata, self, sent, &a, &b, &t);
	EXPECT_LT(0, got);
	check_ours_missed(_metadata, sent, got, &a, &b);
	check_counters(_metadata, &a, &b, &t, 1);
}

/* ------------------------------------------------------------------ */
/* Holding NAPI off: the RX ring fills for certain                     */
/* ------------------------------------------------------------------ */

struct hog {
	pthread_t thread;
	atomic_int running;
	atomic_int stop;
};

/*
 * A SCHED_FIFO spinner on CPU 1: no normal task runs there meanwhile. It
 * gives up by itself after 3 s, whatever happens to the test.
 */
static void *hog_main(void *arg)
{
	long end = su_now_ms() + 3000;
	struct hog *h = arg;

	atomic_store(&h->running, 1);
	while (!atomic_load(&h->stop) && su_now_ms() < end)
		;
	return NULL;
}

static int pin(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set);
}

static int hog_start(struct hog *h)
{
	struct sched_param sp = { .sched_priority = 1 };
	pthread_attr_t at;
	cpu_set_t set;
	int err;

	atomic_store(&h->running, 0);
	atomic_store(&h->stop, 0);
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	pthread_attr_init(&at);
	pthread_attr_setinheritsched(&at, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&at, SCHED_FIFO);
	pthread_attr_setschedparam(&at, &sp);
	pthread_attr_setaffinity_np(&at, sizeof(set), &set);
	err = pthread_create(&h->thread, &at, hog_main, h);
	pthread_attr_destroy(&at);
	if (err)
		return -err;
	while (!atomic_load(&h->running))
		su_sleep_ms(1);
	return 0;
}

static void hog_stop(struct hog *h)
{
	atomic_store(&h->stop, 1);
	pthread_join(h->thread, NULL);
}

/* The pid of the interface's threaded-NAPI kthread ("napi/IF-ID"). */
static pid_t napi_thread(const char *ifname)
{
	char path[300], comm[64], want[IFNAMSIZ + 8];
	struct dirent *e;
	pid_t pid = -1;
	DIR *d;

	snprintf(want, sizeof(want), "napi/%s-", ifname);
	d = opendir("/proc");
	if (!d)
		return -1;
	while (pid < 0 && (e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (!su_read_line(path, comm, sizeof(comm)) &&
		    !strncmp(comm, want, strlen(want)))
			pid = atoi(e->d_name);
	}
	closedir(d);
	return pid;
}

/*
 * With the driver's NAPI (threaded) kept off the CPUs, nothing refills the
 * RX ring: of a TX ring's worth of looped frames, the ring's worth arrives
 * and the rest is dropped by the device and counted in rx_missed_errors.
 * Then NAPI runs again and everything still queued comes back.
 */
TEST_F(eth, rx_ring_full_drops_are_counted)
{
	char path[256], old_rt[32] = "";
	struct tap_count t = {};
	uint8_t f[ETH_FRAME_LEN];
	struct eth_stats a, b;
	uint32_t got, sent;
	struct hog h;
	pid_t napi;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, feature_set(self->ifname, self->lb_bit, 1));
	snprintf(path, sizeof(path), "/sys/class/net/%s/threaded", self->ifname);
	ASSERT_EQ(0, sysctl_rw(path, "1", NULL, 0));
	self->threaded = 1;
	napi = napi_thread(self->ifname);
	ASSERT_LT(0, napi);
	ASSERT_EQ(0, pin(napi, 1));
	ASSERT_EQ(0, pin(0, 0));
	ASSERT_EQ(0, sysctl_rw(RT_RUNTIME, "-1", old_rt, sizeof(old_rt)));
	snprintf(self->old_rt, sizeof(self->old_rt), "%s", old_rt);
	window_open(self, &a);

	ASSERT_EQ(0, hog_start(&h));
	for (sent = 0; sent < BURST; sent++) {
		make_frame(f, ETH_FRAME_LEN, self->mac, sent);
		if (send_frame(self->fd, self->ifindex, f, ETH_FRAME_LEN))
			break;
	}
	su_sleep_ms(500);	/* the device loops what the TX ring holds */
	hog_stop(&h);
	EXPECT_EQ(BURST, sent);

	got = burst_back(_metadata, self, sent, &a, &b, &t);
	/* At least the TX ring (256) reached the device while RX (128)
	 * could not be refilled.
	 */
	EXPECT_LE(RX_RING, b.rx_missed - a.rx_missed);
	EXPECT_LE(RX_RING, got);
	check_ours_missed(_metadata, sent, got, &a, &b);
	check_counters(_metadata, &a, &b, &t, 1);
}

/* With loopback off the frames leave, and nothing comes back. */
TEST_F(eth, nothing_comes_back_without_loopback)
{
	struct tap_count t = {};
	uint8_t f[ETH_FRAME_LEN];
	struct eth_stats a, b;
	uint32_t i, len;

	ASSERT_EQ(0, feature_get(self->ifname, self->lb_bit, NULL, NULL));
	window_open(self, &a);
	for (i = 0; i < 32; i++) {
		make_frame(f, 60 + i, self->mac, i);
		ASSERT_EQ(0, send_frame(self->fd, self->ifindex, f, 60 + i));
	}
	EXPECT_NE(0, recv_frame(self->fd, self->buf, sizeof(self->buf), &len,
				1000));
	read_stats(self->ifname, &b);
	tap_drain(self->tap, &t);
	EXPECT_LE(32, b.tx_packets - a.tx_packets);
	check_counters(_metadata, &a, &b, &t, 0);

	/* On, off again: the mode really changes each time. */
	ASSERT_EQ(0, feature_set(self->ifname, self->lb_bit, 1));
	make_frame(f, 100, self->mac, 7);
	ASSERT_EQ(0, send_frame(self->fd, self->ifindex, f, 100));
	ASSERT_EQ(0, recv_frame(self->fd, self->buf, sizeof(self->buf), &len,
				2000));
	EXPECT_EQ(-1, frame_diff(self->buf, len, self->mac, 7));
	ASSERT_EQ(0, feature_set(self->ifname, self->lb_bit, 0));
	ASSERT_EQ(0, send_frame(self->fd, self->ifindex, f, 100));
	EXPECT_NE(0, recv_frame(self->fd, self->buf, sizeof(self->buf), &len,
				500));
}

/* ------------------------------------------------------------------ */
/* The IP stack through the device                                     */
/* ------------------------------------------------------------------ */

/* The interface's first IPv4 address, or "" (@out: 64 bytes). */
static void first_v4(const char *ifname, char *out, size_t len)
{
	char cmd[256], line[64];
	FILE *f;

	out[0] = 0;
	snprintf(cmd, sizeof(cmd),
		 "ip -4 -o addr show dev %s | awk '{print $4}' | cut -d/ -f1",
		 ifname);
	f = popen(cmd, "r");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		snprintf(out, len, "%s", line);
	}
	pclose(f);
}

static int udp_sender(const char *src, int ttl)
{
	struct in_addr a = {};
	unsigned char zero = 0;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -1;
	inet_pton(AF_INET, src, &a);
	/* No local copy: a datagram that arrives crossed the device. */
	if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &zero, 1) ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &a, sizeof(a)) ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int udp_receiver(int ifindex)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(MCAST_PORT) };
	struct ip_mreqn mr = { .imr_ifindex = ifindex };
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -1;
	inet_pton(AF_INET, MCAST_GROUP, &sin.sin_addr);
	inet_pton(AF_INET, MCAST_GROUP, &mr.imr_multiaddr);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Sends @len bytes of pattern @seed to the group; 0 if they arrive whole. */
static int mcast_roundtrip(int tx, int rx, uint32_t len, unsigned int seed,
			   int ms)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(MCAST_PORT) };
	struct pollfd p = { .fd = rx, .events = POLLIN };
	static uint8_t out[8000], in[8001];
	ssize_t n;

	inet_pton(AF_INET, MCAST_GROUP, &to.sin_addr);
	su_fill(out, len, seed);
	if (sendto(tx, out, len, 0, (struct sockaddr *)&to, sizeof(to)) != len)
		return -2;
	if (poll(&p, 1, ms) != 1)
		return -1;
	n = recv(rx, in, sizeof(in), 0);
	if (n != (ssize_t)len || su_check(in, len, seed) >= 0)
		return -3;
	return 0;
}

/*
 * UDP to a multicast group joined on the interface, with the sender's
 * local loop off: only the device can bring the datagram back. IPv4
 * header and UDP checksums are computed and verified in software (the
 * device offers no offload), and 4000 bytes go as fragments that are
 * reassembled on receive.
 */
TEST_F(eth, ip_multicast_crosses_the_device)
{
	char addr[64], path[256];
	int tx = -1, rx = -1;
	struct eth_stats a, b;

	first_v4(self->ifname, addr, sizeof(addr));
	if (!addr[0]) {
		ASSERT_EQ(0, su_sh("ip addr add %s/24 dev %s", TMP_ADDR,
				self->ifname));
		snprintf(addr, sizeof(addr), "%s", TMP_ADDR);
		self->added_addr = 1;
	}
	/* Our own source address arrives from outside: allow it here only. */
	conf_path(path, sizeof(path), self->ifname, "accept_local");
	ASSERT_EQ(0, sysctl_rw(path, "1", self->old_accept,
			       sizeof(self->old_accept)));
	conf_path(path, sizeof(path), self->ifname, "rp_filter");
	ASSERT_EQ(0, sysctl_rw(path, "0", self->old_rpf,
			       sizeof(self->old_rpf)));

	tx = udp_sender(addr, 1);
	rx = udp_receiver(self->ifindex);
	EXPECT_LE(0, tx);
	EXPECT_LE(0, rx);
	if (tx >= 0 && rx >= 0) {
		EXPECT_EQ(-1, mcast_roundtrip(tx, rx, 100, 1, 500))
			TH_LOG("a datagram came back without loopback");
		EXPECT_EQ(0, feature_set(self->ifname, self->lb_bit, 1));
		read_stats(self->ifname, &a);
		EXPECT_EQ(0, mcast_roundtrip(tx, rx, 100, 2, 2000));
		EXPECT_EQ(0, mcast_roundtrip(tx, rx, 1472, 3, 2000));
		EXPECT_EQ(0, mcast_roundtrip(tx, rx, 4000, 4, 2000));
		read_stats(self->ifname, &b);
		/* 1 + 1 + 3 fragments at least, each way */
		EXPECT_LE(5, b.rx_packets - a.rx_packets);
		EXPECT_LE(5, b.tx_packets - a.tx_packets);
		EXPECT_EQ(0, b.rx_errors - a.rx_errors);
		EXPECT_EQ(0, feature_set(self->ifname, self->lb_bit, 0));
		EXPECT_EQ(-1, mcast_roundtrip(tx, rx, 100, 5, 500));
	}
	if (tx >= 0)
		close(tx);
	if (rx >= 0)
		close(rx);
}

TEST_HARNESS_MAIN
