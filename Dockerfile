# syntax=docker/dockerfile:1
# Spades Online: the server and its web client in one image (docs/operations.md).
# Everything is installed by the scripts CI runs: the web client by scripts/build_web
# (npm ci, then vite), the Python packages by scripts/_setup from uv.lock.

# ---------------------------------------------------------------- the web client
FROM node:20-bookworm-slim AS web
WORKDIR /src/web
COPY web/package.json web/package-lock.json ./
# The dependencies in a layer of their own, rebuilt only when the lock changes.
RUN npm ci --no-audit --no-fund --loglevel=error
WORKDIR /src
COPY scripts/build_web scripts/
COPY web web
RUN bash scripts/build_web

# ---------------------------------------------------------------- the Python packages
FROM python:3.11-slim-bookworm AS python
ENV SPADES_VENV=/opt/spades/venv \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY scripts/_setup scripts/uv scripts/uv-requirements.txt scripts/
COPY pyproject.toml uv.lock README.md ./
# The locked dependencies alone, rebuilt only when the lock changes; then the server.
RUN SPADES_INSTALL=dependencies bash -c 'source scripts/_setup'
COPY app app
RUN SPADES_INSTALL=server bash -c 'source scripts/_setup'

# ---------------------------------------------------------------- the image
FROM python:3.11-slim-bookworm
RUN groupadd --system --gid 10001 spades \
    && useradd --system --uid 10001 --gid spades --home-dir /var/lib/spades --create-home spades
COPY --from=python /opt/spades/venv /opt/spades/venv
COPY --from=web /src/web/dist /opt/spades/web
COPY deploy/entrypoint /opt/spades/entrypoint
ENV PATH=/opt/spades/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    SPADES_HOST=0.0.0.0 \
    SPADES_PORT=8000 \
    SPADES_WEB_DIST=/opt/spades/web \
    SPADES_DATABASE_URL=sqlite+aiosqlite:////var/lib/spades/spades.db
USER 10001:10001
WORKDIR /var/lib/spades
VOLUME ["/var/lib/spades"]
EXPOSE 8000
# Liveness: the process answers and reaches its database and broker.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as u; u.urlopen('http://127.0.0.1:%s/healthz' % os.environ['SPADES_PORT'], timeout=2)"]
ENTRYPOINT ["/opt/spades/entrypoint"]
CMD ["serve"]
