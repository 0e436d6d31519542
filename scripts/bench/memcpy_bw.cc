// Single-core memcpy bandwidth of the host for one block size: the ceiling
// for a single-threaded device model copying guest buffers. perftest's
// bandwidth tests move the same buffer again and again, so the copy here
// does too (the block stays in cache as it does for the model).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s BLOCK_BYTES [TOTAL_BYTES]\n", argv[0]);
        return 2;
    }
    const size_t block = std::strtoull(argv[1], nullptr, 0);
    const size_t total = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : (size_t{16} << 30);
    if (block == 0 || total < block) {
        std::fprintf(stderr, "memcpy_bw: bad sizes\n");
        return 2;
    }
    std::vector<char> src(block, 1), dst(block, 0);
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t done = 0; done < total; done += block) {
        std::memcpy(dst.data(), src.data(), block);
        // Keep the compiler from merging or dropping the copies.
        asm volatile("" : : "r"(dst.data()) : "memory");
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%.1f\n", total / s / 1e6); // MB/s
    return 0;
}
