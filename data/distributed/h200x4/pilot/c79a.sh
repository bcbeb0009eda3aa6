#!/usr/bin/env bash
# #79's first check on four H200s: the distributed trials held behind the blocking kernel (timer blocked)
# with every decomposition, engine and transport and cuBLASMp (the four-GPU MPI test), then a pilot of
# the sweep at 4096 and 8192 (Cannon and direct, slabs 1 and 4, every engine and transport, cuBLASMp
# gemm 2x2 / 1x4 and its matmuls, each engine on one GPU), with the new bound.
source gpu-bin/env.sh
O=/tmp/c79a; mkdir -p $O; trap 'tar -C $O -czf $OUT/c79a.tgz .' EXIT
nvidia-smi > $O/device.txt; nvidia-smi topo -m >> $O/device.txt; nvidia-smi -L >> $O/device.txt; $B/mmlab --version >> $O/device.txt 2>&1
T=$O/times.txt; t0=$(date +%s); mark() { echo "$1 $(date -u +%FT%TZ) t=$(( $(date +%s) - t0 )) $2" >> $T; }
mark start
printf '#!/bin/bash\nexec mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE=0 -x NVSHMEM_DISABLE_NVLS=1 -x MMLAB_NVSHMEM_DIR -x MMLAB_CUBLASMP_LIB -x LD_LIBRARY_PATH "$@"\n' > /tmp/mpiexec; chmod +x /tmp/mpiexec
mkdir -p $O/gpus
MMLAB_MPI_TEST_KEEP=$O/gpus timeout 240 tests/mpi/mpi_test.sh $B/mmlab /tmp/mpiexec 4 gpus > $O/mpi_gpus_4.log 2>&1; mark mpi_gpus_4 rc=$?
timeout 270 /tmp/mpiexec -np 4 $B/mmlab run experiments/distributed-x4.ini --size 4096,8192 \
  --algorithms cublas,flagship,dist_cannon,cublasmp --cublasmp.block whole --cublasmp.grid 2x2,1x4 \
  --rank-timeout 60 --stop-after 240 --resume --output $O/pilot.csv > $O/pilot.log 2>&1; mark pilot rc=$?
gzip -k $O/gpus/*.csv 2>/dev/null; rm -f $O/gpus/*.csv
mark end
