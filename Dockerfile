# The dragoman image: every command (api, watchdog, worker, scaler, serve) with Apertium and
# Debian's language pairs, on Debian bookworm's Python. deploy/image/build.sh (make image)
# builds the same image with no Docker daemon and no Docker Hub.
#   docker build -t dragoman:0.1.0 .
#   docker build --build-arg EXTRAS=[neural] -t dragoman:0.1.0-gpu .   # CTranslate2, PyTorch, CUDA

# A virtualenv in /opt/dragoman: a wheel of this tree and its dependencies, wheels only.
FROM debian:bookworm-slim AS build
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        python3 python3-venv \
    && rm -rf /var/lib/apt/lists/*
# EXTRAS=[neural]: CTranslate2's wheels load CUDA 12's cuBLAS (libcublas.so.12), and
# PyTorch's from PyPI bring CUDA 13's, so CUDA 12's comes too.
ARG EXTRAS=
ARG TORCH=torch==2.13.0
ARG CUBLAS=nvidia-cublas-cu12
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
COPY pyproject.toml README.md /src/
COPY src /src/src
RUN python3 -m venv /opt/dragoman \
    && /opt/dragoman/bin/pip wheel --no-deps --wheel-dir /wheels /src \
    && gpu="" && if [ -n "$EXTRAS" ]; then gpu="$TORCH $CUBLAS"; fi \
    && /opt/dragoman/bin/pip install --only-binary=:all: $gpu \
        "$(echo /wheels/dragoman-*.whl)$EXTRAS" \
    && /opt/dragoman/bin/pip uninstall --yes pip setuptools

# The same Debian release, so that the virtualenv's python3 is the one it was made with.
FROM debian:bookworm-slim
ARG APERTIUM_PACKAGES="apertium apertium-eng-spa apertium-fr-es apertium-eng-cat"
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        ca-certificates python3 $APERTIUM_PACKAGES \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/dragoman /opt/dragoman
# CUDA 12's cuBLAS, where the GPU build brought it, through the loader's cache.
RUN cublas=$(echo /opt/dragoman/lib/python3*/site-packages/nvidia/cublas/lib) \
    && if [ -d "$cublas" ]; then \
        echo "$cublas" > /etc/ld.so.conf.d/cublas-cu12.conf && ldconfig; fi
# A numeric user, so that Kubernetes can enforce runAsNonRoot. A volume mounted on the models
# folder starts as the image has it, owned by the user.
RUN groupadd --gid 10001 dragoman \
    && useradd --no-log-init --uid 10001 --gid 10001 --home-dir /var/lib/dragoman \
        --create-home --shell /usr/sbin/nologin dragoman \
    && install -d -o 10001 -g 10001 /var/lib/dragoman/models
ENV PATH=/opt/dragoman/bin:$PATH LANG=C.UTF-8 PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
ARG SOURCE_URL=
LABEL org.opencontainers.image.title=dragoman \
      org.opencontainers.image.description="Self-hosted batch machine translation" \
      org.opencontainers.image.version=0.1.0 \
      org.opencontainers.image.licenses=Apache-2.0 \
      org.opencontainers.image.source=$SOURCE_URL
USER 10001:10001
WORKDIR /var/lib/dragoman
EXPOSE 8080 9100
ENTRYPOINT ["dragoman"]
CMD ["--help"]
