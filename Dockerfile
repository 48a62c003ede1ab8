# AER-1 audit ledger: one image for the API (default command) and the
# verification workers (`npm run worker`).
#
# Only the sources are copied (no .dockerignore needed: a host node_modules,
# dist or data folder never enters the image).

FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --chown=node:node test/vectors/aer1-public ./test/vectors/aer1-public
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=5 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Not `npm start`: its prestart step compiles, and the runtime image has no compiler.
CMD ["node", "dist/src/main.js"]
