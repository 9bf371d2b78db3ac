// Two kernels for `cutediff diff` tests: built with and without -maxrregcount=32, `heavy` spills.
// two_kernels.ptx is `nvcc -ptx -arch=sm_90a two_kernels.cu` (CUDA 13.0), for machines with ptxas only.
extern "C" __global__ void heavy(const float* __restrict__ x, float* __restrict__ y, int n) {
    float acc[48];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int k = 0; k < 48; ++k) acc[k] = x[i + k * n];
    float s = 0.f;
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int k = 0; k < 48; ++k) s += acc[k] * acc[(k * 7 + r) % 48];
    y[i] = s;
}
__global__ void light(float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * y[i] + 1.0f;
}
