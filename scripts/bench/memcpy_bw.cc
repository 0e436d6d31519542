// Single-core memcpy bandwidth of the host for a given block size: the
// ceiling for a single-threaded device model copying guest buffers.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s BLOCK_BYTES [TOTAL_BYTES]\n", argv[0]);
        return 2;
    }
    const size_t block = std::strtoull(argv[1], nullptr, 0);
    const size_t total = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : (size_t{8} << 30);
    if (block == 0 || total < block) {
        std::fprintf(stderr, "memcpy_bw: bad sizes\n");
        return 2;
    }
    // Two 64 MiB arenas, walked block by block so that large blocks are not
    // served from cache any more than the model's copies would be.
    const size_t arena = std::max(block, size_t{64} << 20);
    std::vector<char> src(arena, 1), dst(arena, 0);
    size_t off = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t done = 0; done < total; done += block) {
        std::memcpy(dst.data() + off, src.data() + off, block);
        off = off + 2 * block <= arena ? off + block : 0;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Keep the copies observable.
    volatile char sink = dst[arena / 2];
    (void)sink;
    std::printf("%.1f\n", total / s / 1e6);  // MB/s
    return 0;
}
