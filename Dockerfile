# pgranger container image.
#
# Stage 1 builds with cgo (pg_query's C parser needs it) on Debian bookworm;
# stage 2 is distroless/base (glibc, CA certificates, tzdata, no shell)
# running as the unprivileged user "nonroot" (65532). The health check uses
# the binary itself: `pgranger healthcheck` asks the admin endpoint's /readyz.
#
#   docker build -t pgranger .
#   docker run -v $PWD/pgranger.toml:/etc/pgranger/pgranger.toml:ro -p 6432:6432 pgranger
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=1 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/pgranger ./cmd/proxy \
    && /out/pgranger version

FROM gcr.io/distroless/base-debian12:nonroot
COPY --from=build /out/pgranger /usr/local/bin/pgranger
COPY examples/pgranger.toml /etc/pgranger/pgranger.toml
COPY examples/policies /etc/pgranger/policies
USER nonroot:nonroot
# 6432: PostgreSQL clients; 9432: admin endpoint (/metrics, /healthz, /readyz).
EXPOSE 6432 9432
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/usr/local/bin/pgranger", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/pgranger"]
CMD ["serve", "--config", "/etc/pgranger/pgranger.toml"]
