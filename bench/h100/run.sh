#!/bin/bash
# The real-GPU runs (WebGPU through Dawn/Vulkan on the H100 machine), in two steps.
#
#   bash bench/h100/run.sh pack        # here: bundles `trident bench` (.gpu/trident.mjs), the checks and the conformance
#                                      # specs, packs Node + Vulkan loader into .gpu/
#   bash bench/h100/run.sh suite [ARGS] # on the GPU machine (after `source .gpu/start.sh`): the CUB and CUDA N-body anchors
#                                      # (and bench/h100/cub-large.cu's 2^30 / 2^31 rows where that file is there), the
#                                      # conformance specs on webgpu, per-call latency beside TF.js webgpu
#                                      # (bench/h100/latency-check.ts), then `trident bench --suite h100` with all of
#                                      # them folded in -> $OUT/h100-suite.json (trident-bench/1). ARGS go to trident
#                                      # bench (e.g. --algorithms to run part of it)
#   bash bench/h100/run.sh quick [ARGS] # on the GPU machine: the CUB anchor and `trident bench --suite h100-quick` (each
#                                      # case at 2^28 alone: a regression check of the suite's figures after a change)
#                                      # -> $OUT/h100-quick.json; with --max-log2n 31 --algorithms A,B,… also 2^29..2^31
#                                      # and bench/h100/cub-large.cu's CUB rows (a few cases a call: each 2^31 row
#                                      # costs the host ~30 s of data, upload and checks)
#   node .gpu/trident-cpu.mjs bench --worker-sweep 1,2,4,8,16 --sizes 2^24,2^26 --algorithms reduce:sum,scan:inclusive,zcopy:copy --label h100 --out $OUT/h100-workers.json
#                                      # on the GPU machine: the cpu backend in Node at each worker count, beside the copy ceiling
#   bash bench/h100/run.sh probe       # on the GPU machine: the sort probe and the latency check alone
#   bash bench/h100/run.sh graph       # on the GPU machine: the BFS formulations' check alone (bench/h100/graph-check.ts)
#   bash bench/h100/run.sh dev         # on the GPU machine: the CUB anchor, then radix sort's sweep (bench/h100/onesweep-check.ts)
#                                      # and the scan sweep (bench/h100/scan-check.ts)
#   bash bench/h100/run.sh scan [--raw] # on the GPU machine: the CUB anchor, then the scan sweep (arguments go to scan-check)
#   bash bench/h100/run.sh ab          # on the GPU machine: A/B of Trident's IR kernels against hand-written WGSL (bench/webgpu-h100-ab.ts)
#   node .gpu/bounds-check.mjs         # on the GPU machine, after pack: what bounds checks cost a radix scatter pass
#
# The browser bench (hardware WebGL2 and WebGPU in headless Chromium on the H100, peers in the same page):
#   bash bench/h100/run.sh pack-browser   # here: builds .browser/ (page bundle + conformance page + run.mjs +
#                                         # playwright-core + Node) from a clean export of HEAD (commit first)
#   bash bench/h100/run.sh browser [ARGS] # on the GPU machine, after `source /tmp/trident-chromium/env.sh`
#                                         # (the carried Chromium: ../shared/device/chromium-pack.sh): the CUB anchor,
#                                         # then .browser/run.mjs ARGS -> $OUT/h100-browser.json (bench/results/README.md)
#
# With the device tool: run(kind='nvidia-h100-x1', carry=['.gpu'],
#   command='source .gpu/start.sh && bash bench/h100/run.sh suite')   -> $OUT/h100-suite.json, $OUT/smi.csv, $OUT/logs.tgz
#
# The same bundle runs here on SwiftShader at toy sizes (a check of the whole path before a device call):
#   TRIDENT_BACKENDS=webgpu node .gpu/trident.mjs bench --suite h100 --max-log2n 12 --backends webgpu --out /tmp/suite.json
set -uo pipefail
cd "$(dirname "$0")/../.."
usage='usage: run.sh pack|suite|quick|probe|graph|dev|scan|ab|pack-browser|browser'
step=${1:?$usage}
# An unknown step must not fall through to the suite (six minutes of device time).
case $step in pack | suite | quick | probe | graph | dev | scan | ab | pack-browser | browser) ;; *) echo "$usage (got '$step')" >&2; exit 2 ;; esac

if [[ $step == pack ]]; then
  set -e
  exclude=$(git rev-parse --git-path info/exclude)
  mkdir -p "$(dirname "$exclude")"
  grep -qx '/.gpu/' "$exclude" 2>/dev/null || echo '/.gpu/' >> "$exclude"
  mkdir -p .gpu/dist/linux-x64
  # Dawn's addon: the webgpu package loads dist/<platform>-<arch>/dawn.node beside the (bundled) module.
  cp node_modules/webgpu/dist/linux-x64/dawn.node .gpu/dist/linux-x64/dawn.node
  esb=(node_modules/.bin/esbuild --bundle --platform=node --format=esm --target=node20 --log-level=warning --conditions=trident-source
    "--banner:js=import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);")
  # `trident bench` alone (bench/h100/trident-cli.ts): its browser runs and Node peers load these on demand, never in a suite.
  "${esb[@]}" bench/h100/trident-cli.ts --outfile=.gpu/trident.mjs --alias:trident=./bench/h100/trident-webgpu-only.mjs \
    --external:playwright-core --external:esbuild --external:gpu.js '--external:@tensorflow/*'
  # The cpu backend alone (`node .gpu/trident-cpu.mjs bench --worker-sweep …` on the GPU machine's cores), its worker
  # scripts beside the bundle.
  "${esb[@]}" bench/h100/trident-cli.ts --outfile=.gpu/trident-cpu.mjs --alias:trident=./bench/h100/trident-cpu-only.mjs \
    --external:playwright-core --external:esbuild --external:gpu.js '--external:@tensorflow/*'
  cp packages/backend-cpu/src/{node-worker,worker-loop,protocol,wasm-kernel}.mjs .gpu/
  rm -f .gpu/alg-check.mjs # the suite's former script, retired
  # The commit the bundles were built from (and whether the packages differed from it), for the results file's versions.
  echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- packages bench/h100 || echo ' with uncommitted changes')" > .gpu/commit.txt
  "${esb[@]}" bench/webgpu-h100-ab.ts --outfile=.gpu/webgpu-h100-ab.mjs
  # Per-call latency beside TF.js webgpu (same process, same Dawn instance), and the sort probe.
  for check in latency-check sort-probe graph-check onesweep-check scan-check read-probe bounds-check reduce-check segments-check compact-check segment-probe split-probe binding-check flat-probe big-sort-probe; do
    # The latency check runs TF.js webgpu beside Trident; the others load no peer (the bench cases import TF.js on demand).
    peers=(--external:playwright-core --external:esbuild --external:gpu.js '--external:@tensorflow/*')
    [[ $check == latency-check ]] && peers=()
    "${esb[@]}" bench/h100/$check.ts --outfile=.gpu/$check.mjs --alias:trident=./bench/h100/trident-webgpu-only.mjs "${peers[@]}"
  done
  # The conformance specs that run on any backend (not Node- or browser-only, not WebGL's).
  entry=.gpu/conformance-entry.mjs
  {
    for f in test/*.test.ts; do
      case $f in *.node.test.ts | *.browser.test.ts | test/webgl-* | test/glsl-*) continue ;; esac
      echo "import '../$f';"
    done
    echo "import { run } from '../bench/h100/vitest-shim.mjs';"
    echo "const s = await run(); console.log(\`conformance: \${s.passed} passed, \${s.failed} failed\`);"
    echo "if (process.env.OUT) (await import('node:fs')).writeFileSync(process.env.OUT + '/conformance.json', JSON.stringify(s, null, 2));"
    echo "process.exit(s.failed ? 1 : 0);"
  } > $entry
  "${esb[@]}" $entry --outfile=.gpu/conformance.mjs \
    --alias:vitest=./bench/h100/vitest-shim.mjs --alias:trident=./bench/h100/trident-webgpu-only.mjs
  bash ../shared/device/pack.sh .gpu
  # The CUB anchor for arrays past one storage binding (2^30, 2^31), where there is one: `suite` runs it beside the shared anchors.
  rm -f .gpu/cub-large.cu
  [[ -f bench/h100/cub-large.cu ]] && cp bench/h100/cub-large.cu .gpu/
  # NVIDIA's Vulkan ICD (libGLX_nvidia) needs the libglvnd stack, which the GPU machine lacks:
  # without it the loader says "Could not get 'vkCreateInstance' ... for ICD libGLX_nvidia.so.0".
  # start.sh unpacks every .deb in .gpu/debs.
  if ! ls .gpu/debs/libglvnd0_*.deb > /dev/null 2>&1; then
    lists=$(mktemp -d)
    mkdir -p "$lists/partial"
    o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 "-oDir::State::Lists=$lists")
    apt-get "${o[@]}" update -qq > /dev/null 2>&1
    (cd .gpu/debs && apt-get "${o[@]}" download libglvnd0 libegl1 libgl1 libglx0 libgles2 libopengl0 > /dev/null 2>&1)
  fi
  exit 0
fi

if [[ $step == pack-browser ]]; then
  # Built from a clean export of HEAD (other work in this checkout may be mid-edit): commit what should run first.
  set -e
  exclude=$(git rev-parse --git-path info/exclude)
  mkdir -p "$(dirname "$exclude")"
  grep -qx '/.browser/' "$exclude" 2>/dev/null || echo '/.browser/' >> "$exclude"
  here=$PWD
  snap=$(mktemp -d)
  trap 'rm -rf "$snap"' EXIT
  ref=${TRIDENT_REF:-HEAD} # TRIDENT_REF=<commit>: the bundle of an earlier commit (to add rows to that commit's file)
  git archive "$ref" | tar -x -C "$snap"
  mkdir "$snap/node_modules"
  for e in node_modules/* node_modules/.bin; do
    case $(basename "$e") in
      trident | @trident) cp -a "$e" "$snap/node_modules/" ;; # relative links: the export's own packages
      *) ln -s "$here/$e" "$snap/node_modules/$(basename "$e")" ;;
    esac
  done
  mkdir -p .browser
  (cd "$snap" && node_modules/.bin/tsx bench/h100/browser-build.ts "$here/.browser")
  git rev-parse --short "$ref" > .browser/commit.txt
  bash ../shared/device/pack.sh .browser
  du -sh .browser
  exit 0
fi
if [[ $step == browser ]]; then
  export OUT=${OUT:-/tmp/trident-out}
  mkdir -p "$OUT"
  [[ -n ${TRIDENT_CHROMIUM:-} ]] || { echo 'no TRIDENT_CHROMIUM: source /tmp/trident-chromium/env.sh first' >&2; exit 2; }
  source .browser/start.sh
  gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
  echo "GPU: $gpu; commit $(cat .browser/commit.txt)"
  # The CUB anchor in the same call (its 2^24 and 2^26 rows sit beside the browser's); only same-call ratios compare.
  cub=()
  if [[ ${CUB:-1} != 1 ]]; then
    echo "CUB anchor skipped (CUB=0)"
  elif nvcc -O3 -arch=sm_90 -o /tmp/cub_anchor .browser/cub_anchor.cu > "$OUT/nvcc-cub.log" 2>&1 && /tmp/cub_anchor > "$OUT/cub.txt" 2>&1; then
    cat "$OUT/cub.txt"; cub=(--cub "$OUT/cub.txt")
  else
    echo "CUB anchor failed:"; tail -5 "$OUT/nvcc-cub.log" "$OUT/cub.txt" 2>/dev/null
  fi
  node .browser/run.mjs --out "$OUT/h100-browser.json" --gpu "$gpu" --commit "$(cat .browser/commit.txt)" "${cub[@]}" "${@:2}" 2>&1 | tee "$OUT/browser.log"
  exit "${PIPESTATUS[0]}"
fi

# ---- on the GPU machine ----
export OUT=${OUT:-/tmp/trident-out}
mkdir -p "$OUT"
export TRIDENT_BACKENDS=webgpu
[[ -f .gpu/commit.txt ]] && export TRIDENT_COMMIT="$(cat .gpu/commit.txt)"
# Find a Vulkan setup under which Dawn gets the GPU: the ICD named explicitly (with the carried
# libglvnd stack, see pack), or the loader's own search. The first that gives an adapter wins.
probe() { timeout 60 node bench/h100/probe.mjs "$PWD/.gpu/dist/linux-x64/dawn.node"; }
found=
for icd in "" /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json $(find /usr /etc -name 'nvidia_icd*.json' 2>/dev/null); do
  if [[ -n $icd ]]; then
    export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
    [[ -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ]] && export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  fi
  echo "trying Vulkan ICD: ${icd:-loader default}"
  if probe; then found=1; break; fi
done
if [[ -z $found ]]; then
  echo "no Vulkan adapter for Dawn; diagnostics:"
  ls /dev/nvidia* 2>&1 | head; env | grep -i -E 'nvidia|vk_' ; ldconfig -p | grep -i -E 'nvidia|GLdispatch|vulkan' | head -30
  for j in $(find /usr /etc -name 'nvidia_icd*.json' 2>/dev/null); do echo "$j:"; cat "$j"; done
  lib=$(ldconfig -p | awk '/libGLX_nvidia.so.0/ {print $NF; exit}'); [[ -n $lib ]] && ldd "$lib" | grep -i 'not found'
  VK_LOADER_DEBUG=error,warn,driver probe 2>&1 | tail -40
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
if [[ $step == graph ]]; then
  # The BFS check alone: R-MAT 2^22, edge factor 16 -> $OUT/graph-check.json.
  timeout 500 node .gpu/graph-check.mjs 2>&1 | tee "$OUT/graph-check.log" | grep -v '^{'
  exit "${PIPESTATUS[0]}"
fi
if [[ $step == probe ]]; then
  # Diagnosis runs: the sort probe, then per-call latency beside TF.js webgpu
  # (.gpu/latency-base.mjs, when present, is the same check bundled from the code before a change).
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,clocks_throttle_reasons.active \
    --format=csv,noheader -lms 250 > "$OUT/smi.csv" 2> /dev/null &
  smi=$!
  node .gpu/sort-probe.mjs 28 24 2>&1 | tee "$OUT/sort-probe.log"
  [[ -f .gpu/latency-base.mjs ]] && node .gpu/latency-base.mjs --out "$OUT/latency-base.json" 2>&1 | tee "$OUT/latency-base.log"
  node .gpu/latency-check.mjs --out "$OUT/latency.json" 2>&1 | tee "$OUT/latency.log"
  kill $smi 2> /dev/null
  exit 0
fi
if [[ $step == dev ]]; then
  # Radix sort's and scan's sweeps, with the CUB anchor in the same call.
  nvcc -O3 -arch=sm_90 -o /tmp/cub_anchor .gpu/cub_anchor.cu && /tmp/cub_anchor 2>&1 | tee "$OUT/cub.txt"
  node .gpu/onesweep-check.mjs "${@:2}" 2>&1 | tee "$OUT/onesweep-check.log"; sorts=${PIPESTATUS[0]}
  # The scan sweep (bench/h100/scan-check.ts) in the same call, beside the same CUB figures.
  node .gpu/scan-check.mjs --raw 2>&1 | tee "$OUT/scan-check.log"; scans=${PIPESTATUS[0]}
  exit $(( sorts || scans ))
fi
if [[ $step == scan ]]; then
  # The scan sweep alone, with the CUB anchor in the same call.
  nvcc -O3 -arch=sm_90 -o /tmp/cub_anchor .gpu/cub_anchor.cu && /tmp/cub_anchor 2>&1 | tee "$OUT/cub.txt"
  # Arguments after the step go to scan-check (--raw: the generated kernel's WGSL on the raw device).
  node .gpu/scan-check.mjs "${@:2}" 2>&1 | tee "$OUT/scan-check.log"
  exit "${PIPESTATUS[0]}"
fi
# Seconds of the call left for `trident bench` (the device tool stops a command at 600 s): it runs no step
# past --deadline-s, writes its file with the rest as rows saying so, and the logs still get packed.
deadline() { local left=$(( ${CALL_BUDGET_S:-550} - SECONDS )); echo $(( left > 30 ? left : 30 )); }
if [[ $step == quick ]]; then
  # The suite's cases at 2^28 beside CUB alone (no conformance, latency or N-body anchor): a check that a
  # change kept the suite's figures, in about three minutes of device time. With --max-log2n past 28 (the
  # large sizes, a few cases a call: --algorithms) the large-array CUB anchor runs too, for CUB at 2^30 / 2^31.
  cub=(--cub "$OUT/cub.txt")
  nvcc -O3 -arch=sm_90 -o /tmp/cub_anchor .gpu/cub_anchor.cu > "$OUT/nvcc-cub.log" 2>&1 && /tmp/cub_anchor 2>&1 | tee "$OUT/cub.txt"
  args=" ${*:2} "
  if [[ -f .gpu/cub-large.cu && $args =~ --max-log2n[=\ ]+(29|3[0-9]) ]]; then
    nvcc -O3 -arch=sm_90 -o /tmp/cub-large_anchor .gpu/cub-large.cu > "$OUT/nvcc-cub-large.log" 2>&1 &&
      /tmp/cub-large_anchor 2>&1 | tee "$OUT/cub-large.txt"
    cub+=(--cub "$OUT/cub-large.txt")
  fi
  node .gpu/trident.mjs bench --suite h100-quick --label h100 --backends webgpu "${cub[@]}" \
    --deadline-s "$(deadline)" --out "$OUT/h100-quick.json" "${@:2}" 2>&1 | tee "$OUT/suite.log"
  exit "${PIPESTATUS[0]}"
fi
if [[ $step == ab ]]; then
  # A/B diagnosis of the WebGPU bandwidth gap (bench/webgpu-h100-ab.ts), with the CUB anchor beside it.
  nvcc -O3 -arch=sm_90 -o /tmp/cub_anchor .gpu/cub_anchor.cu && /tmp/cub_anchor 2>&1 | grep 'n=2^28' | tee "$OUT/cub.txt"
  node .gpu/webgpu-h100-ab.mjs --out "$OUT/h100-webgpu-ab.json" "${@:2}" 2>&1 | tee "$OUT/ab.log"
  exit "${PIPESTATUS[0]}"
fi
# suite: the anchors in the same call as the Trident rows, because only same-run ratios are comparable. They
# compile in the background while the conformance specs run (correctness only: their timing does not matter),
# then run one after the other with nothing else on the GPU.
declare -A source=([cub]=.gpu/cub_anchor.cu [nbody]=.gpu/nbody_anchor.cu [cub-large]=.gpu/cub-large.cu) build
anchors=(cub nbody)
[[ -f ${source[cub-large]} ]] && anchors+=(cub-large)
for anchor in "${anchors[@]}"; do
  nvcc -O3 -arch=sm_90 -o "/tmp/${anchor}_anchor" "${source[$anchor]}" > "$OUT/nvcc-$anchor.log" 2>&1 &
  build[$anchor]=$!
done
node .gpu/conformance.mjs 2>&1 | tee "$OUT/conformance.log" | grep -v '^  ok ' ; conf=${PIPESTATUS[0]}
anchor_args=()
for anchor in "${anchors[@]}"; do
  if wait "${build[$anchor]}"; then
    "/tmp/${anchor}_anchor" 2>&1 | tee "$OUT/$anchor.txt"
  else
    echo "nvcc failed for $anchor:"; tail -20 "$OUT/nvcc-$anchor.log"
  fi
  # A missing anchor output is a note in the results file, not a failure of the call.
  if [[ $anchor == nbody ]]; then anchor_args+=(--nbody "$OUT/$anchor.txt"); else anchor_args+=(--cub "$OUT/$anchor.txt"); fi
done
# The SM / memory clocks while the suite runs (the sustained protocol of bench/sustained.ts depends on them).
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,clocks_throttle_reasons.active \
  --format=csv,noheader -lms 250 > "$OUT/smi.csv" 2> /dev/null &
smi=$!
# Per-call latency of reduce / scan / sort beside TF.js webgpu (the peer rows), same process.
node .gpu/latency-check.mjs --out "$OUT/latency.json" 2>&1 | tee "$OUT/latency.log" | grep -v '"gpu_ms"'
node .gpu/trident.mjs bench --suite h100 --label h100 --backends webgpu "${anchor_args[@]}" \
  --conformance "$OUT/conformance.json" --latency "$OUT/latency.json" --deadline-s "$(deadline)" \
  --out "$OUT/h100-suite.json" "${@:2}" 2>&1 | tee "$OUT/suite.log"; check=${PIPESTATUS[0]}
kill $smi 2> /dev/null
# At most 8 files come back from the device tool: the results file, the clocks, and the rest in one archive.
(cd "$OUT" && logs=$(find . -maxdepth 1 -type f ! -name h100-suite.json ! -name smi.csv) && tar czf /tmp/logs.tgz $logs && rm -f $logs && mv /tmp/logs.tgz .)
echo "conformance exit $conf, suite exit $check"
exit $(( conf || check ))
