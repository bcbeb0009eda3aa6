#!/usr/bin/env bash
# #79 on four H200s, call 3 (minutes after call 2, a separate job): run 2 of the schedules, then memcheck
# on four ranks (the new schedule, both transports) and the GPU tests of the distributed algorithms.
source gpu-bin/env.sh
O=/tmp/c79c; mkdir -p $O; trap 'tar -C $O -czf $OUT/c79c.tgz .' EXIT
nvidia-smi > $O/device.txt; nvidia-smi topo -m >> $O/device.txt; nvidia-smi -L >> $O/device.txt; $B/mmlab --version >> $O/device.txt 2>&1
T=$O/times.txt; t0=$(date +%s); mark() { echo "$1 $(date -u +%FT%TZ) t=$(( $(date +%s) - t0 )) $2" >> $T; }
mark start
printf '#!/bin/bash\nexec mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE=0 -x NVSHMEM_DISABLE_NVLS=1 -x MMLAB_NVSHMEM_DIR -x MMLAB_CUBLASMP_LIB -x LD_LIBRARY_PATH "$@"\n' > /tmp/mpiexec; chmod +x /tmp/mpiexec
timeout 330 /tmp/mpiexec -np 4 $B/mmlab run experiments/distributed-x4-schedules.ini --rank-timeout 60 --stop-after 290 --resume \
  --output $O/run2.csv > $O/run2.log 2>&1; mark run2 rc=$?
nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv >> $O/device.txt
timeout 150 /tmp/mpiexec -np 4 compute-sanitizer --tool memcheck --report-api-errors no $B/mmlab run --algorithms dist_cannon \
  --variant direct,pipelined --grid 2x2 --transport nccl,copy_engine --engine cublas,cublas_tf32 --dist_cannon.slabs 1,3 \
  --shape 1000x999x1001 --trials 2 --warmup 0 --output $O/memcheck4.csv > $O/memcheck4.log 2>&1; mark memcheck4 rc=$?
for s in 0 1 2 3; do
  ( CUDA_VISIBLE_DEVICES=$s GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$s MMLAB_GPU_TEST_POINTS=3 timeout 200 $B/mmlab_gpu_tests \
      --gtest_filter='*dist_*:*cublasmp*:Engines*' > $O/gpu_tests-shard$s.log 2>&1; mark shard$s rc=$? ) &
done
wait
mark end
