#!/bin/sh
# The plugin SDK as a plugin author meets it: mmlab installed under a prefix, examples/plugin configured
# and built out of tree against it (find_package(mmlab), mmlab::plugin), its host algorithm run by the
# installed mmlab and compared by mmlab-analyze.
#   plugin_sdk_test.sh BUILD_DIR SOURCE_DIR CUDA_ARCHITECTURES
set -eu
build=$1 source=$2 arch=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/sdk" > "$work/install.log"
# As README says it: no architecture given, the SDK's own (the build's, $arch) is taken, no GPU needed.
cmake -S "$source/examples/plugin" -B "$work/plugin" -DCMAKE_PREFIX_PATH="$work/sdk" \
  -DCMAKE_BUILD_TYPE=Release > "$work/configure.log"
grep -q "arch=compute_$arch" "$work/plugin/CMakeFiles/my_plugin.dir/flags.make" ||
  { echo "the plugin is not built for the SDK's architectures ($arch)"; exit 1; }
cmake --build "$work/plugin" > "$work/build.log"
"$work/sdk/bin/mmlab" run --plugin "$work/plugin/libmy_plugin.so" --algorithms my_host,eigen --size 64,100 \
  --trials 3 --warmup 0 --output "$work/out.csv"
"$work/sdk/bin/mmlab-analyze" compare "$work/out.csv" --baseline eigen | grep -q "my_host block=256"
grep -q "libmy_plugin.so,fnv1a64:" "$work/out.csv"
echo "plugin SDK: installed, the example built out of tree, run and compared"
