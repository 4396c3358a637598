#!/usr/bin/env bash
# The main job on a built-in example: generate a channel mesh with result frames, inspect
# it, refine it, and summarise what was written and how fast. Output in demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ab=build/src/cli/anabranch
mkdir -p demo
echo "== generate: a 200,000-triangle channel with 5 result frames"
$ab generate -n 200000 --frames 5 -o demo/channel.slf
echo "== info"
$ab info demo/channel.slf
echo "== refine: every triangle into 4"
$ab refine demo/channel.slf --cli demo/channel.cli -o demo/channel-r1.slf
$ab info demo/channel-r1.slf | sed -n '1,4p'
echo "== done: files in demo/"
ls -l demo
