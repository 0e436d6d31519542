// libFuzzer target: arbitrary commands, WQEs, receive WQEs, doorbell and
// register writes and clock steps against one device with a ready-made set
// of objects. Build with clang (-DVRNIC_FUZZ=ON, CXX=clang++); ASan and
// UBSan catch any access the accessor should have refused, and guest RAM is
// surrounded by guard pages.
//
//   build/fuzz/tests/unit/vrnic_model_fuzz -runs=200000 -max_len=4096
#include "device.h"
#include "guest_memory.h"
#include "log.h"
#include "shared_region.h"
#include "shared_word.h"

#include <cstring>
#include <memory>
#include <sys/mman.h>
#include <unistd.h>

using namespace vrnic;

namespace {

constexpr uint64_t kRam = 8 << 20;
constexpr uint64_t kCmdq = 1 << 20, kAeq = kCmdq + 4096, kData = 4 << 20;

// One device brought up with two PDs, MRs, CQs and two connected QP pairs,
// rebuilt for every input so runs are independent.
struct World {
    World() {
        g_log_level = static_cast<LogLevel>(-1); // silent: errors are expected here
        UniqueFd fd(memfd_create("fuzz-ram", MFD_CLOEXEC));
        if (ftruncate(fd.get(), kRam) < 0)
            abort();
        std::string err;
        mem = GuestMemory::map_fd(fd.get(), kRam, &err);
        DeviceParams p;
        p.bar2_size = 64 << 10;
        bar2 = SharedRegion::create("fuzz-bar2", p.bar2_size, &err);
        if (!mem || !bar2)
            abort();
        dev = std::make_unique<Device>(
            *mem, bar2->data(), p, [](uint32_t) {}, [this] { return now; });
        regs = reinterpret_cast<vrnic_regs*>(bar2->data());
    }
    void reset() {
        memset(mem->at(0, kRam), 0, kRam);
        store_release(&regs->driver_ctrl, 0u);
        store_release(&regs->reset_req, regs->reset_req + 1);
        dev->poll_once();
        regs->cmdq_base = kCmdq;
        regs->cmdq_log_depth = 5;
        regs->aeq_base = kAeq;
        regs->aeq_log_depth = 8;
        regs->tx_base = kAeq + 8192;
        regs->tx_log_depth = 4;
        regs->rx_base = kAeq + 12288;
        regs->rx_log_depth = 4;
        regs->cmdq_pi = regs->aeq_ci = regs->tx_pi = regs->rx_pi = 0;
        store_release(&regs->driver_ctrl, uint32_t(VRNIC_DRV_CTRL_DRIVER_OK));
        dev->poll_once();
        cmd_pi = 0;
        // GID 0, an EQ, a PD, an MR over the data area, a CQ, two QPs.
        vrnic_cmd_set_gid g{};
        g.gid_type = VRNIC_GID_TYPE_ROCE_V2;
        g.flags = VRNIC_GID_F_VALID;
        g.vlan_id = VRNIC_VLAN_NONE;
        cmd(VRNIC_CMD_SET_GID, &g, sizeof(g));
        vrnic_cmd_create_eq e{kData - 65536, 6, VRNIC_IRQ_COMP_BASE};
        eqn = cmd(VRNIC_CMD_CREATE_EQ, &e, sizeof(e)).create_eq_resp.eqn;
        vrnic_cmd_create_pd pdr{0, 0};
        pd = cmd(VRNIC_CMD_CREATE_PD, &pdr, sizeof(pdr)).create_pd_resp.pd;
        vrnic_cmd_reg_mr m{};
        m.pd = pd;
        m.access = VRNIC_ACCESS_ALL;
        m.iova = kData;
        m.length = 1 << 20;
        m.page_shift = 21;
        m.npages = 1;
        m.pbl_level = VRNIC_PBL_DIRECT;
        m.pbl_addr = kData - 8;
        uint64_t page = kData;
        memcpy(mem->at(kData - 8, 8), &page, 8);
        mr = cmd(VRNIC_CMD_REG_MR, &m, sizeof(m)).reg_mr_resp.lkey;
        vrnic_cmd_create_cq c{0, eqn, kData - 2 * 65536, 8, 0};
        vrnic_cmd r = cmd(VRNIC_CMD_CREATE_CQ, &c, sizeof(c));
        cqn = r.create_cq_resp.cqn;
        for (int i = 0; i < 2; i++) {
            vrnic_cmd_create_qp q{};
            q.pd = pd;
            q.qp_type = VRNIC_QPT_RC;
            q.send_cqn = q.recv_cqn = cqn;
            q.sq_addr = (2 << 20) + i * (256 << 10);
            q.sq_log_depth = 6;
            q.sq_wqe_shift = 7;
            q.rq_addr = q.sq_addr + (128 << 10);
            q.rq_log_depth = 6;
            q.rq_wqe_shift = 6;
            q.max_send_sge = 5;
            q.max_recv_sge = 3;
            q.max_inline = 64;
            r = cmd(VRNIC_CMD_CREATE_QP, &q, sizeof(q));
            qp[i] = {r.create_qp_resp.qpn, r.create_qp_resp.db_slot, q.sq_addr, q.rq_addr, 0, 0};
        }
        for (int i = 0; i < 2; i++)
            connect(qp[i].qpn, qp[1 - i].qpn);
    }
    vrnic_cmd cmd(uint16_t op, const void* req, size_t len) {
        vrnic_cmd c{};
        c.hdr.opcode = op;
        memcpy(c.payload, req, len);
        return raw_cmd(c);
    }
    vrnic_cmd raw_cmd(const vrnic_cmd& in) {
        uint8_t* slot = mem->at(kCmdq + (cmd_pi & 31) * 128, 128);
        memcpy(slot, &in, 128);
        store_release(&regs->cmdq_pi, ++cmd_pi);
        dev->poll_once();
        vrnic_cmd out;
        memcpy(&out, slot, 128);
        return out;
    }
    void connect(uint32_t qpn, uint32_t dest) {
        vrnic_cmd_modify_qp m{};
        m.qpn = qpn;
        m.attr_mask = VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT |
                      VRNIC_QP_ATTR_ACCESS_FLAGS;
        m.attr.qp_state = VRNIC_QPS_INIT;
        m.attr.port_num = 1;
        m.attr.qp_access_flags = VRNIC_ACCESS_ALL;
        cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m));
        m = {};
        m.qpn = qpn;
        m.attr_mask = VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_PATH_MTU |
                      VRNIC_QP_ATTR_DEST_QPN | VRNIC_QP_ATTR_RQ_PSN |
                      VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC | VRNIC_QP_ATTR_MIN_RNR_TIMER;
        m.attr.qp_state = VRNIC_QPS_RTR;
        m.attr.path_mtu = VRNIC_MTU_1024;
        m.attr.dest_qpn = dest;
        m.attr.max_dest_rd_atomic = 4;
        m.attr.av.vlan_id = VRNIC_VLAN_NONE;
        cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m));
        m = {};
        m.qpn = qpn;
        m.attr_mask = VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_TIMEOUT | VRNIC_QP_ATTR_RETRY_CNT |
                      VRNIC_QP_ATTR_RNR_RETRY | VRNIC_QP_ATTR_SQ_PSN |
                      VRNIC_QP_ATTR_MAX_QP_RD_ATOMIC;
        m.attr.qp_state = VRNIC_QPS_RTS;
        m.attr.rnr_retry = 3;
        m.attr.max_rd_atomic = 4;
        cmd(VRNIC_CMD_MODIFY_QP, &m, sizeof(m));
    }

    struct QpRef {
        uint32_t qpn, slot;
        uint64_t sq, rq;
        uint32_t sq_pi, rq_pi;
    } qp[2];
    std::unique_ptr<GuestMemory> mem;
    std::unique_ptr<SharedRegion> bar2;
    std::unique_ptr<Device> dev;
    vrnic_regs* regs = nullptr;
    uint64_t now = 1'000'000'000;
    uint32_t cmd_pi = 0, eqn = 0, pd = 0, mr = 0, cqn = 0;
};

// Reads n bytes, zero-filling past the end of the input.
struct Input {
    const uint8_t* p;
    size_t n;
    bool empty() const { return n == 0; }
    void take(void* dst, size_t len) {
        size_t k = len < n ? len : n;
        memcpy(dst, p, k);
        memset(static_cast<uint8_t*>(dst) + k, 0, len - k);
        p += k;
        n -= k;
    }
    template <typename T> T get() {
        T v;
        take(&v, sizeof(v));
        return v;
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static World w;
    w.reset();
    Input in{data, size};
    while (!in.empty()) {
        switch (in.get<uint8_t>() % 8) {
        case 0: { // a raw command
            vrnic_cmd c;
            in.take(&c, sizeof(c));
            c.hdr.opcode %= 0x1a;
            w.raw_cmd(c);
            break;
        }
        case 1: { // a send WQE, keys and addresses often valid
            auto& q = w.qp[in.get<uint8_t>() & 1];
            uint8_t wqe[128];
            in.take(wqe, sizeof(wqe));
            auto* h = reinterpret_cast<vrnic_send_wqe_hdr*>(wqe);
            if (h->reserved & 1) {
                h->opcode %= 7;
                h->rdma.rkey = w.mr;
                auto* s = reinterpret_cast<vrnic_sge*>(wqe + 48);
                for (int i = 0; i < 5; i++) {
                    s[i].lkey = w.mr;
                    s[i].addr = kData + (s[i].addr % (1 << 20));
                }
                h->rdma.remote_addr = kData + (h->rdma.remote_addr % (1 << 20));
            }
            memcpy(w.mem->at(q.sq + (q.sq_pi & 63) * 128, 128), wqe, 128);
            q.sq_pi++;
            store_release(&reinterpret_cast<vrnic_db_slot*>(w.bar2->data() + 4096)[q.slot].qp.sq_pi,
                          q.sq_pi);
            break;
        }
        case 2: { // a receive WQE
            auto& q = w.qp[in.get<uint8_t>() & 1];
            uint8_t wqe[64];
            in.take(wqe, sizeof(wqe));
            memcpy(w.mem->at(q.rq + (q.rq_pi & 63) * 64, 64), wqe, 64);
            q.rq_pi++;
            store_release(&reinterpret_cast<vrnic_db_slot*>(w.bar2->data() + 4096)[q.slot].qp.rq_pi,
                          q.rq_pi);
            break;
        }
        case 3: { // any doorbell word of any page
            uint32_t off = in.get<uint16_t>() % (w.bar2->size() - 4096);
            uint32_t v = in.get<uint32_t>();
            store_release(reinterpret_cast<uint32_t*>(w.bar2->data() + 4096 + (off & ~3u)), v);
            break;
        }
        case 4: // time passes
            w.now += uint64_t(in.get<uint16_t>()) * 100'000;
            break;
        case 5: { // a driver register (never reset_req: each input starts clean)
            uint32_t off = 0x200 + (in.get<uint8_t>() % 0x30) * 4;
            uint32_t v = in.get<uint32_t>();
            // A wild cmdq_pi is FATAL and ends all coverage for the input:
            // keep it rare.
            if (off == offsetof(vrnic_regs, cmdq_pi) && (v & 0xff) != 0x5a)
                break;
            if (off != offsetof(vrnic_regs, reset_req))
                store_release(reinterpret_cast<uint32_t*>(w.bar2->data() + off), v);
            break;
        }
        case 6: { // guest memory anywhere (rings, page lists, data)
            uint64_t a = in.get<uint32_t>() % (kRam - 16);
            uint8_t b[16];
            in.take(b, sizeof(b));
            memcpy(w.mem->at(a, 16), b, 16);
            break;
        }
        default: { // an Ethernet frame arrives
            uint8_t f[64];
            in.take(f, sizeof(f));
            w.dev->deliver_frame(f, 14 + f[0] % 50);
            break;
        }
        }
        w.dev->poll_once();
    }
    for (int i = 0; i < 8 && w.dev->poll_once(); i++) {
    }
    return 0;
}
