#!/usr/bin/env bash
# The main job: builds the project (installing missing Debian packages) and runs the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh build
exec build/bin/ir-pipeline-demo "$@"
