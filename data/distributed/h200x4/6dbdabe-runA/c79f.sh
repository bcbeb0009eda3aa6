#!/usr/bin/env bash
# #79 on four H200s, session 2 call 1: run A of experiments/distributed-x4-rows.ini (dist_cannon `rows`
# against `direct`), memcheck on four ranks over `rows` (both transports), the GPU tests of the
# distributed algorithms on one GPU (cut by their 200 s limit inside cublasmp's).
source gpu-bin/env.sh
O=/tmp/c79f; mkdir -p $O; trap 'tar -C $O -czf $OUT/c79f.tgz .' EXIT
nvidia-smi > $O/device.txt; nvidia-smi topo -m >> $O/device.txt; nvidia-smi -L >> $O/device.txt; $B/mmlab --version >> $O/device.txt 2>&1
T=$O/times.txt; t0=$(date +%s); mark() { echo "$1 $(date -u +%FT%TZ) t=$(( $(date +%s) - t0 )) $2" >> $T; }
mark start
printf '#!/bin/bash\nexec mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE=0 -x NVSHMEM_DISABLE_NVLS=1 -x MMLAB_NVSHMEM_DIR -x MMLAB_CUBLASMP_LIB -x LD_LIBRARY_PATH "$@"\n' > /tmp/mpiexec; chmod +x /tmp/mpiexec
timeout 250 /tmp/mpiexec -np 4 $B/mmlab run experiments/distributed-x4-rows.ini --rank-timeout 60 --stop-after 220 --resume \
  --output $O/rows.csv > $O/rows.log 2>&1; mark runA rc=$?
nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv >> $O/device.txt
timeout 80 /tmp/mpiexec -np 4 compute-sanitizer --tool memcheck --report-api-errors no $B/mmlab run --algorithms dist_cannon \
  --variant rows --grid 2x2 --transport nccl,copy_engine --engine cublas,tensor_cores --dist_cannon.slabs 1,3 \
  --shape 1000x999x1001 --trials 2 --warmup 0 --output $O/memcheck4.csv > $O/memcheck4.log 2>&1; mark memcheck4 rc=$?
timeout 200 $B/mmlab_gpu_tests --gtest_filter='*dist_*:*istributed*:*cublasmp*' > $O/gpu_tests_distributed.log 2>&1; mark gpu_tests rc=$?
mark end
