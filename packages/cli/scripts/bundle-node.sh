#!/bin/bash
# Bundles the trident CLI into one file for a machine without node_modules (the H100 GPU
# machine): WebGPU through Dawn only ('trident' aliased to bench/h100/trident-webgpu-only.mjs,
# as the issue-3 run does; the cpu backend's worker pool cannot run from a bundle), no browser.
#
#   bash packages/cli/scripts/bundle-node.sh [OUTDIR]     # default .gpu (git-ignored, carried to the GPU machine)
#
# Then, on the GPU machine (after `source .gpu/start.sh` and the Vulkan ICD set-up of bench/h100/run.sh):
#   node .gpu/trident-cli.mjs bench --no-browser --backends webgpu --label h100 \
#     --sizes 2^24 --sizes 2^26 --sizes sort=2^22 --sizes nbody=16384 --out $OUT/h100-trident.json
# and copy the file to bench/results/: `trident report` merges it with the rest.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${1:-.gpu}
mkdir -p "$out/dist/linux-x64"
# Dawn's addon: the webgpu package loads dist/<platform>-<arch>/dawn.node beside the bundled module.
cp node_modules/webgpu/dist/linux-x64/dawn.node "$out/dist/linux-x64/dawn.node"
node_modules/.bin/esbuild packages/cli/src/bundle-entry.ts --bundle --platform=node --format=esm --target=node20 --log-level=warning --conditions=trident-source \
  "--banner:js=import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" \
  --alias:trident=./bench/h100/trident-webgpu-only.mjs --external:esbuild --external:playwright-core \
  --outfile="$out/trident-cli.mjs"
echo "bundled: $out/trident-cli.mjs"
