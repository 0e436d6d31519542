// Micro-benchmark of the model's engine alone (no QEMU, no threads): WQEs/s
// for 64-byte RDMA WRITEs and GB/s for 64 KiB WRITEs between two fake guest
// buffers, next to plain memcpy of the same size measured in the same run.
#include "fake_driver.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>

using namespace vrnic;
using namespace vrnic::test;

namespace {

// A connected loopback QP with a deep SQ full of identical WRITE WQEs, so an
// iteration only publishes a new producer index and polls the CQ.
struct WriteLoop {
    explicit WriteLoop(uint32_t msg_len) : len(msg_len) {
        drv.bring_up();
        uint32_t pd = drv.create_pd(0);
        cq = drv.create_cq(0, 12);
        QpOpts o;
        o.sq_log = 12;
        o.sq_shift = 6;
        o.max_send_sge = 1;
        o.max_inline = 8;
        qp = drv.create_qp(0, pd, cq, cq, o);
        drv.connect(qp, qp.qpn);
        uint64_t s = drv.alloc(len), d = drv.alloc(len);
        drv.fill(s, len, 1);
        src = drv.reg_mr(pd, s, len, VRNIC_ACCESS_LOCAL_WRITE);
        dst = drv.reg_mr(pd, d, len, VRNIC_ACCESS_ALL);
        for (uint32_t i = 0; i < kDepth; i++) {
            SendWr w;
            w.wr_id = i;
            w.opcode = VRNIC_WR_RDMA_WRITE;
            // Signal every 64th: how applications keep the CQ out of the way.
            w.flags = (i % 64 == 63) ? VRNIC_WQE_F_SIGNALED : 0;
            w.remote_addr = dst.iova;
            w.rkey = dst.rkey;
            w.sge = {{src.iova, len, src.lkey}};
            drv.post_send(qp, w, false);
        }
        qp.sq_pi = 0;
    }
    // Publishes `n` more WQEs (a multiple of 64) and runs them to completion.
    void run(uint32_t n) {
        qp.sq_pi += n;
        drv.publish(qp);
        while (drv.dev().poll_once()) {
        }
        drv.poll_cq(cq);
    }
    static constexpr uint32_t kDepth = 4096;
    FakeDriver drv;
    uint32_t len;
    CqInfo cq;
    QpInfo qp;
    MrInfo src, dst;
};

void BM_Write64(benchmark::State& state) {
    WriteLoop loop(64);
    constexpr uint32_t kBatch = 1024;
    for (auto _ : state)
        loop.run(kBatch);
    state.SetItemsProcessed(int64_t(state.iterations()) * kBatch);
    state.SetBytesProcessed(int64_t(state.iterations()) * kBatch * 64);
}
BENCHMARK(BM_Write64);

void BM_Write64K(benchmark::State& state) {
    WriteLoop loop(64 << 10);
    constexpr uint32_t kBatch = 64;
    for (auto _ : state)
        loop.run(kBatch);
    state.SetItemsProcessed(int64_t(state.iterations()) * kBatch);
    state.SetBytesProcessed(int64_t(state.iterations()) * kBatch * (64 << 10));
}
BENCHMARK(BM_Write64K);

void BM_Memcpy64K(benchmark::State& state) {
    std::vector<uint8_t> a(64 << 10, 1), b(64 << 10);
    for (auto _ : state) {
        memcpy(b.data(), a.data(), a.size());
        benchmark::DoNotOptimize(b.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * (64 << 10));
}
BENCHMARK(BM_Memcpy64K);

// Keeps the per-benchmark rates so main() can print the ratio.
class RateReporter : public benchmark::ConsoleReporter {
  public:
    void ReportRuns(const std::vector<Run>& runs) override {
        for (const Run& r : runs) {
            auto it = r.counters.find("bytes_per_second");
            if (it != r.counters.end())
                bytes[r.benchmark_name()] = it->second;
            auto it2 = r.counters.find("items_per_second");
            if (it2 != r.counters.end())
                items[r.benchmark_name()] = it2->second;
        }
        ConsoleReporter::ReportRuns(runs);
    }
    std::map<std::string, double> bytes, items;
};

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    RateReporter rep;
    benchmark::RunSpecifiedBenchmarks(&rep);
    double wqes = rep.items["BM_Write64"];
    double w64k = rep.bytes["BM_Write64K"], mc = rep.bytes["BM_Memcpy64K"];
    if (wqes > 0)
        printf("64 B RDMA WRITE: %.2f M WQEs/s (target >= 5)\n", wqes / 1e6);
    if (w64k > 0 && mc > 0)
        printf("64 KiB RDMA WRITE: %.2f GB/s, memcpy %.2f GB/s, ratio %.0f %% (target >= 70 %%)\n",
               w64k / 1e9, mc / 1e9, 100 * w64k / mc);
    benchmark::Shutdown();
    return 0;
}
