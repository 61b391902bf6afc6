# syntax=docker/dockerfile:1
# One image for every service of the message bus (docs/architecture.md#components). The process is chosen by the
# command: the entrypoint is `node`, the argument names a compiled entry point, e.g.
#   docker run IMAGE services/gateway/dist/main.js        (auth, gateway, pull-api, delivery,
#   docker run IMAGE services/all-in-one/dist/setup.js     catalogue, portal, all-in-one, setup)
# The Helm chart sets that argument per Deployment; without one the image runs the all-in-one process.
#
# Stages: build (all dependencies, `tsc -b`, then deploy/image/assemble-runtime.sh picks package.json +
# dist/ of each workspace and schemas/), prod-deps (production dependencies only over that layout),
# runtime (Node 24, non-root, no package manager, nothing written at run time so the root filesystem
# can be mounted read-only; /tmp is the only scratch path).
# No Docker engine exists on the project's build machines: deploy/helm/check.sh lints this file with
# hadolint, test/chart.test.ts checks it against the package layout and runs assemble-runtime.sh;
# docs/deploy.md says what that covers and what it cannot.

ARG NODE_VERSION=24.21.0
ARG NODE_IMAGE=node:${NODE_VERSION}-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
ENV npm_config_update_notifier=false
COPY . .
# `npm install --no-save`, not `npm ci`: see deploy/local/lib.sh (the lockfile lists only the
# platforms' optional binaries the registry carries); it still follows the lockfile's versions.
# No install scripts: the compiler needs none, and the `node` devDependency (the Node 24 pin for
# machines whose own Node is older) would download a second Node. tsc runs on the image's Node.
RUN npm install --no-save --ignore-scripts --no-audit --no-fund --loglevel=error \
 && node node_modules/typescript/bin/tsc -b services/*/ \
 && sh deploy/image/assemble-runtime.sh /src /runtime

FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
ENV npm_config_update_notifier=false
COPY --from=build /runtime/ ./
# Production dependencies only, no install scripts; workspace packages are linked from node_modules/@bus.
RUN npm install --omit=dev --no-save --ignore-scripts --no-audit --no-fund --loglevel=error \
 && npm cache clean --force \
 && rm -f .npmrc

FROM ${NODE_IMAGE} AS runtime
ARG VERSION=0.0.0-dev
LABEL org.opencontainers.image.title="message-bus" \
      org.opencontainers.image.description="SOM 1.0 message bus: auth, gateway, pull-api, delivery, catalogue, portal" \
      org.opencontainers.image.version="${VERSION}"
# No package manager at run time (npm, npx, corepack, and yarn where the base image has it): fewer
# files, fewer CVEs.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
           /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
           /opt/yarn-* /usr/local/bin/yarn /usr/local/bin/yarnpkg
ENV NODE_ENV=production \
    HOST=0.0.0.0
WORKDIR /app
COPY --from=prod-deps --chown=0:0 /app/ ./
# The `node` user of the official image (uid/gid 1000), by number so runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080 8081 8082 8083 8084 8090 8091 8092
ENTRYPOINT ["node", "--enable-source-maps"]
CMD ["services/all-in-one/dist/main.js"]
