cat >/tmp/k.py<<'P'
import cupy as cp,torch
s=r'''extern "C" __global__ void spill_dyn(float*o,const int*ix,int n){float a[64];int b=blockIdx.x*128+threadIdx.x;
for(int i=0;i<64;i++)a[i]=o[i*131072+b]*i;float s=0;for(int k=0;k<n;k++)s+=a[(ix[b]+k*7)&63];o[b]=s;}
extern "C" __global__ void spill_none(float*o,const int*ix,int n){float a[64];int b=blockIdx.x*128+threadIdx.x;
for(int i=0;i<64;i++)a[i]=o[i*131072+b]*i;float s=0;for(int k=0;k<16;k++)s+=a[(k*7)&63];o[b]=s;}'''
m=cp.RawModule(code=s,options=('-lineinfo',))
o=cp.random.rand(64*131072,dtype=cp.float32);ix=cp.random.randint(0,64,131072,dtype=cp.int32)
def run():
  for f in('spill_dyn','spill_none'):m.get_function(f)((1024,),(128,),(o,ix,cp.int32(16)))
run();torch.cuda.synchronize();torch.cuda.profiler.start()
for _ in range(3):run()
torch.cuda.synchronize();torch.cuda.profiler.stop()
P
M=gpu__time_duration.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic,'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
K="--kernel-name regex:spill --kernel-name-base function"
ncu --csv --page raw --clock-control none --profile-from-start off --metrics $M --log-file $OUT/ncu_local_raw.csv $K python3 /tmp/k.py;echo rc=$?
ncu --clock-control none --profile-from-start off --section SourceCounters --import-source yes -f -o /tmp/r $K python3 /tmp/k.py >/dev/null;echo rc=$?
ncu --import /tmp/r.ncu-rep --page source --csv --print-source sass >$OUT/ncu_local_source.csv;echo rc=$?
grep -c '"' $OUT/ncu_local_raw.csv; grep -E "LDL|STL" $OUT/ncu_local_source.csv|cut -c1-120|head -4
ncu --csv --page raw --clock-control none --profile-from-start off --metrics $M --kernel-name regex:nomatch python3 /tmp/k.py 2>&1|tail -3
