# syntax=docker/dockerfile:1
#
# Focus in a container: built with exactly the commands `.ci/run` proves in
# scripts/packed-install-check.ts (which reads this file): `npm ci`, then `npm pack` (a clean
# build and the lockfile as npm-shrinkwrap.json), then `npm ci --omit=dev` inside the unpacked
# package, then `node dist/cli/focus.js serve`. No image registry is reachable from the
# machines this project is developed on, so the image itself has not been built there.
#
#   docker build -t focus .
#   docker run -p 8080:8080 -v focus-data:/var/lib/focus focus

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: all dependencies, compile, pack ---------------------------------------------
FROM ${NODE_IMAGE} AS build
# better-sqlite3 compiles itself where no prebuilt binary fits the platform.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
COPY scripts/build.js scripts/build.js
# Dependencies in their own layer; `prepare` builds nothing until the sources are there.
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json README.md LICENSE CHANGELOG.md .env.example ./
COPY src src
# The web app (built into dist/web by the same build; its client types are type-only imports).
COPY web web
COPY clients/typescript/schema.d.ts clients/typescript/schema.d.ts
RUN npm pack --pack-destination /pkg && tar -xzf /pkg/focus-*.tgz -C /pkg

# ---- install: the package with production dependencies only ------------------------------
FROM ${NODE_IMAGE} AS install
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /pkg/package/ ./
RUN npm ci --omit=dev --no-audit --no-fund

# ---- runtime ------------------------------------------------------------------------------
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATABASE_URL=sqlite:/var/lib/focus/focus.db
WORKDIR /app
COPY --from=install /app ./
# Focus creates the database file, never its directory.
RUN mkdir -p /var/lib/focus && chown node:node /var/lib/focus
USER node
VOLUME ["/var/lib/focus"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM drains in-flight requests (up to the drain deadline) and exits 0.
STOPSIGNAL SIGTERM
CMD ["node", "--max-semi-space-size=64", "dist/cli/focus.js", "serve"]
