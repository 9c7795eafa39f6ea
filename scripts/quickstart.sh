#!/usr/bin/env bash
# Quick start: installs what this machine lacks (Debian packages, npm packages)
# and runs Trident's main job: the portability report (report/index.html,
# report/REPORT.md) on the backends this machine offers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-system.sh
npm ci --no-audit --no-fund
npm run report
