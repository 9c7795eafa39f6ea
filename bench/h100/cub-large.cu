// Native anchor for arrays past one WebGPU storage binding: CUB's device-wide primitives at 2^30 and 2^31
// 32-bit elements (or the sizes given as arguments, as log2 n), timed with CUDA events, median of the runs.
// It prints the line format of the shared anchor (anchors/cub_anchor.cu), so one parser reads both; that anchor
// stops at 2^28 and passes `int` item counts, which cannot say 2^31: this one passes 64-bit counts (CUB's
// NumItemsT / OffsetT templates) and allocates each array once per size.
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                         \
  do {                                                                                \
    cudaError_t e = (x);                                                              \
    if (e != cudaSuccess) {                                                           \
      printf("CUDA error %s at line %d\n", cudaGetErrorString(e), __LINE__);         \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

template <class F> float median_ms(F f, int reps) {
  f();
  cudaDeviceSynchronize();
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  std::vector<float> t;
  for (int r = 0; r < reps; r++) {
    cudaEventRecord(s);
    f();
    cudaEventRecord(e);
    cudaEventSynchronize(e);
    float ms;
    cudaEventElapsedTime(&ms, s, e);
    t.push_back(ms);
  }
  cudaEventDestroy(s);
  cudaEventDestroy(e);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The shared anchor's input: a hash of the index, masked.
__global__ void fill(unsigned *a, int64_t n, unsigned mask) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)i * 2654435761u;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    a[i] = x & mask;
  }
}

struct Odd {
  __device__ bool operator()(unsigned x) const { return x & 1u; }
};

int main(int argc, char **argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; i++) sizes.push_back(atoi(argv[i]));
  if (sizes.empty()) sizes = {30, 31};
  for (int logn : sizes) {
    const int64_t n = int64_t(1) << logn;
    const size_t bytes = size_t(n) * 4;
    unsigned *a, *b;
    int64_t *count;
    unsigned *out;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMalloc(&out, 1024 * 4));
    CK(cudaMalloc(&count, sizeof(int64_t)));
    fill<<<65536, 256>>>(a, n, 0xffffffffu);
    size_t tb = 0, t2 = 0;
    cub::DeviceReduce::Sum(nullptr, t2, a, out, n);
    tb = std::max(tb, t2);
    cub::DeviceScan::InclusiveSum(nullptr, t2, a, b, n);
    tb = std::max(tb, t2);
    cub::DeviceHistogram::HistogramEven(nullptr, t2, a, (int *)out, 257, 0u, 256u, n);
    tb = std::max(tb, t2);
    cub::DeviceSelect::If(nullptr, t2, a, b, count, n, Odd());
    tb = std::max(tb, t2);
    void *tmp;
    CK(cudaMalloc(&tmp, tb));
    float t;
    t = median_ms([&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice); }, 20);
    printf("n=2^%d memcpy d2d: %.4f ms %.1f GB/s (r+w)\n", logn, t, n * 8 / t / 1e6);
    t = median_ms([&] { size_t x = tb; cub::DeviceReduce::Sum(tmp, x, a, out, n); }, 20);
    printf("n=2^%d CUB reduce sum u32: %.4f ms %.1f GB/s\n", logn, t, n * 4 / t / 1e6);
    t = median_ms([&] { size_t x = tb; cub::DeviceScan::InclusiveSum(tmp, x, a, b, n); }, 20);
    printf("n=2^%d CUB inclusive scan u32: %.4f ms %.1f GB/s (r+w)\n", logn, t, n * 8 / t / 1e6);
    t = median_ms([&] { size_t x = tb; cub::DeviceScan::ExclusiveSum(tmp, x, a, b, n); }, 20);
    printf("n=2^%d CUB exclusive scan u32: %.4f ms %.1f GB/s (r+w)\n", logn, t, n * 8 / t / 1e6);
    t = median_ms([&] { size_t x = tb; cub::DeviceSelect::If(tmp, x, a, b, count, n, Odd()); }, 20);
    printf("n=2^%d CUB select if u32 (half kept): %.4f ms %.1f GB/s (read)\n", logn, t, n * 4 / t / 1e6);
    {
      // Radix sort: keys, then pairs, with their own temporaries (the largest allocations of the run).
      size_t ts = 0;
      cub::DeviceRadixSort::SortKeys(nullptr, ts, a, b, n);
      void *tmps;
      CK(cudaMalloc(&tmps, ts));
      t = median_ms([&] { size_t x = ts; cub::DeviceRadixSort::SortKeys(tmps, x, a, b, n); }, 10);
      printf("n=2^%d CUB radix sort keys u32: %.4f ms %.3f Gkeys/s\n", logn, t, n / t / 1e6);
      cudaFree(tmps);
      unsigned *v, *v2;
      CK(cudaMalloc(&v, bytes));
      CK(cudaMalloc(&v2, bytes));
      size_t tp = 0;
      cub::DeviceRadixSort::SortPairs(nullptr, tp, a, b, v, v2, n);
      void *tmpp;
      if (cudaMalloc(&tmpp, tp) == cudaSuccess) {
        t = median_ms([&] { size_t x = tp; cub::DeviceRadixSort::SortPairs(tmpp, x, a, b, v, v2, n); }, 10);
        printf("n=2^%d CUB radix sort pairs u32/u32: %.4f ms %.3f Gpairs/s\n", logn, t, n / t / 1e6);
        cudaFree(tmpp);
      } else {
        cudaGetLastError();
        printf("n=2^%d CUB radix sort pairs u32/u32: skipped (no room for %zu bytes of temporaries)\n", logn, tp);
      }
      cudaFree(v);
      cudaFree(v2);
    }
    fill<<<65536, 256>>>(b, n, 255u);
    t = median_ms([&] { size_t x = tb; cub::DeviceHistogram::HistogramEven(tmp, x, b, (int *)out, 257, 0u, 256u, n); }, 20);
    printf("n=2^%d CUB histogram 256 bins: %.4f ms %.1f GB/s\n", logn, t, n * 4 / t / 1e6);
    CK(cudaGetLastError());
    cudaFree(a);
    cudaFree(b);
    cudaFree(out);
    cudaFree(count);
    cudaFree(tmp);
  }
  return 0;
}
