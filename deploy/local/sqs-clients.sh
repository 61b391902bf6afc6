#!/usr/bin/env bash
# Usage: sqs-clients.sh botocore|awscli
# Installs an SQS client of the conformance test (test/sqs-conformance.test.ts) into its project-local
# venv (pip-venv.sh, reused while it holds the version) and prints what the test runs: botocore's
# python, or the AWS CLI's `aws`.
set -euo pipefail
HERE="$(dirname "${BASH_SOURCE[0]}")"
case "${1:?botocore or awscli}" in
  # The last botocore line that speaks the AWS query protocol to SQS (form-encoded in, XML out).
  botocore) echo "$(bash "$HERE/pip-venv.sh" botocore 1.29.165)/bin/python" ;;
  # The AWS CLI v1 (it carries its own botocore, on AWS JSON 1.0).
  awscli) echo "$(bash "$HERE/pip-venv.sh" awscli 1.46.2)/bin/aws" ;;
  *) echo "unknown client $1" >&2; exit 2 ;;
esac
