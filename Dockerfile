# The Partner Reporting API as a container (D-24): compiled JavaScript on the supported Node LTS (.nvmrc),
# production dependencies only, a non-root user, node itself as PID 1 so SIGTERM reaches the server.
# Every step runs the package scripts `.ci/run` rehearses (build, production install, start): see
# docs/operations.md § Deploy. Configuration is the environment of D-2 (docs/operations.md § Configuration).

FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The install's prepare script builds, which needs the sources: install without scripts, then build.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json ./
COPY scripts ./scripts
COPY server ./server
COPY routers ./routers
COPY db ./db
COPY docs ./docs
COPY sdk/README.md ./sdk/README.md
RUN npm run build

FROM node:24-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The image's own unprivileged user (uid 1000).
USER node
ENV PORT=3000 HOST=0.0.0.0
EXPOSE 3000
# Liveness only: /healthz answers while the process serves, whatever the database does, so a database
# blip does not restart every container. Balancers route on /readyz (compose.yaml).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
# What `npm start` runs (checked by test/deploy-recipe.test.ts), without npm in between.
CMD ["node", "dist/server/main.js"]
