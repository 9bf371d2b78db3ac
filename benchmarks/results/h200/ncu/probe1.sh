pwd;git log -1 --oneline;nvidia-smi --query-gpu=name,clocks.sm --format=csv;which ncu;ncu --version|tail -1
cat >/tmp/k.py<<'P'
import cupy as cp,torch
s=r'''extern "C" __global__ void spill_dyn(float*o,const int*ix){float a[32];int b=blockIdx.x*128+threadIdx.x;
for(int i=0;i<32;i++)a[i]=o[i*4096+b]*i;int j=ix[b]&31;o[b]=a[j]+a[(j+7)&31];}
extern "C" __global__ void spill_none(float*o,const int*ix){float a[32];int b=blockIdx.x*128+threadIdx.x;
for(int i=0;i<32;i++)a[i]=o[i*4096+b]*i;o[b]=a[5]+a[12];}'''
m=cp.RawModule(code=s,options=('-lineinfo',))
o=cp.random.rand(32*4096,dtype=cp.float32);ix=cp.random.randint(0,32,4096,dtype=cp.int32)
def run():
  for n in('spill_dyn','spill_none'):m.get_function(n)((32,),(128,),(o,ix))
  torch.ones(1<<20,device='cuda').sum()
run();cp.cuda.runtime.deviceSynchronize()
from torch.profiler import profile,ProfilerActivity
with profile(activities=[ProfilerActivity.CUDA]) as p:
  for _ in range(3):run()
  torch.cuda.synchronize()
for e in p.events():print('EV',e.name[:60],e.device_type,e.device_time,e.time_range.start,e.time_range.end)
P
python3 /tmp/k.py >$OUT/profiler.txt 2>&1;tail -5 $OUT/profiler.txt
M=gpu__time_duration.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic,'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
ncu --csv --page raw --clock-control none --metrics $M --log-file $OUT/ncu_raw.csv python3 /tmp/k.py >/dev/null;echo rc=$?;head -c 400 $OUT/ncu_raw.csv
ncu -o /tmp/r --clock-control none --section SourceCounters --import-source yes --kernel-name regex:spill python3 /tmp/k.py >/dev/null;echo rc=$?
ncu -i /tmp/r.ncu-rep --page source --csv --print-source sass >$OUT/ncu_source.csv;echo rc=$?;head -c 500 $OUT/ncu_source.csv
python3 -m pip show distributed dask|grep -E "^(Name|Vers)"
