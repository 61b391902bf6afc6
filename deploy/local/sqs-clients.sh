#!/usr/bin/env bash
# Usage: sqs-clients.sh botocore|awscli|go|go-toolchain|java|java-toolchain
# Installs an SQS client of the conformance test (test/sqs-conformance.test.ts) and prints what the
# test runs: botocore's python or the AWS CLI's `aws` (project-local venvs, pip-venv.sh, reused while
# they hold the version), the aws-sdk-go-v2 driver (test/support/sqs-go) built into .local/sqs-go/,
# rebuilt when its source or go.sum changes, or the AWS SDK for Java v1 driver (test/support/sqs-java)
# built into .local/sqs-java/ (its jars by Maven through ~/.m2, its classes by javac, and a launcher
# script, the path printed), rebuilt when its source or pom.xml changes. `go-toolchain` and
# `java-toolchain` print the Go toolchain or the java that runs the driver (javac 17+ and mvn there
# too), or nothing and why on stderr where there is none: the test then skips that client, saying so.
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

java_toolchain() {
  local java_bin javac_bin major
  java_bin="$(command -v java || true)"
  javac_bin="$(command -v javac || true)"
  if [ -z "$java_bin" ] || [ -z "$javac_bin" ] || ! command -v mvn > /dev/null; then
    echo "no JDK and Maven (java, javac and mvn on PATH): the aws-sdk-java-v1 client is not run" >&2
    return
  fi
  # `javac 17.0.15`, `javac 21`: the driver compiles for release 17.
  major="$("$javac_bin" -version 2>&1 | sed -n 's/^javac \([0-9]*\).*/\1/p')"
  if [ -z "$major" ] || [ "$major" -lt 17 ]; then
    echo "javac ${major:-of unknown version} is older than 17, the driver's release: the aws-sdk-java-v1 client is not run" >&2
    return
  fi
  echo "$java_bin"
}

java_driver() {
  local src="$ROOT/test/support/sqs-java" out="$ROOT/.local/sqs-java" java_bin stamp
  java_bin="$(java_toolchain)"
  [ -n "$java_bin" ] || exit 1
  stamp="$( (echo "$java_bin" && cat "$src/pom.xml" && find "$src/src" -name '*.java' | sort | xargs cat) | sha256sum | cut -d' ' -f1)"
  mkdir -p "$out"
  (
    # One build at a time (two test runs at once); the second finds it done.
    flock 9
    if [ ! -x "$out/sqs-java" ] || [ "$(cat "$out/stamp" 2> /dev/null)" != "$stamp" ]; then
      echo "building the aws-sdk-java-v1 SQS driver (Maven Central into ~/.m2, then javac)" >&2
      local started=$SECONDS new="$out/new"
      rm -rf "$new"
      # mvn -q prints its errors (and stray colour codes) on stdout, which is the launcher's path: a log, shown on failure.
      mvn -q -B -f "$src/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$new/lib" > "$out/maven.log" 2>&1 ||
        { tail -n 30 "$out/maven.log" >&2; echo "Maven could not resolve the driver's jars (is Maven Central reachable?)" >&2; exit 1; }
      find "$src/src/main/java" -name '*.java' -print0 |
        xargs -0 javac --release 17 -Xlint:all -Werror -encoding UTF-8 -cp "$new/lib/*" -d "$new/classes" >&2
      # A short-lived JVM: a small heap, the JIT's quick tier, no deprecation notice; jars and classes beside it.
      {
        echo '#!/bin/sh'
        echo 'here="$(dirname "$0")"'
        printf 'exec %q -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Daws.java.v1.disableDeprecationAnnouncement=true' "$java_bin"
        echo ' -cp "$here/classes:$here/lib/*" bus.conformance.SqsJava'
      } > "$new/sqs-java"
      chmod +x "$new/sqs-java"
      rm -rf "$out/lib" "$out/classes" "$out/sqs-java"
      mv "$new/lib" "$new/classes" "$new/sqs-java" "$out/"
      rmdir "$new"
      echo "$stamp" > "$out/stamp"
      echo "time: aws-sdk-java-v1 SQS driver built in $((SECONDS - started)) s" >&2
    fi
  ) 9> "$out/build.lock"
  echo "$out/sqs-java"
}

case "${1:?botocore, awscli, go, go-toolchain, java or java-toolchain}" in
  # The last botocore line that speaks the AWS query protocol to SQS (form-encoded in, XML out).
  botocore) echo "$(bash "$HERE/pip-venv.sh" botocore 1.29.165)/bin/python" ;;
  # The AWS CLI v1 (it carries its own botocore, on AWS JSON 1.0).
  awscli) echo "$(bash "$HERE/pip-venv.sh" awscli 1.46.2)/bin/aws" ;;
  go) go_driver ;;
  go-toolchain) go_toolchain ;;
  java) java_driver ;;
  java-toolchain) java_toolchain ;;
  *) echo "unknown client $1" >&2; exit 2 ;;
esac
