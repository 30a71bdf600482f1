#!/usr/bin/env bash
# Builds the dragoman image with no Docker daemon and no Docker Hub: a Debian base made by
# mmdebstrap, assembled by buildah (vfs storage, chroot isolation), written as an OCI archive.
# It is the image the Dockerfile describes: Debian's python3 with a virtualenv in
# /opt/dragoman holding dragoman (a wheel of this working tree) and its core dependencies,
# Apertium and its language pairs, user 10001:10001, ENTRYPOINT ["dragoman"].
#
#   deploy/image/build.sh [--output FILE] [--gpu] [--pairs "eng-spa fr-es"] [--cache-dir DIR]
#
# --output: default build/dragoman-0.1.0.oci.tar. --pairs: Debian's Apertium packages, named
# without "apertium-" as `dragoman models debian-packages` names them (default the Makefile's
# PAIRS). --cache-dir: default build/cache, where the Debian base and pip's cache are kept.
#
# Needs mmdebstrap and buildah (`make image-tools`), a Debian mirror and PyPI. Progress goes to
# stderr; the last line on stdout is the archive's path. Load it with
#   podman load -i build/dragoman-0.1.0.oci.tar
#   skopeo copy oci-archive:build/dragoman-0.1.0.oci.tar docker://registry.example.com/dragoman:0.1.0
#
# --gpu adds the neural engines (CTranslate2, transformers, PyTorch with its CUDA libraries
# from PyPI; several GB) and tags the image 0.1.0-gpu. Its containers need the NVIDIA container
# toolkit on the host.
#
# Environment: PAIRS (as --pairs), DEBIAN_MIRROR (mmdebstrap's default: deb.debian.org with
# the security updates), TORCH (the PyTorch requirement of --gpu, as the Makefile's),
# SOURCE_URL (org.opencontainers.image.source), SOURCE_DATE_EPOCH (file and image times, for
# reproducible output), TMPDIR (where buildah's temporary storage goes).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$repo/pyproject.toml" | head -n 1)
suite=bookworm
pairs=${PAIRS:-eng-spa fr-es eng-cat}
cache_dir=$repo/build/cache
gpu=false
output=
work=

usage() {
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
}

buildah_() {
    buildah --root "$work/root" --runroot "$work/run" --storage-driver vfs "$@"
}

cleanup() {
    rm -f "$cache_dir"/rootfs-*.partial "$output.partial"
    if [[ -n $work ]]; then
        buildah_ rm --all >/dev/null 2>&1 || true
        if ((EUID == 0)); then
            rm -rf "$work"
        else
            buildah unshare rm -rf "$work"
        fi
    fi
}

# The base: Debian's essential packages, apt (so that an image built FROM this one can add
# packages), Python and Apertium, no recommends, no documentation but the copyright files.
# python3-venv makes the virtualenv; it is purged before the image is committed. The tarball
# is reused while its inputs are the same; remove build/cache for Debian's newer updates.
make_base() {
    local packages=(ca-certificates usr-is-merged python3 python3-venv apertium) pair
    for pair in $pairs; do
        packages+=("apertium-$pair")
    done
    local args=(
        --variant=apt --format=tar
        "--include=$(IFS=,; echo "${packages[*]}")"
        '--aptopt=APT::Install-Recommends "false"'
        '--dpkgopt=path-exclude=/usr/share/doc/*'
        '--dpkgopt=path-include=/usr/share/doc/*/copyright'
        '--dpkgopt=path-exclude=/usr/share/man/*'
        '--dpkgopt=path-exclude=/usr/share/info/*'
        '--dpkgopt=path-exclude=/usr/share/locale/*'
        '--dpkgopt=path-exclude=/usr/share/lintian/*'
    )
    local key
    key=$(printf '%s\n' "$suite" "${DEBIAN_MIRROR:-}" "${SOURCE_DATE_EPOCH:-}" "${args[@]}" \
        | sha256sum | cut -c1-16)
    rootfs=$cache_dir/rootfs-$suite-$key.tar
    if [[ ! -s $rootfs ]]; then
        echo "build.sh: making the $suite base with mmdebstrap"
        rm -f "$cache_dir/rootfs-$suite-"*.tar
        mmdebstrap "${args[@]}" "$suite" "$rootfs.partial" ${DEBIAN_MIRROR:+"$DEBIAN_MIRROR"}
        mv "$rootfs.partial" "$rootfs"
    fi
}

# The working tree's sources, as the Dockerfile's context takes them (.dockerignore), and
# pip's settings: it trusts the certificates this machine trusts (a proxy's own CA among
# them) while it builds, and uses this machine's package index if one is set; the image keeps
# Debian's certificates.
stage_sources() {
    mkdir -p "$work/src" "$work/build" "$cache_dir/pip"
    tar -C "$repo" --exclude=__pycache__ --exclude='*.egg-info' -cf - pyproject.toml README.md src \
        | tar -C "$work/src" -xf -
    pip_env=(--env PIP_DISABLE_PIP_VERSION_CHECK=1 --env PIP_ROOT_USER_ACTION=ignore)
    local ca_bundle=${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}} variable
    if [[ -f $ca_bundle ]]; then
        cp "$ca_bundle" "$work/build/ca.crt"
        pip_env+=(--env PIP_CERT=/build/ca.crt)
    fi
    for variable in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST; do
        if [[ -n ${!variable:-} ]]; then
            pip_env+=(--env "$variable=${!variable}")
        fi
    done
}

# As the Dockerfile: the virtualenv (pip's cache kept between builds, and wheels only, so
# no compiler is needed), the user, and nothing left that only the build needed. The script
# is expanded by the container's shell. With --gpu: CTranslate2's wheels load CUDA 12's
# cuBLAS (libcublas.so.12), and PyTorch's from PyPI bring CUDA 13's, so CUDA 12's comes too,
# found through the loader's cache.
install_dragoman() {
    # shellcheck disable=SC2016
    buildah_ run --isolation chroot \
        --volume "$work/src:/src" --volume "$work/build:/build" \
        --volume "$cache_dir/pip:/root/.cache/pip" "${pip_env[@]}" \
        --env "EXTRAS=$extras" --env "TORCH=${TORCH:-torch==2.13.0}" \
        --env CUBLAS=nvidia-cublas-cu12 \
        "$container" -- sh -euc '
            python3 -m venv /opt/dragoman
            pip=/opt/dragoman/bin/pip
            $pip wheel --quiet --no-deps --wheel-dir /build /src
            gpu=""
            if [ -n "$EXTRAS" ]; then gpu="$TORCH $CUBLAS"; fi
            $pip install --quiet --only-binary=:all: $gpu "$(echo /build/dragoman-*.whl)$EXTRAS"
            $pip uninstall --quiet --yes pip setuptools
            cublas=$(echo /opt/dragoman/lib/python3*/site-packages/nvidia/cublas/lib)
            if [ -d "$cublas" ]; then
                echo "$cublas" > /etc/ld.so.conf.d/cublas-cu12.conf
                ldconfig
            fi
            dpkg --purge python3-venv python3.11-venv python3-pip-whl python3-setuptools-whl \
                python3-distutils python3-lib2to3
            groupadd --gid 10001 dragoman
            useradd --no-log-init --uid 10001 --gid 10001 --home-dir /var/lib/dragoman \
                --create-home --shell /usr/sbin/nologin dragoman
            # A volume mounted on the models folder starts as the image has it: owned by the user.
            install -d -o 10001 -g 10001 /var/lib/dragoman/models
            rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/cache/debconf/*-old \
                /var/lib/dpkg/*-old /var/log/*.log /tmp/*
        '
    # The mount points the run left behind.
    buildah_ run --isolation chroot "$container" -- sh -euc 'rm -rf /src /build /root/.cache'
}

configure() {
    local labels=(
        --label org.opencontainers.image.title=dragoman
        --label "org.opencontainers.image.description=Self-hosted batch machine translation"
        --label "org.opencontainers.image.version=$version"
        --label org.opencontainers.image.licenses=Apache-2.0
    )
    local source_url=${SOURCE_URL:-$(sed -n 's/^Source = "\(.*\)"$/\1/p' "$repo/pyproject.toml")}
    if [[ -n $source_url ]]; then
        labels+=(--label "org.opencontainers.image.source=$source_url")
    fi
    buildah_ config \
        --env PATH=/opt/dragoman/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        --env LANG=C.UTF-8 --env PYTHONUNBUFFERED=1 --env PYTHONDONTWRITEBYTECODE=1 \
        --user 10001:10001 --workingdir /var/lib/dragoman --port 8080/tcp --port 9100/tcp \
        --entrypoint '["dragoman"]' --cmd '["--help"]' "${labels[@]}" "$container"
}

main() {
    while (($#)); do
        case $1 in
        -o | --output) output=$2; shift 2 ;;
        --gpu) gpu=true; shift ;;
        --pairs) pairs=$2; shift 2 ;;
        --cache-dir) cache_dir=$2; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
        esac
    done
    local tag=$version
    extras=
    if $gpu; then
        tag=$version-gpu
        extras="[neural]"
    fi
    output=${output:-$repo/build/dragoman-$tag.oci.tar}
    mkdir -p "$cache_dir" "$(dirname "$output")"
    output=$(cd "$(dirname "$output")" && pwd)/$(basename "$output")
    # Only the archive's path goes to stdout, last; everything else to stderr.
    exec 3>&1 1>&2
    trap cleanup EXIT

    make_base
    # buildah's storage lives and dies with this run: vfs copies every layer, and the
    # machine's own storage stays as it was.
    work=$(mktemp -d "${TMPDIR:-/var/tmp}/dragoman-image.XXXXXX")
    stage_sources
    echo "build.sh: assembling dragoman:$tag with buildah"
    container=$(buildah_ from --isolation chroot scratch)
    buildah_ add --quiet "$container" "$rootfs" /
    install_dragoman
    configure

    local created=()
    if [[ -n ${SOURCE_DATE_EPOCH:-} ]]; then
        created=(--timestamp "$SOURCE_DATE_EPOCH")
    fi
    buildah_ commit --quiet --format oci --disable-compression=false "${created[@]}" \
        "$container" "oci-archive:$output.partial:dragoman:$tag" >/dev/null
    mv "$output.partial" "$output"
    echo "build.sh: dragoman:$tag, $(du -h "$output" | cut -f1) compressed"
    echo "$output" >&3
}

# Everything runs from here, once bash has read the whole script.
main "$@"
