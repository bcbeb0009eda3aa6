#!/bin/bash
# Packs the programs for the device machine into gpu-bin/ (ignored): stripped, xz'd; env.sh unpacks them.
set -e
cd /work/main
# A call's script (gpu-bin/*.sh, not env.sh) is left as it is.
mkdir -p gpu-bin; rm -f gpu-bin/*.xz
for f in mmlab mmlab-analyze mmlab_gpu_tests libcheats_plugin.so libtiming_plugin.so libmmlab_lab.so; do
  strip -o gpu-bin/$f build/bin/$f 2>/dev/null || cp build/bin/$f gpu-bin/$f
done
cp build/examples/plugin/libmy_plugin.so gpu-bin/  # the GPU tests' example plugin (MMLAB_TEST_PLUGIN)
cp $(find build/deps/nvidia-cublasmp -name 'libcublasmp.so*' | head -1) gpu-bin/libcublasmp.so.0
# The Python package's library needs the shared Boost.Program_options, which the GPU machines lack.
cp "$(ldd build/bin/libmmlab_lab.so | awk '/libboost_program_options/ {print $3}')" gpu-bin/
(cd gpu-bin && for f in *; do case $f in *.sh) ;; *) xz -T2 -6 "$f" ;; esac; done)
cat > gpu-bin/env.sh <<'EOS'
# Unpacks the programs into /tmp/bin; B points at them; cuBLASMp's library beside them.
mkdir -p /tmp/bin; for f in gpu-bin/*.xz; do xz -dc $f > /tmp/bin/$(basename $f .xz); done; chmod +x /tmp/bin/*
B=/tmp/bin; export LD_LIBRARY_PATH=/tmp/bin:$LD_LIBRARY_PATH
export MMLAB_CUBLASMP_LIB=/tmp/bin/libcublasmp.so.0
export MMLAB_NVSHMEM_DIR=$(python3 -c 'import nvidia.nvshmem, os; print(os.path.join(list(nvidia.nvshmem.__path__)[0], "lib"))' 2>/dev/null)
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
export MMLAB_TEST_PLUGIN=/tmp/bin/libmy_plugin.so MMLAB_TIMING_PLUGIN=/tmp/bin/libtiming_plugin.so
export MMLAB_LIBRARY=/tmp/bin/libmmlab_lab.so MMLAB_BIN=/tmp/bin PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
EOS
du -sh gpu-bin
