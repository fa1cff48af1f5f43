# syntax=docker/dockerfile:1
#
# kafkasim's container image: one static binary on distroless/static (no shell,
# no libc, user nonroot 65532), for campaigns on machines that run containers:
# deploy/kubernetes/ and docs/scale.md. The bundled scenarios are compiled into
# the binary (scenarios/bundled.go embeds them), so `kafkasim run acks-all-safe`
# works in the image; the bundled sweeps are under /opt/kafkasim/sweeps.
#
#   docker build -t kafkasim --build-arg VERSION=$(git describe --tags --always) .
#   docker run --rm kafkasim run acks-all-safe
#   docker run --rm -v "$PWD/out:/work/out" kafkasim fuzz --runs 200 --out out/fuzz
#
# The builder runs on the build machine's own platform and cross-compiles
# (CGO_ENABLED=0 needs no C toolchain), so a multi-platform build
# (--platform linux/amd64,linux/arm64) needs no emulation.

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# VERSION stamps `kafkasim version` (main.version, cmd/kafkasim/version.go);
# empty, the module's build information is used ("devel" without it).
ARG VERSION=""
ARG TARGETOS TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=${VERSION}" -o /out/kafkasim ./cmd/kafkasim
# The final image's own folders: /work, the working folder, which the nonroot
# user must be able to write (`kafkasim run` and `fuzz` write under runs/ by
# default; mount a volume there to keep them), and the bundled sweeps.
RUN mkdir -p /out/root/work /out/root/opt/kafkasim/sweeps && cp sweeps/*.yaml /out/root/opt/kafkasim/sweeps/

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kafkasim /usr/local/bin/kafkasim
# Copied as the contents of /out/root, /work and /opt/kafkasim are created by
# this COPY and so owned as --chown says.
COPY --from=build --chown=65532:65532 /out/root/ /
WORKDIR /work
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kafkasim"]
