// Micro-benchmark of the model's engine alone (no QEMU, no threads): WQEs/s
// for 64-byte RDMA WRITEs and GB/s for 64 KiB WRITEs between two fake guest
// buffers, next to plain memcpy of the same size measured in the same run.
// `--count WORKLOAD N` instead runs N messages of one workload and nothing
// else, for scripts/bench/engine-count to count instructions under callgrind.
#include "fake_driver.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

using namespace vrnic;
using namespace vrnic::test;

namespace {

// A connected loopback QP with a deep SQ full of identical WQEs (and, for
// SENDs, an RQ full of receives), so an iteration only publishes new
// producer indices and polls the CQ.
struct WriteLoop {
    explicit WriteLoop(uint32_t msg_len, uint8_t opcode = VRNIC_WR_RDMA_WRITE) : len(msg_len) {
        drv.bring_up();
        uint32_t pd = drv.create_pd(0);
        cq = drv.create_cq(0, 13);
        QpOpts o;
        o.sq_log = 12;
        o.sq_shift = 6;
        o.rq_log = 12;
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
            w.opcode = opcode;
            // Signal every 64th: how applications keep the CQ out of the way.
            w.flags = (i % 64 == 63) ? VRNIC_WQE_F_SIGNALED : 0;
            if (opcode != VRNIC_WR_SEND) { // a SEND's union stays zero
                w.remote_addr = dst.iova;
                w.rkey = dst.rkey;
            }
            w.sge = {{src.iova, len, src.lkey}};
            drv.post_send(qp, w, false);
            if (opcode == VRNIC_WR_SEND)
                drv.post_recv(qp, i, {{dst.iova, len, dst.lkey}}, false);
        }
        qp.sq_pi = 0;
        qp.rq_pi = 0;
        with_recvs = opcode == VRNIC_WR_SEND;
    }
    // Publishes `n` more WQEs (and receives) and runs them to completion.
    void run(uint32_t n) {
        qp.sq_pi += n;
        if (with_recvs)
            qp.rq_pi += n;
        drv.publish(qp);
        while (drv.dev().poll_once()) {
        }
        for (const vrnic_cqe& e : drv.poll_cq(cq))
            failed += e.status != VRNIC_WC_SUCCESS;
    }
    static constexpr uint32_t kDepth = 4096;
    FakeDriver drv;
    uint32_t len;
    bool with_recvs = false;
    uint64_t failed = 0; // completions in error: a count of nothing
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

// The workloads of --count: streams handed over in batches, and messages
// handed over one at a time, as a ping-pong does.
struct Workload {
    const char* name;
    uint8_t opcode;
    uint32_t len, batch;
};
constexpr Workload kWorkloads[] = {
    {"write64", VRNIC_WR_RDMA_WRITE, 64, 64},
    {"send64", VRNIC_WR_SEND, 64, 64},
    {"write8-single", VRNIC_WR_RDMA_WRITE, 8, 1},
    {"send8-single", VRNIC_WR_SEND, 8, 1},
};

int count(const char* name, const char* n_arg) {
    char* end;
    const unsigned long n = strtoul(n_arg, &end, 10);
    for (const Workload& w : kWorkloads) {
        if (strcmp(w.name, name) != 0)
            continue;
        if (*end || n % w.batch) {
            fprintf(stderr, "--count %s: N must be a multiple of %u\n", name, w.batch);
            return 2;
        }
        WriteLoop loop(w.len, w.opcode);
        for (unsigned long i = 0; i < n; i += w.batch)
            loop.run(w.batch);
        if (loop.failed) {
            fprintf(stderr, "--count %s: %llu completions in error\n", name,
                    (unsigned long long)loop.failed);
            return 1;
        }
        return 0;
    }
    fprintf(stderr, "--count: no workload %s\n", name);
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    if (argc == 4 && strcmp(argv[1], "--count") == 0)
        return count(argv[2], argv[3]);
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
