#!/usr/bin/env bash
# Session 2 call 3, four H200s: run A of experiments/distributed-x4-rows.ini at the revision with rows and
# issue #81's trials on inputs of their own (the copy engines' deferred waits reverted); then on GPU 0:
# the GPU cheats (3 runs), every built-in algorithm and variant on awkward shapes (false alarms of the new
# checks), memcheck over the new audit kernel, the cost of #81 against the revision before it (0224b62,
# mmlab-old) in alternating runs. Run B of the rows sweep: the next call.
source gpu-bin/env.sh
O=/tmp/c79h; mkdir -p $O; trap 'tar -C $O -czf $OUT/c79h.tgz .' EXIT
nvidia-smi > $O/device.txt; nvidia-smi topo -m >> $O/device.txt; nvidia-smi -L >> $O/device.txt; $B/mmlab --version >> $O/device.txt 2>&1; $B/mmlab-old --version >> $O/device.txt 2>&1
T=$O/times.txt; t0=$(date +%s); mark() { echo "$1 $(date -u +%FT%TZ) t=$(( $(date +%s) - t0 )) $2" >> $T; }
mark start
printf '#!/bin/bash\nexec mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE=0 -x NVSHMEM_DISABLE_NVLS=1 -x MMLAB_NVSHMEM_DIR -x MMLAB_CUBLASMP_LIB -x LD_LIBRARY_PATH "$@"\n' > /tmp/mpiexec; chmod +x /tmp/mpiexec
timeout 170 /tmp/mpiexec -np 4 $B/mmlab run experiments/distributed-x4-rows.ini --rank-timeout 60 --stop-after 150 --resume \
  --output $O/rows-runA.csv > $O/rows-runA.log 2>&1; mark runA rc=$?
nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv >> $O/device.txt
mkdir -p $O/cheats; MMLAB_CHEATS_KEEP=$O/cheats timeout 100 tests/cheats/cheats_test.sh $B/mmlab $B/libcheats_plugin.so gpu 3 > $O/cheats.log 2>&1; mark cheats_gpu_3 rc=$?
timeout 90 $B/mmlab run --algorithms all --variant all --shape 7x9x13,129x65x33,383x405x1508,1375x526x130 --trials 5 \
  --output $O/builtins-awkward.csv > $O/builtins-awkward.log 2>&1; mark builtins_awkward rc=$?
timeout 35 compute-sanitizer --tool memcheck $B/mmlab run --algorithms cublas,tiled,flagship --shape 67x45x33,200x130x70 --trials 5 \
  --output $O/memcheck-audit.csv > $O/memcheck-audit.log 2>&1; mark memcheck_audit rc=$?
for r in 1 2; do for who in old new; do
  bin=$B/mmlab; [ $who = old ] && bin=$B/mmlab-old
  s=$(date +%s.%N); timeout 35 $bin run --algorithms cublas,flagship --size 256,1024,4096 --shape 1000x999x1001,2000x500x3000 --trials 10 \
    --output $O/cost-$who-$r.csv > $O/cost-$who-$r.log 2>&1; rc=$?; echo "$who $r wall $(echo "$(date +%s.%N) - $s" | bc)" >> $O/cost-wall.txt; mark cost_${who}_$r rc=$rc
done; done
nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv >> $O/device.txt
mark end
