#!/bin/sh
# KAFKA_* environment → server.properties (as the official image does), format on first start, run.
set -eu
props=/opt/kafka/config/server.properties
: "${KAFKA_LOG_DIRS:=/var/lib/kafka/data}"
export KAFKA_LOG_DIRS
env | sed -n 's/^KAFKA_\([A-Z0-9_]*\)=\(.*\)$/\1=\2/p' | grep -v '^HEAP_OPTS=' | while IFS='=' read -r key value; do
  printf '%s=%s\n' "$(echo "$key" | tr 'A-Z_' 'a-z.')" "$value"
done > "$props"
classpath="/opt/kafka/libs/*"
log="-Dlog4j2.configurationFile=/opt/kafka/log4j2.properties"
if [ ! -f "$KAFKA_LOG_DIRS/meta.properties" ]; then
  : "${CLUSTER_ID:?CLUSTER_ID is required to format the log dir}"
  java -Xmx128m "$log" -cp "$classpath" kafka.tools.StorageTool format -t "$CLUSTER_ID" -c "$props" --ignore-formatted
fi
# shellcheck disable=SC2086
exec java ${KAFKA_HEAP_OPTS:--Xmx384m} "$log" -cp "$classpath" kafka.Kafka "$props"
