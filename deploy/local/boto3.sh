#!/usr/bin/env bash
# Installs boto3 (PyPI) into a project-local venv for the SQS door's client check
# (test/sqs-clients.test.ts) and prints the path of the venv's python.
set -euo pipefail
# Pinned: botocore's signing (which headers it signs, what it adds after signing) is what the test checks.
BOTO3_VERSION="1.44.5"
echo "$(bash "$(dirname "${BASH_SOURCE[0]}")/pip-venv.sh" boto3 "$BOTO3_VERSION")/bin/python"
