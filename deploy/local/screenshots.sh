#!/usr/bin/env bash
# `npm run screenshots`: refreshes docs/screenshots/ from the browser tier. test/browser/portal.test.ts
# drives the portal in a real Chromium on the local stack (run-tests.sh starts what is missing) and
# writes its screenshots, secrets masked, into .local/browser; the main pages docs/portal.md shows are
# copied from there.
set -euo pipefail
cd "$(dirname "$0")/../.."
PAGES=(organisations-house-admin workspace-secret-shown workspace-activity consumer-messages producer-test-message simulation-progress message-trace audit)
rm -f .local/browser/*.png
bash deploy/local/run-tests.sh --selectProjects browser -- test/browser/portal.test.ts
mkdir -p docs/screenshots
for page in "${PAGES[@]}"; do cp ".local/browser/$page.png" "docs/screenshots/$page.png"; done
echo "docs/screenshots: ${#PAGES[@]} pages refreshed from the browser tier" >&2
