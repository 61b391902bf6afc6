#!/usr/bin/env bash
# Usage: sqs-clients.sh botocore|awscli|go|go-toolchain
# Installs an SQS client of the conformance test (test/sqs-conformance.test.ts) and prints what the
# test runs: botocore's python or the AWS CLI's `aws` (project-local venvs, pip-venv.sh, reused while
# they hold the version), or the aws-sdk-go-v2 driver (test/support/sqs-go) built into .local/sqs-go/,
# rebuilt when its source or go.sum changes. `go-toolchain` prints the Go toolchain, or nothing and
# why on stderr where there is none: the test then skips that client, saying so.
set -euo pipefail
HERE="$(dirname "${BASH_SOURCE[0]}")"
ROOT="$(cd "$HERE/../.." && pwd)"

go_toolchain() {
  local go_bin
  go_bin="$(command -v go || true)"
  if [ -z "$go_bin" ] && [ -x /usr/local/go/bin/go ]; then go_bin=/usr/local/go/bin/go; fi
  [ -n "$go_bin" ] || echo "no Go toolchain (go on PATH or /usr/local/go/bin/go): the aws-sdk-go client is not run" >&2
  echo "$go_bin"
}

go_driver() {
  local src="$ROOT/test/support/sqs-go" out="$ROOT/.local/sqs-go" go_bin stamp
  go_bin="$(go_toolchain)"
  [ -n "$go_bin" ] || exit 1
  stamp="$(cat "$src/go.mod" "$src/go.sum" "$src"/*.go | sha256sum | cut -d' ' -f1)"
  mkdir -p "$out"
  (
    # One build at a time (two test runs at once); the second finds it done.
    flock 9
    if [ ! -x "$out/sqs-go" ] || [ "$(cat "$out/stamp" 2>/dev/null)" != "$stamp" ]; then
      echo "building the aws-sdk-go SQS driver (Go module proxy; a few minutes on 2 cores the first time)" >&2
      local started=$SECONDS
      (cd "$src" && CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" "$go_bin" build -trimpath -o "$out/sqs-go.new" .)
      mv "$out/sqs-go.new" "$out/sqs-go"
      echo "$stamp" > "$out/stamp"
      echo "time: aws-sdk-go SQS driver built in $((SECONDS - started)) s" >&2
    fi
  ) 9>"$out/build.lock"
  echo "$out/sqs-go"
}

case "${1:?botocore, awscli, go or go-toolchain}" in
  # The last botocore line that speaks the AWS query protocol to SQS (form-encoded in, XML out).
  botocore) echo "$(bash "$HERE/pip-venv.sh" botocore 1.29.165)/bin/python" ;;
  # The AWS CLI v1 (it carries its own botocore, on AWS JSON 1.0).
  awscli) echo "$(bash "$HERE/pip-venv.sh" awscli 1.46.2)/bin/aws" ;;
  go) go_driver ;;
  go-toolchain) go_toolchain ;;
  *) echo "unknown client $1" >&2; exit 2 ;;
esac
