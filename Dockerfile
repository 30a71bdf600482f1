# syntax=docker/dockerfile:1
# The dragoman image: every command (api, watchdog, worker, scaler, serve) with Apertium and
# Debian's language pairs. Build: docker build -t dragoman:0.1.0 .

FROM python:3.11-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip wheel --wheel-dir /wheels .

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        apertium apertium-eng-spa apertium-fr-es apertium-eng-cat \
    && rm -rf /var/lib/apt/lists/*
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-index --find-links /wheels dragoman
# A numeric user, so that Kubernetes can enforce runAsNonRoot.
RUN groupadd --system --gid 10001 dragoman \
    && useradd --system --uid 10001 --gid 10001 --create-home --home-dir /var/lib/dragoman dragoman
USER 10001:10001
WORKDIR /var/lib/dragoman
EXPOSE 8080 9100
ENTRYPOINT ["dragoman"]
CMD ["--help"]
