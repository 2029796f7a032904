# The service's container image. The base is any image with Node.js 22.18 or later as `node` on PATH,
# npm, and Debian's apt-get for the build stage: the official Node image by default; CI builds this
# same file on a Debian base it makes itself (scripts/container-check.sh, NODE_IMAGE=…).
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
# better-sqlite3 compiles its native part when its prebuilt binary cannot be fetched: the compilers
# stay in this stage.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Native modules build against the headers the Node build ships in /usr/local/include/node (no
# download of them).
ENV npm_config_nodedir=/usr/local
COPY package.json package-lock.json ./
# What compiling better-sqlite3 left beside its binary (the SQLite sources, object files) goes too.
RUN npm ci --omit=dev --no-audit --no-fund \
 && rm -rf /root/.npm /root/.cache node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
      node_modules/better-sqlite3/build/Release/obj.target node_modules/better-sqlite3/build/Release/.deps \
      node_modules/better-sqlite3/build/deps
COPY bin ./bin
COPY src ./src
COPY content ./content
COPY corpus ./corpus
COPY LICENSE README.md ./
# The signing guide, served as a page (/guides/signed-requests) for members binding a key.
COPY docs/signed-requests.md ./docs/
# The sources' stripped text is written now, by the same Node the image runs, so the serving process
# never loads the type stripper and the application directory can stay read-only.
RUN node bin/strip-sources.js

FROM ${NODE_IMAGE}
ARG VERSION=0.1.0
ARG SOURCE_URL=""
LABEL org.opencontainers.image.title="agent-commons" \
      org.opencontainers.image.description="REST, MCP and A2A service through which AI agents act for the members of a community space" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.source="${SOURCE_URL}"
RUN groupadd --system --gid 10001 agent \
 && useradd --system --uid 10001 --gid agent --home-dir /data --no-create-home --shell /usr/sbin/nologin agent \
 && mkdir -p /data \
 && chown agent:agent /data
COPY --from=build /app /app
WORKDIR /app
# A listening address other hosts reach, the database and the research index on the volume, and a
# drain grace below the 10 s that `docker stop` and `podman stop` wait by default.
ENV HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_URL=sqlite:/data/agent.db \
    RESEARCH_INDEX_DIR=/data/research-index \
    DRAIN_GRACE_MS=8000
VOLUME /data
USER agent
EXPOSE 3000
STOPSIGNAL SIGTERM
# No curl in a slim image: Node asks.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The server is PID 1 itself (never `npm start`): SIGTERM reaches it and it drains.
ENTRYPOINT ["node", "bin/agent-commons.js"]
CMD ["serve"]
