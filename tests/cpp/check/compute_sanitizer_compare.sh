#!/usr/bin/env bash
# Runs every planted case, with its bug and fixed, under each compute-sanitizer
# tool on a GPU, and prints a table of what each tool reported and where.
#   compute_sanitizer_compare.sh PLANTED_BINARY LOG_DIR
# PLANTED_BINARY: planted_main.cu built by nvcc with -lineinfo, e.g.
#   nvcc -std=c++20 -arch=sm_90 -lineinfo -I include tests/cpp/check/planted_main.cu -o .device-check/planted
set -u
binary=$1 logs=$2
mkdir -p "$logs"
cases=$("$binary" 2>&1 | awk 'NR > 2 {print $1}')
printf '%-30s %-6s %-10s %-6s %-6s %s\n' case run tool status errors lines
for c in $cases; do
  for variant in bug fixed; do
    for tool in memcheck racecheck synccheck initcheck; do
      log="$logs/$c.$variant.$tool.log"
      args=("$c"); [ "$variant" = fixed ] && args+=(fixed)
      timeout 60 compute-sanitizer --tool "$tool" --print-limit 20 "$binary" "${args[@]}" >"$log" 2>&1
      status=$?
      errors=$(grep -o 'ERROR SUMMARY: [0-9]*' "$log" | awk '{print $3}' | tail -1)
      # The source lines named in the reports, most frequent first.
      lines=$(grep -o 'planted_kernels.cuh:[0-9]*' "$log" | sort | uniq -c | sort -rn | awk '{printf "%s%s(x%s)", (NR>1?",":""), $2, $1}' | sed 's/planted_kernels.cuh://g')
      printf '%-30s %-6s %-10s %-6s %-6s %s\n' "$c" "$variant" "$tool" "$status" "${errors:-?}" "${lines:--}"
    done
  done
done
