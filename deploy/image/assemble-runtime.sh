#!/bin/sh
# Copies what the runtime image needs out of a built checkout, and nothing else: the root manifests,
# each workspace's package.json and compiled dist/ (never src/ or tests), and the schemas/ data
# package (plain CommonJS + JSON, no build step). Used by the Dockerfile's build stage; test/chart.test.ts
# runs it on a temporary copy of this checkout to prove the runtime layout without a Docker daemon.
#   assemble-runtime.sh <built checkout> <output directory>
set -eu
src="$1"
out="$2"
mkdir -p "$out"
cp "$src/package.json" "$src/package-lock.json" "$out/"
if [ -f "$src/.npmrc" ]; then cp "$src/.npmrc" "$out/"; fi
for dir in "$src"/libs/* "$src"/services/*; do
  [ -f "$dir/package.json" ] || continue
  rel="${dir#"$src"/}"
  mkdir -p "$out/$rel"
  cp "$dir/package.json" "$out/$rel/"
  if [ -d "$dir/dist" ]; then
    cp -R "$dir/dist" "$out/$rel/dist"
    # Tests compile too (declaration maps, test files): the image carries none of them.
    find "$out/$rel/dist" \( -name '*.test.js' -o -name '*.test.js.map' -o -name '*.test.d.ts' -o -name '*.test.d.ts.map' -o -name '*.tsbuildinfo' \) -delete
  fi
done
mkdir -p "$out/schemas"
(cd "$src/schemas" && tar cf - --exclude=node_modules .) | (cd "$out/schemas" && tar xf -)
