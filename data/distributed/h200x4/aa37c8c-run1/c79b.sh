#!/usr/bin/env bash
# #79 on four H200s, call 2: run 1 of experiments/distributed-x4-schedules.ini (the schedules beside the
# ones before them and cuBLASMp, each engine against itself on one GPU), then the four-GPU MPI test.
source gpu-bin/env.sh
O=/tmp/c79b; mkdir -p $O/gpus; trap 'tar -C $O -czf $OUT/c79b.tgz .' EXIT
nvidia-smi > $O/device.txt; nvidia-smi topo -m >> $O/device.txt; nvidia-smi -L >> $O/device.txt; $B/mmlab --version >> $O/device.txt 2>&1
T=$O/times.txt; t0=$(date +%s); mark() { echo "$1 $(date -u +%FT%TZ) t=$(( $(date +%s) - t0 )) $2" >> $T; }
mark start
printf '#!/bin/bash\nexec mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE=0 -x NVSHMEM_DISABLE_NVLS=1 -x MMLAB_NVSHMEM_DIR -x MMLAB_CUBLASMP_LIB -x LD_LIBRARY_PATH "$@"\n' > /tmp/mpiexec; chmod +x /tmp/mpiexec
timeout 330 /tmp/mpiexec -np 4 $B/mmlab run experiments/distributed-x4-schedules.ini --rank-timeout 60 --stop-after 290 --resume \
  --output $O/run1.csv > $O/run1.log 2>&1; mark run1 rc=$?
nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv >> $O/device.txt
MMLAB_MPI_TEST_KEEP=$O/gpus timeout $(( 560 - ($(date +%s) - t0) )) tests/mpi/mpi_test.sh $B/mmlab /tmp/mpiexec 4 gpus > $O/mpi_gpus_4.log 2>&1; mark mpi_gpus_4 rc=$?
gzip $O/gpus/*.csv 2>/dev/null
mark end
