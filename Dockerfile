# modelgate: build with the dev toolchain, run with production dependencies only, as a non-root user.
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles its native addon when no prebuilt binary matches.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json .npmrc ./
COPY scripts/build.mjs scripts/build-stamp.mjs scripts/
# `prepare` finds no sources yet and skips the build (it runs below, once they are copied).
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY core core
COPY plugins plugins
COPY providers providers
COPY demo demo
COPY scripts scripts
COPY bench bench
COPY config config
COPY dashboard dashboard
# dist is a link to the build under .builds/: the image gets the build itself (the dashboard's files
# included). The compiler and the dashboard's bundler are dependencies (a production install builds
# from source) but a built image does not need them.
RUN npm run build && cp -rL dist /app/dist-image && npm prune --omit=dev \
    && rm -rf node_modules/typescript node_modules/vite node_modules/rolldown node_modules/@rolldown node_modules/lightningcss*

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    MODELGATE_HOST=0.0.0.0 \
    MODELGATE_PORT=3000 \
    MODELGATE_DATA_DIR=/data \
    MODELGATE_WORKERS=auto
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist-image dist
COPY scripts/launch.mjs scripts/build-stamp.mjs scripts/healthcheck.mjs scripts/health-url.mjs scripts/
COPY config config
COPY demo/catalog.json demo/catalog.json
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
# Probes /v1/health where MODELGATE_HOST and MODELGATE_PORT say the gateway listens.
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 CMD ["node", "scripts/healthcheck.mjs"]
# What `npm start` runs: the launcher checks that dist/ is a whole build, then runs it (no compiler here).
CMD ["node", "scripts/launch.mjs", "server"]
