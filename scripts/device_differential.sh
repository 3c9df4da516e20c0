#!/usr/bin/env bash
# The long differential campaign (tools/differential/campaign.py) on the device
# machine of bench/RESULTS.md: its cores run the generated kernels' shards
# side by side on every engine, and every GPU_EVERY-th shard is also built by
# nvcc and run on its GPU. The machine has no internet: libclang comes from
# PyPI's wheel put in .device/ beforehand (`pip download libclang==18.1.1
# --no-deps -d .device`, carried to the machine), the package is built there.
# SEED, COUNT, SHARD, GPU_EVERY and DEADLINE_S (no shard starts after it,
# counted from this script's start) are campaign.py's options; the shards'
# summaries and campaign.json go to LOG_DIR. The package stays built in
# build-device-site/ for the next call.
set -uo pipefail
cd "$(dirname "$0")/.."
logs=${LOG_DIR:-differential-logs}
mkdir -p "$logs"
# The image's default compiler links libstdc++ statically (cmake/shared_cxx_runtime.cmake refuses it).
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++
site=$PWD/build-device-site
if [ ! -d "$site/lockstep" ]; then
  python3 -m pip install -q --no-build-isolation --no-deps --target "$site" . >"$logs/pip.log" 2>&1 || { tail -30 "$logs/pip.log"; exit 1; }
  python3 -m pip install -q --no-deps --target "$site" .device/libclang-*.whl >>"$logs/pip.log" 2>&1 || { tail -30 "$logs/pip.log"; exit 1; }
fi
export PYTHONPATH=$site
python3 -c "import sys, lockstep._core as c; r = c.region_loops_unavailable_reason(); print(r or \"region loops: libclang loads\"); sys.exit(1 if r else 0)" || exit 1
python3 tools/differential/campaign.py --seed "${SEED:-1000000}" --count "${COUNT:-10000}" --shard "${SHARD:-80}" \
  --gpu-every "${GPU_EVERY:-4}" --deadline "$((${DEADLINE_S:-420} - SECONDS))" --nvcc "python3 -m lockstep nvcc" --gpu-nvcc nvcc --out "$logs/campaign" --work /tmp/differential-work
