# The litm-pack HTTP API (and MCP at /mcp) as a container. Built and run by docker-compose.yml next to Qdrant:
#   docker compose up -d        → http://localhost:8787, reading the Qdrant collection "docs"
# Any other store: docker run -p 8787:8787 IMAGE serve --host 0.0.0.0 --store qdrant://HOST:6333/COLLECTION

FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs scripts/build-rank-tables.mjs ./scripts/
COPY src ./src
RUN npm run build

FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# Runtime dependencies only: the Qdrant store speaks Qdrant's REST API itself, so no optional peer is needed.
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
EXPOSE 8787
HEALTHCHECK --interval=10s --timeout=3s --retries=5 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8787/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8787", "--store", "qdrant://qdrant:6333/docs"]
